/** Argument checks (SPEC §4 limits): every one throws InvalidArgumentError before any I/O. */
import { invalid } from "./errors.js";
import { encodeId, isUtf8Id } from "./ids.js";

export const MAX_ID_BYTES = 512;
export const MAX_TOKEN_BYTES = 128;
export const MAX_BATCH = 1000;
export const MAX_DURATION_MS = 31_536_000_000;
export const MAX_SHARDS = 1024;
export const MAX_DETAIL_BYTES = 8192;
export const MAX_REASON_BYTES = 1024;

export function quote(s: string): string {
  return JSON.stringify(s);
}

export function checkInt(name: string, v: unknown, lo: number, hi: number): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < lo || v > hi) {
    throw invalid(`${name} must be an integer in ${lo}..${hi}, got ${typeof v === "number" ? v : typeof v}`);
  }
  return v;
}

export function checkDuration(name: string, v: unknown, minimum: number): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < minimum || v > MAX_DURATION_MS) {
    throw invalid(`${name} must be in ${minimum}..${MAX_DURATION_MS} ms, got ${typeof v === "number" ? v : typeof v}`);
  }
  return v;
}

export function checkBatch(name: string, n: unknown): number {
  return checkInt(name, n, 1, MAX_BATCH);
}

export function checkBool(name: string, v: unknown): boolean {
  if (typeof v !== "boolean") throw invalid(`${name} must be a boolean`);
  return v;
}

/** An id's bytes (1..512), for an operation on an existing item. */
export function idBytes(id: unknown): Buffer {
  if (typeof id !== "string") throw invalid(`id must be a string, not ${typeof id}`);
  const raw = encodeId(id);
  if (raw.length < 1 || raw.length > MAX_ID_BYTES) {
    throw invalid(`id must be 1..${MAX_ID_BYTES} bytes, got ${raw.length}`);
  }
  return raw;
}

/** A new item's id: valid UTF-8 as well (RWQ-ENC-001). */
export function newIdBytes(id: unknown): Buffer {
  const raw = idBytes(id);
  if (!isUtf8Id(id as string)) throw invalid("id must be valid UTF-8");
  return raw;
}

export function payload(data: unknown): Buffer {
  if (typeof data === "string") return Buffer.from(data, "utf8");
  if (data instanceof Uint8Array) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  throw invalid("data must be a string or a Uint8Array");
}

export function checkArray<T>(name: string, v: unknown): T[] {
  if (!Array.isArray(v)) throw invalid(`${name} must be an array`);
  return v as T[];
}

export function hashTag(key: string): string | null {
  const start = key.indexOf("{");
  if (start < 0) return null;
  const end = key.indexOf("}", start + 1);
  if (end <= start + 1) return null;
  return key.slice(start + 1, end);
}

const reservedSegments = new Set(["item", "lease", "leased_by_session", "deep_clean"]);
const shardForm = /^\{[^{}]+#(0|[1-9][0-9]{0,3})\}$/;

/** Refuses a prefix of the form {P#i} (shard i of a sharded queue, RWQ-KEYS-010). */
export function checkShardForm(prefix: string): void {
  const m = shardForm.exec(prefix);
  if (m && Number(m[1]) < MAX_SHARDS) {
    throw invalid(
      `prefix must not have the form {P#i} of a sharded queue's shard i (RWQ-KEYS-010): ${quote(prefix)}; open the sharded queue instead`,
    );
  }
}

export function checkPrefix(prefix: unknown, cluster: boolean): string {
  if (typeof prefix !== "string") throw invalid("prefix must be a string");
  const n = Buffer.byteLength(prefix, "utf8");
  if (n < 1 || n > MAX_ID_BYTES) throw invalid(`prefix must be 1..${MAX_ID_BYTES} bytes`);
  if (!prefix.isWellFormed()) throw invalid("prefix must be valid UTF-8");
  if (/[*?[\]\\]/.test(prefix)) throw invalid(`prefix must not contain glob characters * ? [ ] \\: ${quote(prefix)}`);
  for (const segment of prefix.split(":").slice(1)) {
    if (reservedSegments.has(segment)) {
      throw invalid(
        `prefix must not have a segment ${quote(segment)} after its first: its keys would be another queue's item or lease keys (RWQ-KEYS-008): ${quote(prefix)}`,
      );
    }
  }
  if (cluster && hashTag(prefix) === null) {
    throw invalid(`on Redis Cluster the prefix must contain a hash tag such as {jobs}: ${quote(prefix)}`);
  }
  return prefix;
}
