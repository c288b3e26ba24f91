/**
 * Worker: runs an async handler on items leased from a queue, `concurrency` at once, as safely as
 * the reference (Python) worker: leases renewed while handlers run, failures recorded with `fail`
 * under the queue's stored retry policy (dead-lettered when attempts run out), a fallback delay
 * without a policy, light cleans on a timer, a per-item timeout, and a graceful stop that gives
 * back (refunded) what it cannot finish (SPEC §15.1, RWQ-WORKER-001..005).
 */
import { hostname } from "node:os";
import { LeaseLostError, RedisError, invalid } from "./errors.js";
import { type Queue, policyArgs } from "./queue.js";
import type { ShardedQueue } from "./sharded.js";
import { DEFAULT_RETRY_POLICY, type Lease, type RetryPolicy } from "./types.js";
import { checkDuration, checkInt, MAX_DETAIL_BYTES, MAX_REASON_BYTES } from "./validate.js";
import { DEFAULT_HEARTBEAT_MS, DEFAULT_HEARTBEAT_TTL_MS, MAX_RECORD_ITEMS, MAX_WORKER_RECORD_BYTES, newWorkerId } from "./live.js";
import { VERSION } from "./version.js";

/** Thrown by a handler: the failure is not retryable; the item is dead-lettered now (RWQ-RETRY-016). */
export class NonRetryable extends Error {
  override name = "NonRetryable";
}

/** Thrown by a handler: run the item again after delayMs (RWQ-RETRY-017); attempts still count. */
export class RetryLater extends Error {
  override name = "RetryLater";
  readonly delayMs: number;
  constructor(delayMs: number, message = `retry in ${delayMs} ms`) {
    super(message);
    this.delayMs = checkDuration("delayMs", delayMs, 0);
  }
}

/** What a handler gets: the leased item and a signal aborted when the worker no longer wants the
 * work (the lease was lost, the item timed out, or the worker stops for good). */
export interface HandlerContext {
  readonly id: string;
  readonly data: Buffer;
  readonly attempt: number;
  readonly lease: Lease;
  readonly signal: AbortSignal;
}

/** Resolving completes the item; throwing (or rejecting) records a failed attempt. */
export type Handler = (job: HandlerContext) => Promise<unknown>;

/** A worker's logger: console by default. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface WorkerOptions {
  /** Handlers running at once, 1..1000 (default 1). */
  concurrency?: number;
  /** Lease time of each item, renewed while its handler runs (default 30000). */
  leaseMs?: number;
  /** How often running items' leases are renewed (default leaseMs / 3). */
  renewIntervalMs?: number;
  /** Each blocking lease waits at most this long before looking at the stop signal (default 1000). */
  pollTimeoutMs?: number;
  /** A light clean about this often, paced across the fleet (default leaseMs; null: none). */
  cleanIntervalMs?: number | null;
  /** At a stop, how long running handlers may finish before their items are given back (default 10000). */
  shutdownGraceMs?: number;
  /** The policy offered at start if the queue has none (RWQ-WORKER-001); null: run without. */
  retry?: Partial<RetryPolicy> | null;
  /** A handler running longer fails its item (its signal is aborted with a TimeoutError). */
  timeoutMs?: number | null;
  /** Aborting it stops the worker gracefully (as stop()). */
  signal?: AbortSignal;
  /** Called with each handler failure, after it is recorded. */
  onError?: (job: HandlerContext, error: unknown) => void;
  logger?: Logger;
  /** How often the renewer registers the worker in P:workers (profile workers, SPEC §21; default
   * 5000, at most heartbeatTtlMs / 3); null: never. */
  heartbeatMs?: number | null;
  /** How long a beat keeps the worker listed, 1000..3600000 (default 30000). */
  heartbeatTtlMs?: number;
}

/** The policy a worker offers by default: 5 attempts, exponential from 1 s, 25 % jitter. */
export const DEFAULT_WORKER_RETRY: Readonly<RetryPolicy> = Object.freeze({ ...DEFAULT_RETRY_POLICY, jitterPct: 25 });

/** A failed item's delay when the queue has no retry policy: never a hot loop (RWQ-WORKER-002). */
export const FALLBACK_DELAY_MS = 1000;

