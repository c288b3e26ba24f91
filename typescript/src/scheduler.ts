/** The scheduler of profile periodic (SPEC §23.4). No leader is elected: any number of schedulers,
 * in any language, may run on one queue, and each slot still becomes at most one item (the fire
 * script's watermark). A tick reads every schedule with the server's now, fires each one's due
 * slots oldest first, and says when the next slot is; `run` ticks until its signal aborts,
 * waiting until that slot by the server's clock (the last reply's now plus the time waited on the
 * monotonic clock), never more than 10 s, and registers as a live worker of kind "scheduler". */
import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import { DEFAULT_HEARTBEAT_MS, DEFAULT_HEARTBEAT_TTL_MS, newWorkerId } from "./live.js";
import { SCHEDULER_REFRESH_MS, checkSchedule, dueSlots, nextSlot } from "./periodic.js";
import type { Queue } from "./queue.js";
import { checkInt } from "./validate.js";
import { VERSION } from "./version.js";
import type { Logger } from "./worker.js";

const BACKOFF_MS = 1000; // after a failed tick: 1 s, doubling up to 10 s
const MAX_BACKOFF_MS = 10_000;

export interface SchedulerOptions {
  logger?: Logger;
  /** How often `run` registers the scheduler in P:workers with kind "scheduler" (profile workers,
   * SPEC §21); default 5000, at most heartbeatTtlMs / 3; null: never. */
  heartbeatMs?: number | null;
  /** How long a beat keeps the scheduler listed, 1000..3600000 (default 30000). */
  heartbeatTtlMs?: number;
}

/** One pass: the ids of the items it added, the server's now of its last reply, and the next
 * slot of any schedule not paused (null when there is none). */
export interface Tick {
  fired: string[];
  nowMs: number;
  nextMs: number | null;
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

/** Fires the slots of a queue's schedules: `tick()` is one pass, `run(signal)` loops. Sharded
 * queues have no schedules (RWQ-SCHED-016), so it takes a Queue. Options are checked here,
 * before any I/O (InvalidArgumentError). */
export class Scheduler {
  /** Its id in the queue's list of live workers. */
  readonly id = newWorkerId();
  private readonly log: Logger;
  private readonly heartbeatMs: number | null;
  private readonly heartbeatTtlMs: number;
  private readonly refused = new Set<string>(); // name and digest of definitions logged as unreadable
  private startedMs: number | null = null;

  constructor(readonly queue: Queue, options: SchedulerOptions = {}) {
    this.heartbeatTtlMs = checkInt("heartbeatTtlMs", options.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS, 1000, 3_600_000);
    this.heartbeatMs = options.heartbeatMs === null ? null
      : checkInt("heartbeatMs", options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS, 1, Math.floor(this.heartbeatTtlMs / 3));
    this.log = options.logger ?? { info: (m) => console.info(m), warn: (m) => console.warn(m), error: (m) => console.error(m) };
  }

  /** Reads the schedules, fires every due slot (never re-sending a call whose reply was lost,
   * RWQ-SCHED-011) and says when the next slot is. Redis errors are thrown. */
  async tick(): Promise<Tick> {
    const list = await this.queue.schedules();
    const due = []; // every schedule's slots by the list's now, as the other clients do
    for (const stored of list.schedules) {
      if (stored.pausedMs !== null) continue;
      let walk;
      try {
        walk = checkSchedule(stored.schedule());
      } catch (err) { // another v, or a definition that does not parse (RWQ-SCHED-017): logged once
        const key = `${stored.name} ${stored.digest}`;
        if (!this.refused.has(key)) this.log.warn(`rwq: schedule ${stored.name} is skipped: ${String(err)}`);
        this.refused.add(key);
        continue;
      }
      due.push({ stored, walk, slots: dueSlots(walk, stored.lastFiredMs ?? -1, list.nowMs) });
    }
    const tick: Tick = { fired: [], nowMs: list.nowMs, nextMs: null };
    let next = Infinity;
    for (const { stored, walk, slots } of due) {
      let mark = stored.lastFiredMs;
      if (slots.length > 0) {
        const fired = await this.queue.fire(stored.name, stored.digest, slots);
        tick.nowMs = fired.nowMs;
        tick.fired.push(...fired.added);
        mark = fired.lastFiredMs ?? mark;
        if (fired.status !== "ok") continue; // gone, stale or paused: the next tick reads the schedules again
      }
      next = Math.min(next, nextSlot(walk, Math.max(mark ?? -1, tick.nowMs)));
    }
    if (next !== Infinity) tick.nextMs = next;
    return tick;
  }

  /** Ticks until `signal` aborts, then leaves the live workers. A failed tick is logged and the
   * next comes after a backoff (1 s, doubling up to 10 s). Run it once at a time. */
  async run(signal?: AbortSignal): Promise<void> {
    let backoff = BACKOFF_MS;
    let beatAt = 0;
    try {
      while (!signal?.aborted) {
        if (this.heartbeatMs !== null && performance.now() >= beatAt) {
          await this.beat();
          beatAt = performance.now() + this.heartbeatMs;
        }
        let wait: number;
        try {
          const tick = await this.tick();
          const since = performance.now();
          backoff = BACKOFF_MS;
          for (const id of tick.fired) this.log.info(`rwq: fired ${id}`);
          wait = tick.nextMs === null ? SCHEDULER_REFRESH_MS : tick.nextMs - tick.nowMs - (performance.now() - since);
          wait = Math.min(Math.max(wait, 1), SCHEDULER_REFRESH_MS); // RWQ-SCHED-018
          if (this.heartbeatMs !== null) wait = Math.min(wait, Math.max(beatAt - performance.now(), 1));
        } catch (err) {
          this.log.error(`rwq: scheduler tick failed, next in ${backoff} ms: ${String(err)}`);
          wait = backoff;
          backoff = Math.min(2 * backoff, MAX_BACKOFF_MS);
        }
        await sleep(wait, signal);
      }
    } finally {
      if (this.heartbeatMs !== null) {
        try {
          await this.queue.workerLeave(this.id);
        } catch (err) {
          this.log.warn(`rwq: scheduler ${this.id} could not leave the live workers: ${String(err)}`);
        }
      }
    }
  }

  /** What the heartbeat registers (SPEC §21), as a scheduler. */
  private record(): Record<string, unknown> {
    return {
      id: this.id, kind: "scheduler", host: hostname(), pid: process.pid, language: "typescript",
      implementation: "@rwq-protocol/rwq", version: VERSION, started_ms: this.startedMs, ttl_ms: this.heartbeatTtlMs,
    };
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
      this.log.warn(`rwq: heartbeat of scheduler ${this.id} failed: ${String(err)}`);
    }
  }
}
