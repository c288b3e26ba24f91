/** Profile workers (SPEC §21): live workers register with a heartbeat, leave when they stop, and
 * are listed while their deadline is after the server's now. Checks here throw before any I/O. */
import { randomBytes } from "node:crypto";
import { invalid } from "./errors.js";
import { checkBatch, checkInt } from "./validate.js";

export const MIN_WORKER_TTL_MS = 1000;
export const MAX_WORKER_TTL_MS = 3_600_000;
export const MAX_WORKER_RECORD_BYTES = 4096;
export const DEFAULT_HEARTBEAT_MS = 5000;
export const DEFAULT_HEARTBEAT_TTL_MS = 30_000;
export const MAX_RECORD_ITEMS = 10;
const MAX_OFFSET = 1_000_000;
const ID = /^[A-Za-z0-9_.:-]{1,64}$/;

/** What a beat did: the server's time, and the expired entries it removed. */
export interface Beat {
  nowMs: number;
  removed: number;
}

/** A registered worker whose deadline is after the server's now. */
export interface LiveWorker {
  id: string;
  record: Record<string, unknown>;
  deadlineMs: number;
}

/** A worker id: 16 lower-case hex digits from a secure random source. */
export function newWorkerId(): string {
  return randomBytes(8).toString("hex");
}

export function checkWorkerId(id: unknown): string {
  if (typeof id !== "string" || !ID.test(id)) {
    throw invalid("worker id must be 1..64 characters of A-Z a-z 0-9 _ . : - (RWQ-LIVE-002)");
  }
  return id;
}

/** A record as compact JSON: a plain object of at most 4096 bytes once encoded. */
export function recordJSON(record: unknown): Buffer {
  if (record === null || typeof record !== "object" || Array.isArray(record)) {
    throw invalid("record must be a JSON object");
  }
  let text: string;
  try {
    text = JSON.stringify(record);
  } catch (err) {
    throw invalid(`record must be JSON: ${String(err)}`);
  }
  const raw = Buffer.from(text, "utf8");
  if (raw.length > MAX_WORKER_RECORD_BYTES) {
    throw invalid(`record must be at most ${MAX_WORKER_RECORD_BYTES} bytes of JSON, got ${raw.length}`);
  }
  return raw;
}

export function checkBeat(id: unknown, ttlMs: unknown, record: unknown): [string, number, Buffer] {
  return [checkWorkerId(id), checkInt("ttlMs", ttlMs, MIN_WORKER_TTL_MS, MAX_WORKER_TTL_MS), recordJSON(record)];
}

export function checkListing(options: { offset?: number; count?: number }): [number, number] {
  return [checkInt("offset", options.offset ?? 0, 0, MAX_OFFSET), checkBatch("count", options.count ?? 100)];
}

type Reply = Buffer | number | null | Reply[];

export function beatReply(reply: Reply): Beat {
  if (!Array.isArray(reply) || typeof reply[0] !== "number" || typeof reply[1] !== "number") {
    throw new Error(`rwq: unexpected heartbeat reply ${JSON.stringify(reply)}`);
  }
  return { nowMs: reply[0], removed: reply[1] };
}

export function listReply(reply: Reply): LiveWorker[] {
  const entries = Array.isArray(reply) && Array.isArray(reply[1]) ? reply[1] : [];
  return entries.map((entry) => {
    const [id, data, deadline] = entry as [Buffer, Buffer, number];
    let record: unknown = {};
    try {
      record = JSON.parse(data.toString("utf8"));
    } catch {
      record = {};
    }
    const plain = record !== null && typeof record === "object" && !Array.isArray(record);
    return { id: id.toString("utf8"), record: (plain ? record : {}) as Record<string, unknown>, deadlineMs: deadline };
  });
}