export interface WorkerStats {
  completed: number;
  failed: number;
  dead: number;
  released: number;
  lost: number;
}

interface Job extends HandlerContext {
  readonly controller: AbortController;
  running: boolean;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

/** The last `max` bytes of text, cut at a character boundary. */
function tail(text: string, max: number): string {
  const raw = Buffer.from(text, "utf8");
  if (raw.length <= max) return text;
  let start = raw.length - max;
  while (start < raw.length && (raw[start]! & 0xc0) === 0x80) start++;
  return raw.subarray(start).toString("utf8");
}

function head(text: string, max: number): string {
  const raw = Buffer.from(text, "utf8");
  if (raw.length <= max) return text;
  let end = max;
  while (end > 0 && (raw[end]! & 0xc0) === 0x80) end--;
  return raw.subarray(0, end).toString("utf8");
}

export class Worker {
  readonly queue: Queue | ShardedQueue;
  readonly stats: WorkerStats = { completed: 0, failed: 0, dead: 0, released: 0, lost: 0 };
  private readonly handler: Handler;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly renewIntervalMs: number;
  private readonly pollTimeoutMs: number;
  private readonly cleanIntervalMs: number | null;
  private readonly graceMs: number;
  private readonly retry: Partial<RetryPolicy> | null;
  private readonly timeoutMs: number | null;
  private readonly onError: ((job: HandlerContext, error: unknown) => void) | undefined;
  private readonly log: Logger;
  private readonly stopping = new AbortController();
  private readonly halting = new AbortController();
  private readonly held = new Set<Job>();
  private readonly tasks = new Set<Promise<void>>();
  private readonly runs = new Map<string, Promise<void>>(); // ids whose handler runs here
  /** This worker's id in its queue's list of live workers. */
  readonly id = newWorkerId();
  private readonly heartbeatMs: number | null;
  private readonly heartbeatTtlMs: number;
  private startedMs: number | null = null; // the server's now at the first beat (RWQ-LIVE-005)
  private policyAtStart = false;
  private raisedDelay = false;
  private started = false;

  /** Checks every option before any I/O (InvalidArgumentError). */
  constructor(queue: Queue | ShardedQueue, handler: Handler, options: WorkerOptions = {}) {
    if (typeof handler !== "function") throw invalid("handler must be an async function");
    this.queue = queue;
    this.handler = handler;
    this.concurrency = checkInt("concurrency", options.concurrency ?? 1, 1, 1000);
    this.leaseMs = checkDuration("leaseMs", options.leaseMs ?? 30_000, 1);
    this.renewIntervalMs = checkDuration("renewIntervalMs", options.renewIntervalMs ?? Math.max(Math.floor(this.leaseMs / 3), 1), 1);
    if (this.renewIntervalMs >= this.leaseMs) throw invalid("renewIntervalMs must be shorter than leaseMs");
    this.pollTimeoutMs = checkDuration("pollTimeoutMs", options.pollTimeoutMs ?? 1000, 1);
    this.cleanIntervalMs = options.cleanIntervalMs === null ? null : checkDuration("cleanIntervalMs", options.cleanIntervalMs ?? this.leaseMs, 1);
    this.graceMs = checkDuration("shutdownGraceMs", options.shutdownGraceMs ?? 10_000, 0);
    this.retry = options.retry === undefined ? DEFAULT_WORKER_RETRY : options.retry;
    if (this.retry !== null) policyArgs(this.retry);
    this.timeoutMs = options.timeoutMs == null ? null : checkDuration("timeoutMs", options.timeoutMs, 1);
    this.onError = options.onError;
    this.heartbeatTtlMs = checkInt("heartbeatTtlMs", options.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS, 1000, 3_600_000);
    this.heartbeatMs = options.heartbeatMs === null ? null
      : checkInt("heartbeatMs", options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS, 1, Math.floor(this.heartbeatTtlMs / 3));
    this.log = options.logger ?? { info: (m) => console.info(m), warn: (m) => console.warn(m), error: (m) => console.error(m) };
    options.signal?.addEventListener("abort", () => this.stop(), { once: true });
    if (options.signal?.aborted) this.stop();
  }

