/** The values the client's operations take and return. */
import { inspect } from "node:util";
import { invalid } from "./errors.js";
import { MAX_TOKEN_BYTES, idBytes, quote } from "./validate.js";

/** A payload: bytes, or a string stored as its UTF-8 bytes. */
export type Payload = string | Uint8Array;

/** An id and its payload, for addMany. */
export interface Item {
  id: string;
  data: Payload;
}

const tokens = new WeakMap<Lease, string>();

/**
 * A leased item. Its token proves ownership and is a secret (RWQ-SEC-003): it is kept out of
 * `util.inspect`, `toString` and `JSON.stringify`; read it with {@link Lease.token} only to hand
 * it to another process, which rebuilds the lease with `new Lease(...)`.
 */
export class Lease {
  /** The item's id. */
  readonly id: string;
  /** The item's payload. */
  readonly data: Buffer;
  /** 1 for an item's first lease under a retry policy, 2 for the next...; 0 without a policy. */
  readonly attempt: number;

  constructor(id: string, data: Payload, token: string, attempt = 0) {
    if (typeof token !== "string" || token.length < 1 || Buffer.byteLength(token) > MAX_TOKEN_BYTES) {
      throw invalid(`token must be 1..${MAX_TOKEN_BYTES} bytes`);
    }
    this.id = id;
    this.data = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
    this.attempt = attempt;
    tokens.set(this, token);
  }

  /** The lease token (a secret: never log it). */
  get token(): string {
    return tokens.get(this) ?? "";
  }

  toString(): string {
    return `Lease{id: ${quote(this.id)}, data: ${this.data.length} bytes, attempt: ${this.attempt}}`;
  }

  toJSON(): { id: string; attempt: number } {
    return { id: this.id, attempt: this.attempt };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** A lease's id bytes and token, checked (a lease built by hand may be bad input). */
export function leaseParts(lease: unknown): [Buffer, string] {
  if (!(lease instanceof Lease)) throw invalid("lease must be a Lease");
  const token = lease.token;
  if (token.length < 1 || Buffer.byteLength(token) > MAX_TOKEN_BYTES) {
    throw invalid(`token must be 1..${MAX_TOKEN_BYTES} bytes`);
  }
  return [idBytes(lease.id), token];
}

/** The per-item result of completes and releases. */
export type Outcome = "done" | "gone" | "lease_lost";

export function outcome(code: unknown): Outcome {
  return code === 1 ? "done" : code === 0 ? "gone" : "lease_lost";
}

/** The ready, in-flight, delayed and dead counts, read at one instant. */
export interface Counts {
  queued: number;
  processing: number;
  delayed: number;
  dead: number;
}

/** What a clean did. */
export interface CleanReport {
  /** Ids put back at the head of the queue. */
  requeued: string[];
  /** Ghost entries removed. */
  dropped: number;
  /** Ids dead-lettered (light clean, profile retry). */
  dead: string[];
  /** Due delayed items moved to the queue (light clean, profile delay). */
  promoted: number;
}

/** A queue's retry policy (profile retry, SPEC §15). 0 for maxAttempts, capMs, deadMaxCount and
 * deadMaxAgeMs means "no limit". */
export interface RetryPolicy {
  maxAttempts: number;
  backoff: "fixed" | "exponential";
  baseMs: number;
  capMs: number;
  jitterPct: number;
  deadMaxCount: number;
  deadMaxAgeMs: number;
}

/** The reference client's default policy. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 5,
  backoff: "exponential",
  baseMs: 1000,
  capMs: 300_000,
  jitterPct: 0,
  deadMaxCount: 10_000,
  deadMaxAgeMs: 7 * 24 * 3600 * 1000,
});

/** What fail did: retried (ready now when delayMs is 0), dead-lettered, or the item was gone. */
export interface FailResult {
  outcome: "retry" | "dead" | "gone";
  delayMs: number;
}

/** Options of fail; none given is a failure under the queue's policy. */
export interface FailOptions {
  /** Kept with a dead item (at most 1024 bytes). */
  reason?: string;
  /** A failure no retry can fix: dead-letter now (RWQ-RETRY-016). */
  dead?: boolean;
  /** Retry after exactly this many ms rather than the policy's backoff (RWQ-RETRY-017). */
  delayMs?: number;
  /** The delay when the queue has no retry policy; 0: at once (RWQ-RETRY-019). */
  fallbackDelayMs?: number;
  /** Kept with a dead item apart from its reason, at most 8192 bytes (RWQ-RETRY-018). */
  detail?: string;
}

/** A dead-lettered item; `data` only from deadItem. */
export interface DeadItem {
  id: string;
  deadAtMs: number;
  reason: string;
  attempts: number;
  detail: string;
  data?: Buffer;
}

/** Options of release: delayMs (profile delay), refundAttempt (profile retry, RWQ-RETRY-020). */
export interface ReleaseOptions {
  delayMs?: number;
  refundAttempt?: boolean;
}
