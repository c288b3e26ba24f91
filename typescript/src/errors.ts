/** Errors: one class per RWQ/1 error code (SPEC §6.1), each `instanceof`-able, with `.code`. */

/** The closed set of RWQ/1 error codes. */
export type ErrorCode =
  | "INVALID_ARGUMENT"
  | "LEASE_LOST"
  | "UNSUPPORTED_SERVER"
  | "REDIS_ERROR"
  | "WRONG_TYPE"
  | "NOT_REPLICATED"
  | "SHARD_MISMATCH";

/** Every error this package throws; `code` is the RWQ/1 code, `cause` the ioredis error if any. */
export class RwqError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Bad input; nothing was sent to Redis. */
export class InvalidArgumentError extends RwqError {
  constructor(message: string) {
    super("INVALID_ARGUMENT", message);
  }
}

/** The caller does not hold the lease; nothing changed. */
export class LeaseLostError extends RwqError {
  constructor(message: string) {
    super("LEASE_LOST", message);
  }
}

/** The server cannot run RWQ/1 (older than Redis 6.2). */
export class UnsupportedServerError extends RwqError {
  constructor(message: string) {
    super("UNSUPPORTED_SERVER", message);
  }
}

/** Redis failed or was unreachable; the outcome of a write may be unknown (RWQ-FAIL-004). */
export class RedisError extends RwqError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("REDIS_ERROR", message, options);
  }
}

/** A key of the queue's layout holds another Redis type; nothing was written. */
export class WrongTypeError extends RwqError {
  constructor(message: string) {
    super("WRONG_TYPE", message);
  }
}

/** Profile ack: done on the primary, but too few replicas acknowledged in time. */
export class NotReplicatedError extends RwqError {
  constructor(message: string) {
    super("NOT_REPLICATED", message);
  }
}

/** Profile sharded: the queue records another shard count (RWQ-SHARD-003). */
export class ShardMismatchError extends RwqError {
  constructor(message: string) {
    super("SHARD_MISMATCH", message);
  }
}

const byCode: Record<ErrorCode, (message: string) => RwqError> = {
  INVALID_ARGUMENT: (m) => new InvalidArgumentError(m),
  LEASE_LOST: (m) => new LeaseLostError(m),
  UNSUPPORTED_SERVER: (m) => new UnsupportedServerError(m),
  REDIS_ERROR: (m) => new RedisError(m),
  WRONG_TYPE: (m) => new WrongTypeError(m),
  NOT_REPLICATED: (m) => new NotReplicatedError(m),
  SHARD_MISMATCH: (m) => new ShardMismatchError(m),
};

/** Maps an ioredis error: a script's "RWQ_<CODE> text" reply to that code (RWQ-SCRIPT-004),
 * anything else to a RedisError. */
export function translate(err: unknown): RwqError {
  if (err instanceof RwqError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const m = /^RWQ_([A-Z_]+) ?(.*)$/s.exec(message);
  if (m && m[1] !== undefined && m[1] in byCode) {
    return byCode[m[1] as ErrorCode](m[2] ?? "");
  }
  return new RedisError(message, { cause: err });
}

export function invalid(message: string): InvalidArgumentError {
  return new InvalidArgumentError(message);
}