  /** Stop leasing now; run() lets running handlers finish within the grace period, then returns. */
  stop(): void {
    this.stopping.abort();
  }

  /** Stop now: no grace; running handlers' signals are aborted and their items given back. */
  halt(): void {
    this.stopping.abort();
    this.halting.abort();
  }

  /** Works until stopped, then shuts down gracefully; resolves with the stats. A worker runs once. */
  async run(): Promise<WorkerStats> {
    if (this.started) throw new Error("a Worker runs once");
    this.started = true;
    await this.offerPolicy();
    const helpers = [this.renewer(), ...(this.cleanIntervalMs === null ? [] : [this.cleaner()])];
    try {
      await this.poller();
    } finally {
      await this.shutdown();
      this.halting.abort();
      await Promise.all(helpers);
      await this.leave(); // every item settled or given back (RWQ-LIVE-007)
    }
    this.log.info(`rwq worker on ${JSON.stringify(this.queue.prefix)} stopped: ${JSON.stringify(this.stats)}`);
    return this.stats;
  }

  /** RWQ-WORKER-001/003: offer the worker's policy if the queue has none; note whether it has one. */
  private async offerPolicy(): Promise<void> {
    let stored = false;
    let current: RetryPolicy | null = null;
    let error: unknown = null;
    try {
      if (this.retry !== null) stored = await this.queue.setRetryPolicyIfAbsent(this.retry);
      current = await this.queue.getRetryPolicy();
    } catch (err) {
      if (!(err instanceof RedisError)) throw err;
      error = err;
      current = await this.queue.getRetryPolicy().catch(() => null);
    }
    this.policyAtStart = stored || current !== null;
    if (this.retry === null) return;
    const prefix = JSON.stringify(this.queue.prefix);
    const wanted = { ...DEFAULT_RETRY_POLICY, ...this.retry };
    if (stored) this.log.info(`rwq: queue ${prefix} had no retry policy: stored the worker's ${JSON.stringify(wanted)}`);
    else if (current !== null && JSON.stringify(current) !== JSON.stringify(wanted)) {
      this.log.warn(
        `rwq: queue ${prefix} keeps its stored retry policy ${JSON.stringify(current)}, not this worker's ${JSON.stringify(wanted)}: the stored one applies to every worker; an admin changes it with \`rwq policy set --prefix ${this.queue.prefix}\` (RWQ-WORKER-003)`,
      );
    } else if (current === null && error !== null && !/NOPERM|no permissions|can't run this command|can't access/.test(String(error))) {
      this.log.warn(`rwq: could not store or read the retry policy of queue ${prefix} (${String(error)}); failed items wait ${FALLBACK_DELAY_MS} ms before they run again (RWQ-WORKER-002)`);
    } else if (current === null && error !== null) {
      throw new RedisError(
        `queue ${prefix} has no retry policy and this worker may not store one: run \`rwq policy set --prefix ${this.queue.prefix}\` as an admin (or pass retry: null to run without one) (RWQ-WORKER-001)`,
        { cause: error },
      );
    }
  }

  /** Leases items for free slots (one blocking lease at a time) until stopped. */
  private async poller(): Promise<void> {
    let failures = 0;
    while (!this.stopping.signal.aborted) {
      if (this.tasks.size >= this.concurrency) { // slots, each a chain of items
        await Promise.race([...this.tasks, sleep(this.pollTimeoutMs, this.stopping.signal)]);
        continue;
      }
      let lease: Lease | null;
      try {
        lease = await this.queue.lease(this.leaseMs, { block: true, timeoutMs: this.pollTimeoutMs, signal: this.stopping.signal });
        failures = 0;
      } catch (err) {
        if (!(err instanceof RedisError)) throw err;
        const delay = Math.min(5000, 100 * 2 ** Math.min(failures++, 6)) * (0.5 + Math.random() / 2);
        this.log.warn(`rwq: lease failed (${err.message}); retrying in ${Math.round(delay)} ms`);
        await sleep(delay, this.stopping.signal);
        continue;
      }
      if (lease) this.start(lease);
    }
  }

