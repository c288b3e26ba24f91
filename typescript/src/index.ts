/** rwq: the RWQ/1 work queue client for Node.js. */
export { createClient, NO_RESEND, type ClientOptions } from "./client.js";
export {
  RwqError, InvalidArgumentError, LeaseLostError, UnsupportedServerError, RedisError, WrongTypeError,
  NotReplicatedError, ShardMismatchError, type ErrorCode,
} from "./errors.js";
export { Queue, type QueueOptions, type RedisClient, DEFAULT_LIGHT_CLEAN_CHUNK, DEFAULT_DEEP_CLEAN_CHUNK } from "./queue.js";
export { ShardedQueue } from "./sharded.js";
export {
  type Beat, type LiveWorker, newWorkerId, DEFAULT_HEARTBEAT_MS, DEFAULT_HEARTBEAT_TTL_MS, MAX_WORKER_RECORD_BYTES,
} from "./live.js";
export {
  type Schedule, type Missed, type ScheduleList, type Fired, type SlotOutcome, StoredSchedule, nextSlots, parseSchedule,
  DEFAULT_GRACE_MS, MAX_FIRE_SLOTS,
} from "./periodic.js";
export { Scheduler, type SchedulerOptions, type Tick } from "./scheduler.js";
export { CronSchedule, parseCron, MAX_CRON_BYTES, MAX_ZONE_BYTES, MAX_CRON_AFTER_MS } from "./cron.js";
export {
  type QueueStats, type StatCounts, type StatRates, type StatCounter, type StatWindow, STAT_COUNTERS, STAT_WINDOWS,
} from "./stats.js";
export { scriptSha1s } from "./scripts.js";
export { decodeId as idFromBytes, encodeId as idToBytes } from "./ids.js";
export { PROTOCOL } from "./scripts.generated.js";
export {
  Lease, DEFAULT_RETRY_POLICY, type Item, type Payload, type Outcome, type Counts, type CleanReport,
  type RetryPolicy, type FailResult, type FailOptions, type DeadItem, type ReleaseOptions,
} from "./types.js";
export { VERSION } from "./version.js";
export {
  Worker, NonRetryable, RetryLater, DEFAULT_WORKER_RETRY, FALLBACK_DELAY_MS,
  type WorkerOptions, type Handler, type HandlerContext, type WorkerStats, type Logger,
} from "./worker.js";