  /** Runs a job, then the next one a complete_and_lease brought, in one slot. */
  private start(first: Lease): void {
    const task = (async () => {
      let lease: Lease | null = first;
      while (lease) {
        if (this.stopping.signal.aborted) {
          await this.giveBack([lease]);
          return;
        }
        lease = await this.runJob(lease);
      }
    })();
    this.tasks.add(task);
    void task.finally(() => this.tasks.delete(task));
  }

  private async runJob(lease: Lease): Promise<Lease | null> {
    const controller = new AbortController();
    const job: Job = { id: lease.id, data: lease.data, attempt: lease.attempt, lease, signal: controller.signal, controller, running: true };
    this.held.add(job); // renewed from now on, while it waits too
    let failure: unknown = null;
    let timer: NodeJS.Timeout | undefined;
    let onHalt = (): void => {};
    const abandoned = new Promise<"halt">((resolve) => {
      onHalt = () => resolve("halt");
      if (this.halting.signal.aborted) onHalt();
      this.halting.signal.addEventListener("abort", onHalt, { once: true });
    });
    // An item never runs twice at once in one worker: leased again while an earlier run of it
    // goes on here (that lease lost), it waits for that run to end.
    for (let earlier = this.runs.get(job.id); earlier; earlier = this.runs.get(job.id)) {
      this.log.warn(`rwq: item ${JSON.stringify(job.id)}: leased again while an earlier run of it goes on here; waiting`);
      if ((await Promise.race([earlier.then(() => "ended" as const), abandoned])) === "halt") {
        this.halting.signal.removeEventListener("abort", onHalt);
        job.running = false; // the shutdown gives it back
        return null;
      }
    }
    const run = Promise.resolve().then(() => this.handler(job));
    const ended = run.then(() => {}, () => {});
    this.runs.set(job.id, ended);
    void ended.then(() => {
      if (this.runs.get(job.id) === ended) this.runs.delete(job.id);
    });
    const timedOut = new Promise<"timeout">((resolve) => {
      if (this.timeoutMs !== null) timer = setTimeout(() => resolve("timeout"), this.timeoutMs);
    });
    try {
      const how = await Promise.race([run.then(() => "done" as const), timedOut, abandoned]);
      if (how === "timeout") {
        failure = new DOMException(`the handler ran longer than ${this.timeoutMs} ms`, "TimeoutError");
        controller.abort(failure);
      } else if (how === "halt") {
        // The grace period is over: the item goes back (refunded); the handler is told to stop.
        controller.abort(new DOMException("the worker stopped", "AbortError"));
        job.running = false;
        run.catch(() => {});
        return null;
      }
    } catch (err) {
      failure = err;
    } finally {
      clearTimeout(timer);
      this.halting.signal.removeEventListener("abort", onHalt);
    }
    run.catch(() => {});
    job.running = false;
    try {
      if (controller.signal.aborted && failure === null) {
        this.stats.lost++; // the lease was lost while the handler ran: another worker has the item
        return null;
      }
      if (failure === null) return await this.settleDone(job);
      await this.settleFailed(job, failure);
      if (controller.signal.aborted) await this.outlive(run, job); // a timed-out handler
      return null;
    } finally {
      this.held.delete(job);
    }
  }

  /** Waits for a timed-out handler (its item already failed) to end before its slot takes other
   * work, so that at most `concurrency` handlers ever run; the halt stops waiting. */
  private async outlive(run: Promise<unknown>, job: Job): Promise<void> {
    let onHalt = (): void => {};
    const halted = new Promise<void>((resolve) => {
      onHalt = resolve;
      if (this.halting.signal.aborted) resolve();
      this.halting.signal.addEventListener("abort", onHalt, { once: true });
    });
    const slow = setTimeout(() => this.log.warn(`rwq: item ${JSON.stringify(job.id)}: its handler ignores its aborted signal and still runs, holding a slot`), 1000);
    try {
      await Promise.race([run.then(() => {}, () => {}), halted]);
    } finally {
      clearTimeout(slow);
      this.halting.signal.removeEventListener("abort", onHalt);
    }
  }

  /** Completes the item as its lease holder, leasing the next one in the same call while running. */
  private async settleDone(job: Job): Promise<Lease | null> {
    return this.settle(job, async () => {
      if (!this.stopping.signal.aborted) {
        const r = await this.queue.completeAndLease([job.lease], { leaseMs: this.leaseMs, requireLease: true });
        this.count(r.outcomes[0] === "done" ? "completed" : "lost");
        return r.leases[0] ?? null;
      }
      const done = await this.queue.complete(job.lease, { requireLease: true }).catch((err: unknown) => {
        if (err instanceof LeaseLostError) return false;
        throw err;
      });
      this.count(done ? "completed" : "lost");
      return null;
    });
  }

  /** Records a failed attempt (RWQ-WORKER-002, -005): reason, stack as detail, steering by the error's class. */
  private async settleFailed(job: Job, error: unknown): Promise<void> {
    const e = error instanceof Error ? error : new Error(String(error));
    let delayMs = e instanceof RetryLater ? e.delayMs : undefined;
    if (delayMs !== undefined && delayMs < FALLBACK_DELAY_MS && !this.policyAtStart) {
      delayMs = FALLBACK_DELAY_MS;
      if (!this.raisedDelay) {
        this.raisedDelay = true;
        this.log.warn(`rwq: queue ${JSON.stringify(this.queue.prefix)} has no retry policy: a RetryLater delay shorter than ${FALLBACK_DELAY_MS} ms is raised to it (RWQ-WORKER-002)`);
      }
    }
    const dead = e instanceof NonRetryable;
    this.log.error(`rwq: item ${JSON.stringify(job.id)}: handler failed${dead ? ", not retryable" : ""}: ${e.stack ?? e.message}`);
    await this.settle(job, async () => {
      try {
        const r = await this.queue.fail(job.lease, {
          reason: head(`${e.name}: ${e.message}`, MAX_REASON_BYTES),
          detail: tail(e.stack ?? `${e.name}: ${e.message}`, MAX_DETAIL_BYTES),
          fallbackDelayMs: FALLBACK_DELAY_MS,
          ...(dead ? { dead: true } : delayMs !== undefined ? { delayMs } : {}),
        });
        this.count(r.outcome === "gone" ? "lost" : r.outcome === "dead" ? "dead" : "failed");
      } catch (err) {
        if (!(err instanceof LeaseLostError)) throw err;
        this.count("lost");
      }
      return null;
    });
    try {
      this.onError?.(job, error);
    } catch (err) {
      this.log.error(`rwq: onError failed for item ${JSON.stringify(job.id)}: ${String(err)}`);
    }
  }

  private count(what: "completed" | "failed" | "dead" | "lost"): void {
    if (what === "dead") this.stats.failed++;
    this.stats[what]++;
  }

  /** Runs a settling call, retrying Redis failures with backoff until the worker halts. */
  private async settle(job: Job, call: () => Promise<Lease | null>): Promise<Lease | null> {
    for (let failures = 0; ; failures++) {
      try {
        return await call();
      } catch (err) {
        if (!(err instanceof RedisError) || this.halting.signal.aborted) {
          this.log.error(`rwq: item ${JSON.stringify(job.id)}: could not settle it: ${String(err)}`);
          return null;
        }
        const delay = Math.min(5000, 100 * 2 ** Math.min(failures, 6)) * (0.5 + Math.random() / 2);
        this.log.warn(`rwq: item ${JSON.stringify(job.id)}: settling failed (${err.message}); retrying in ${Math.round(delay)} ms`);
        await sleep(delay, this.halting.signal);
      }
    }
  }

  /** Gives items back unrun, refunding the attempt (RWQ-WORKER-004). */
  private async giveBack(leases: Lease[]): Promise<void> {
    if (leases.length === 0) return;
    try {
      const outcomes = await this.queue.releaseMany(leases, { refundAttempt: true });
      this.stats.released += outcomes.filter((o) => o === "done").length;
    } catch (err) {
      this.log.error(`rwq: could not give back ${leases.length} items at shutdown (their leases expire): ${String(err)}`);
    }
  }

  /** Waits up to the grace period for running handlers; then aborts them and gives their items back. */
  private async shutdown(): Promise<void> {
    const all = Promise.all([...this.tasks]);
    await Promise.race([all, sleep(this.graceMs, this.halting.signal)]);
    const running = [...this.held].filter((j) => j.running);
    if (running.length > 0) {
      this.log.warn(`rwq: ${running.length} handlers still running after ${this.graceMs} ms; stopping them and releasing their items`);
      this.halting.abort();
      await Promise.all([...this.tasks]);
      await this.giveBack(running.map((j) => j.lease));
    }
    await Promise.all([...this.tasks]);
  }

  /** What the heartbeat registers (SPEC §21): never a lease token. */
  private record(): Record<string, unknown> {
    const held = [...this.held].map((j) => j.id);
    const record: Record<string, unknown> = {
      id: this.id, kind: "worker", host: hostname(), pid: process.pid, language: "typescript",
      implementation: "@rwq-protocol/rwq", version: VERSION, started_ms: this.startedMs, ttl_ms: this.heartbeatTtlMs,
      concurrency: this.concurrency, in_hand: held.length, items: held.slice(0, MAX_RECORD_ITEMS),
      completed: this.stats.completed, failed: this.stats.failed, released: this.stats.released, lost: this.stats.lost,
    };
    const items = record.items as string[];
    while (items.length > 0 && Buffer.byteLength(JSON.stringify(record)) > MAX_WORKER_RECORD_BYTES) items.pop();
    return record;
  }

  /** One heartbeat (two the first time, so that the record carries its server time); a failure
   * is logged, and the next interval tries again. */
  private async beat(): Promise<void> {
    try {
      for (;;) {
        const b = await this.queue.workerBeat(this.id, this.heartbeatTtlMs, this.record());
        if (this.startedMs !== null) return;
        this.startedMs = b.nowMs;
      }
    } catch (err) {
      this.log.warn(`rwq: heartbeat of worker ${this.id} failed: ${String(err)}`);
    }
  }

  private async leave(): Promise<void> {
    if (this.heartbeatMs === null) return;
    try {
      await this.queue.workerLeave(this.id);
    } catch (err) {
      this.log.warn(`rwq: worker ${this.id} could not leave: ${String(err)}`);
    }
  }

  /** Renews held leases every renewIntervalMs and, with the heartbeat on, beats at once and then
   * every heartbeatMs (RWQ-LIVE-001). */
  private async renewer(): Promise<void> {
    let renewAt = Date.now() + this.renewIntervalMs;
    let beatAt = Date.now();
    while (!this.halting.signal.aborted) {
      if (this.heartbeatMs !== null && Date.now() >= beatAt) {
        beatAt = Date.now() + this.heartbeatMs;
        await this.beat();
      }
      const wake = this.heartbeatMs === null ? renewAt : Math.min(renewAt, beatAt);
      await sleep(Math.max(wake - Date.now(), 0), this.halting.signal);
      if (Date.now() < renewAt) continue;
      renewAt = Date.now() + this.renewIntervalMs;
      const jobs = [...this.held].filter((j) => j.running && !j.signal.aborted);
      if (jobs.length === 0 || this.halting.signal.aborted) continue;
      try {
        const renewed = await this.queue.renewMany(jobs.map((j) => j.lease), this.leaseMs);
        jobs.forEach((j, i) => {
          if (!renewed[i] && j.running) {
            this.log.warn(`rwq: item ${JSON.stringify(j.id)}: lease lost (expired or taken over)`);
            j.controller.abort(new LeaseLostError(`the lease on ${JSON.stringify(j.id)} was lost`));
          }
        });
      } catch (err) {
        this.log.warn(`rwq: renewing ${jobs.length} leases failed: ${String(err)}`);
      }
    }
  }

  private async cleaner(): Promise<void> {
    const interval = this.cleanIntervalMs!;
    while (!this.halting.signal.aborted) {
      await sleep(interval * (0.75 + Math.random() / 2), this.halting.signal);
      if (this.halting.signal.aborted) return;
      try {
        const r = await this.queue.lightClean({ paceMs: Math.max(Math.floor((interval * 3) / 4), 1) });
        if (r.requeued.length > 0) this.log.info(`rwq: light clean requeued ${r.requeued.length} abandoned items`);
      } catch (err) {
        this.log.warn(`rwq: light clean failed: ${String(err)}`);
      }
    }
  }
}
