/**
 * ShardedQueue: one logical queue over N RWQ/1 queues {P#i} (profile sharded, SPEC §19), for a
 * queue that must outgrow one Redis node. An id lands on shard crc32(id) % N; the first operation
 * records N in shard 0 or checks it (ShardMismatchError). Leases visit the shards in rotation;
 * a blocking lease that found every shard empty waits on the doorbell {P#bell} with BLPOP.
 * An operation spanning shards runs one call per shard and is not atomic across them.
 */
import { randomBytes, randomInt } from "node:crypto";
import { crc32 } from "node:zlib";
import { Cluster, type Redis } from "ioredis";
import { LeaseLostError, RedisError, ShardMismatchError, invalid, translate } from "./errors.js";
import { encodeId } from "./ids.js";
import { type Beat, type LiveWorker, checkBeat, checkListing, checkWorkerId } from "./live.js";
import type { Schedule } from "./periodic.js";
import { Queue, type QueueOptions, type RedisClient, SHARD, checkReleaseOptions, failArgs, masterFor, policyArgs } from "./queue.js";
import { scripts } from "./scripts.js";
import { type QueueStats, summed } from "./stats.js";
import type { CleanReport, Counts, DeadItem, FailOptions, FailResult, Item, Lease, Outcome, Payload, ReleaseOptions, RetryPolicy } from "./types.js";
import { leaseParts } from "./types.js";
import { MAX_BATCH, MAX_SHARDS, checkArray, checkBatch, checkDuration, checkInt, checkPrefix, idBytes, newIdBytes, quote } from "./validate.js";

const MAX_BELL_TOKENS = 16;

export class ShardedQueue {
  readonly prefix: string;
  readonly bell: string;
  readonly shards: readonly Queue[];
  private readonly redis: RedisClient;
  private readonly warn: (message: string) => void;
  private next: number;
  private counted: Promise<void> | null = null;

  /** The queue prefix over shards (1..1024) queues; options apply to every shard. No I/O. */
  constructor(redis: RedisClient, prefix: string, shards: number, options: QueueOptions = {}) {
    checkPrefix(prefix, false);
    if (/[{}]/.test(prefix)) throw invalid(`a sharded queue's prefix must hold no '{' or '}': each shard has a hash tag: ${quote(prefix)}`);
    checkInt("shards", shards, 1, MAX_SHARDS);
    this.redis = redis;
    this.prefix = prefix;
    this.bell = `{${prefix}#bell}`;
    this.warn = options.warn ?? ((m) => console.warn(m));
    this.shards = Array.from({ length: shards }, (_, i) => new Queue(redis, `{${prefix}#${i}}`, options, SHARD));
    this.next = randomInt(shards);
  }

  /** Closes the shards' connections of blocking leases; the client stays open. */
  async close(): Promise<void> {
    await Promise.all(this.shards.map((q) => q.close()));
  }

  /** The shard that holds id: CRC-32 (IEEE) of its bytes modulo N (RWQ-SHARD-002). */
  shardOf(id: string): number {
    return crc32(encodeId(id)) % this.shards.length;
  }

  private shard(i: number): Queue {
    return this.shards[i]!;
  }

  /** This call's shard order; the next call starts one further (RWQ-SHARD-004). */
  private turn(): number[] {
    const start = this.next;
    this.next = (this.next + 1) % this.shards.length;
    return this.shards.map((_, i) => (start + i) % this.shards.length);
  }

  /** Records or checks the shard count once, before the first operation (RWQ-SHARD-003). */
  private ready(): Promise<void> {
    this.counted ??= this.record().catch((err: unknown) => {
      this.counted = null;
      throw err;
    });
    return this.counted;
  }

  private async record(): Promise<void> {
    const first = this.shard(0);
    let reply;
    try {
      reply = await first.eval("shards", [`${first.prefix}:queue`], [this.shards.length]);
    } catch (err) {
      if (err instanceof Error && /NOPERM|no permissions|can't run this command|can't access/.test(err.message)) {
        throw new RedisError(
          `this user may not record the shard count of sharded queue ${quote(this.prefix)}, and none is recorded in ${first.prefix}:shards (only the admin role records it, RWQ-SHARD-009): run \`rwq shards --prefix ${this.prefix} --shards ${this.shards.length}\` as the admin first (${err.message})`,
        );
      }
      throw err;
    }
    if (typeof reply !== "number") throw new RedisError(`unexpected shards reply`);
    if (reply !== this.shards.length) {
      throw new ShardMismatchError(
        `queue ${quote(this.prefix)} has ${reply} shards recorded in ${first.prefix}:shards, this client ${this.shards.length}: they would route ids to different shards`,
      );
    }
  }

  private bellNode(): Redis {
    return this.redis instanceof Cluster ? masterFor(this.redis, this.bell) : this.redis;
  }

  /** Wakes up to `ready` consumers waiting on the doorbell (RWQ-SHARD-006); a hint, so a failure is only warned. */
  private async ring(ready: number): Promise<void> {
    if (ready < 1) return;
    const ring = scripts.ring;
    const n = Math.min(ready, MAX_BELL_TOKENS);
    try {
      const node = this.bellNode();
      try {
        await node.call("EVALSHA", ring.sha1, 1, this.bell, n);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
        await node.call("EVAL", ring.source, 1, this.bell, n);
      }
    } catch (err) {
      this.warn(`rwq: the doorbell of ${quote(this.prefix)} was not rung: ${translate(err).message}`);
    }
  }

  /** Runs fn on each shard's part of items, in input order, and puts the results back in order. */
  private async perShard<T, R>(items: T[], id: (t: T) => string, fn: (q: Queue, part: T[]) => Promise<R[]>): Promise<R[]> {
    const out: R[] = new Array<R>(items.length);
    if (items.length === 0) return out;
    const groups = new Map<number, number[]>();
    items.forEach((it, i) => {
      const s = this.shardOf(id(it));
      groups.set(s, [...(groups.get(s) ?? []), i]);
    });
    await this.ready();
    for (const [s, positions] of groups) {
      const got = await fn(this.shard(s), positions.map((i) => items[i]!));
      if (got.length !== positions.length) throw new RedisError(`shard ${s} answered ${got.length} results for ${positions.length} items`);
      positions.forEach((i, k) => (out[i] = got[k]!));
    }
    return out;
  }

  async add(id: string, data: Payload, options: { delayMs?: number } = {}): Promise<boolean> {
    return (await this.addMany([{ id, data }], options))[0] ?? false;
  }

  async addMany(items: Item[], options: { delayMs?: number } = {}): Promise<boolean[]> {
    const delayMs = checkDuration("delay_ms", options.delayMs ?? 0, 0);
    for (const it of checkArray<Item>("items", items)) newIdBytes(it?.id);
    const added = await this.perShard(items, (it) => it.id, (q, part) => q.addMany(part, { delayMs }));
    if (delayMs === 0) await this.ring(added.filter(Boolean).length);
    return added;
  }

  /** Visits every shard in rotation; the first lease found, else the server's time and the soonest due delay. */
  private async sweep(leaseMs: number): Promise<{ lease: Lease | null; now: number; due: number }> {
    let now = 0;
    let due = -1;
    for (const s of this.turn()) {
      const r = await this.shard(s).leaseCalls(newToken(), leaseMs, 1);
      if (r.leases[0]) return { lease: r.leases[0], now: r.now, due: r.dueIn };
      now = r.now;
      if (r.dueIn >= 0 && (due < 0 || r.dueIn < due)) due = r.dueIn;
    }
    return { lease: null, now, due };
  }

  /** Leases one ready item from the shards in rotation; with `block`, waits on the doorbell (RWQ-SHARD-007). */
  async lease(leaseMs: number, options: { block?: boolean; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Lease | null> {
    checkDuration("lease_ms", leaseMs, 1);
    const timeoutMs = checkDuration("timeout_ms", options.timeoutMs ?? 0, 0);
    if (typeof (options.block ?? false) !== "boolean") throw invalid("block must be a boolean");
    if (!options.block && timeoutMs !== 0) throw invalid("timeout_ms needs block: a non-blocking lease does not wait (RWQ-LEASE-014)");
    await this.ready();
    let deadline = -1;
    for (;;) {
      if (options.signal?.aborted) return null;
      const { lease, now, due } = await this.sweep(leaseMs);
      if (lease || !options.block) return lease;
      if (deadline < 0 && timeoutMs > 0) deadline = now + timeoutMs;
      let wait = 1000;
      if (deadline >= 0) {
        if (now >= deadline) return null;
        wait = Math.min(wait, deadline - now);
      }
      if (due >= 0) wait = Math.max(Math.min(wait, due), 1);
      try {
        await (this.shard(0).blocking() as Redis).blpop(this.bell, wait / 1000);
      } catch (err) {
        throw translate(err);
      }
    }
  }

  async leaseMany(options: { count: number; leaseMs: number }): Promise<Lease[]> {
    checkDuration("lease_ms", options.leaseMs, 1);
    checkBatch("count", options.count);
    await this.ready();
    return this.leaseFrom(this.turn(), options.count, options.leaseMs, []);
  }

  private async leaseFrom(order: number[], count: number, leaseMs: number, leases: Lease[]): Promise<Lease[]> {
    for (const s of order) {
      if (leases.length >= count) break;
      leases.push(...(await this.shard(s).leaseMany({ count: count - leases.length, leaseMs })));
    }
    return leases;
  }

  async renew(lease: Lease, leaseMs: number): Promise<boolean> {
    return (await this.renewMany([lease], leaseMs))[0] ?? false;
  }

  async renewMany(leases: Lease[], leaseMs: number): Promise<boolean[]> {
    checkDuration("lease_ms", leaseMs, 1);
    checkArray<Lease>("leases", leases).forEach(leaseParts);
    return this.perShard(leases, (l) => l.id, (q, part) => q.renewMany(part, leaseMs));
  }

  async complete(item: string | Lease, options: { requireLease?: boolean } = {}): Promise<boolean> {
    const [o] = await this.completeMany([item], options);
    if (o === "lease_lost") throw lost(itemId(item));
    return o === "done";
  }

  async completeMany(items: (string | Lease)[], options: { requireLease?: boolean } = {}): Promise<Outcome[]> {
    checkItems(checkArray("items", items), options.requireLease ?? false);
    return this.perShard(items, itemId, (q, part) => q.completeMany(part, options));
  }

  /** Completes items and leases up to count, keeping the rotation (RWQ-SHARD-005): one composite
   * call on the next shard in rotation, the other shards' completes, then leases from the others. */
  async completeAndLease(
    items: (string | Lease)[],
    options: { leaseMs: number; count?: number; requireLease?: boolean },
  ): Promise<{ outcomes: Outcome[]; leases: Lease[] }> {
    const requireLease = options.requireLease ?? false;
    checkItems(checkArray("items", items), requireLease);
    checkBatch("items", items.length);
    const count = checkBatch("count", options.count ?? 1);
    const leaseMs = checkDuration("lease_ms", options.leaseMs, 1);
    await this.ready();
    const order = this.turn();
    const head = order[0]!;
    const mine: number[] = [];
    const others: number[] = [];
    items.forEach((it, i) => (this.shardOf(itemId(it)) === head ? mine : others).push(i));
    const outcomes: Outcome[] = new Array<Outcome>(items.length);
    let leases: Lease[];
    if (mine.length > 0) {
      const r = await this.shard(head).completeAndLease(mine.map((i) => items[i]!), { leaseMs, count, requireLease });
      mine.forEach((i, k) => (outcomes[i] = r.outcomes[k]!));
      leases = r.leases;
    } else {
      leases = await this.shard(head).leaseMany({ count, leaseMs });
    }
    if (others.length > 0) {
      const got = await this.perShard(others.map((i) => items[i]!), itemId, (q, part) => q.completeMany(part, { requireLease }));
      others.forEach((i, k) => (outcomes[i] = got[k]!));
    }
    return { outcomes, leases: await this.leaseFrom(order.slice(1), count, leaseMs, leases) };
  }

  async release(lease: Lease, options: ReleaseOptions = {}): Promise<boolean> {
    const [o] = await this.releaseMany([lease], options);
    if (o === "lease_lost") throw lost(lease.id);
    return o === "done";
  }

  async releaseMany(leases: Lease[], options: ReleaseOptions = {}): Promise<Outcome[]> {
    checkReleaseOptions(options);
    checkArray<Lease>("leases", leases).forEach(leaseParts);
    const out = await this.perShard(leases, (l) => l.id, (q, part) => q.releaseMany(part, options));
    if ((options.delayMs ?? 0) === 0) await this.ring(out.filter((o) => o === "done").length);
    return out;
  }

  async fail(lease: Lease, options: FailOptions = {}): Promise<FailResult> {
    leaseParts(lease);
    failArgs(options.reason ?? "", options);
    await this.ready();
    return this.shard(this.shardOf(lease.id)).fail(lease, options);
  }

  /** The sum of the shards' counts (each read at its own instant). */
  async counts(): Promise<Counts> {
    await this.ready();
    const total: Counts = { queued: 0, processing: 0, delayed: 0, dead: 0 };
    for (const q of this.shards) {
      const c = await q.counts();
      total.queued += c.queued;
      total.processing += c.processing;
      total.delayed += c.delayed;
      total.dead += c.dead;
    }
    return total;
  }

  async lightClean(options: { chunk?: number; paceMs?: number } = {}): Promise<CleanReport> {
    checkBatch("chunk", options.chunk ?? 100);
    checkDuration("pace_ms", options.paceMs ?? 0, 0);
    return this.clean((q) => q.lightClean(options));
  }

  async deepClean(options: { chunk?: number } = {}): Promise<CleanReport> {
    checkBatch("chunk", options.chunk ?? 1000);
    return this.clean((q) => q.deepClean(options));
  }

  private async clean(fn: (q: Queue) => Promise<CleanReport>): Promise<CleanReport> {
    await this.ready();
    const all: CleanReport = { requeued: [], dropped: 0, dead: [], promoted: 0 };
    for (const q of this.shards) {
      const r = await fn(q);
      all.requeued.push(...r.requeued);
      all.dead.push(...r.dead);
      all.dropped += r.dropped;
      all.promoted += r.promoted;
    }
    return all;
  }

  /** Stores the policy on every shard; null removes it everywhere. */
  async setRetryPolicy(policy: Partial<RetryPolicy> | null): Promise<void> {
    if (policy !== null) policyArgs(policy);
    await this.ready();
    for (const q of this.shards) await q.setRetryPolicy(policy);
  }

  /** Stores policy on shard 0 if it has none; every other shard then gets shard 0's (RWQ-SHARD-008). */
  async setRetryPolicyIfAbsent(policy: Partial<RetryPolicy>): Promise<boolean> {
    if (policy === null || typeof policy !== "object") throw invalid("setRetryPolicyIfAbsent needs a policy");
    policyArgs(policy);
    await this.ready();
    const stored = await this.shard(0).setRetryPolicyIfAbsent(policy);
    const decided = await this.shard(0).getRetryPolicy();
    for (const q of this.shards.slice(1)) {
      if (JSON.stringify(await q.getRetryPolicy()) !== JSON.stringify(decided)) await q.setRetryPolicy(decided);
    }
    return stored;
  }

  async getRetryPolicy(): Promise<RetryPolicy | null> {
    await this.ready();
    return this.shard(0).getRetryPolicy();
  }

  /** Refused: a slot's id routes to the shard of its hash, while its schedule's watermark is one
   * key, and no script call spans two shards (RWQ-SCHED-016). */
  async putSchedule(_name: string, _schedule: Schedule, _data?: Payload): Promise<boolean> {
    throw invalid("schedules are not supported on a sharded queue yet (RWQ-SCHED-016)");
  }

  /** A sharded queue's workers register on shard 0 (SPEC §21), arguments checked first. */
  async workerBeat(id: string, ttlMs: number, record: Record<string, unknown>): Promise<Beat> {
    checkBeat(id, ttlMs, record);
    await this.ready();
    return this.shard(0).workerBeat(id, ttlMs, record);
  }

  async workerLeave(id: string): Promise<boolean> {
    checkWorkerId(id);
    await this.ready();
    return this.shard(0).workerLeave(id);
  }

  async workers(options: { offset?: number; count?: number } = {}): Promise<LiveWorker[]> {
    checkListing(options);
    await this.ready();
    return this.shard(0).workers(options);
  }

  /** Turns stats on for every shard, shard 0 first (RWQ-STATS-007); true when this call turned
   * them on for any shard. */
  async enableStats(): Promise<boolean> {
    await this.ready();
    let changed = false;
    for (const q of this.shards) changed = (await q.enableStats()) || changed;
    return changed;
  }

  /** Turns stats off for every shard, shard 0 first; true when any shard had them on. */
  async disableStats(): Promise<boolean> {
    await this.ready();
    let changed = false;
    for (const q of this.shards) changed = (await q.disableStats()) || changed;
    return changed;
  }

  /** Every shard's statistics, summed minute by minute (RWQ-STATS-007). */
  async stats(): Promise<QueueStats> {
    await this.ready();
    const reads: QueueStats[] = [];
    for (const q of this.shards) reads.push(await q.stats());
    return summed(reads);
  }

  /** Every shard's dead items merged by dead-letter time, newest first (RWQ-SHARD-008). */
  async deadItems(options: { offset?: number; count?: number } = {}): Promise<DeadItem[]> {
    const offset = checkInt("offset", options.offset ?? 0, 0, 100_000_000);
    const count = checkBatch("count", options.count ?? 100);
    await this.ready();
    const every: DeadItem[] = [];
    for (const q of this.shards) {
      const items: DeadItem[] = [];
      while (items.length < offset + count) {
        const size = Math.min(offset + count - items.length, MAX_BATCH);
        const page = await q.deadItems({ offset: items.length, count: size });
        items.push(...page);
        if (page.length < size) break;
      }
      every.push(...items);
    }
    every.sort((a, b) => b.deadAtMs - a.deadAtMs);
    return every.slice(offset, offset + count);
  }

  async deadItem(id: string): Promise<DeadItem | null> {
    idBytes(id);
    await this.ready();
    return this.shard(this.shardOf(id)).deadItem(id);
  }

  async requeueDead(ids: string[]): Promise<boolean[]> {
    checkArray<string>("ids", ids).forEach(idBytes);
    const done = await this.perShard(ids, (id) => id, (q, part) => q.requeueDead(part));
    await this.ring(done.filter(Boolean).length);
    return done;
  }

  async purgeDead(ids: string[]): Promise<boolean[]> {
    checkArray<string>("ids", ids).forEach(idBytes);
    return this.perShard(ids, (id) => id, (q, part) => q.purgeDead(part));
  }

  async trimDead(): Promise<number> {
    await this.ready();
    let total = 0;
    for (const q of this.shards) total += await q.trimDead();
    return total;
  }
}

function newToken(): string {
  return randomBytes(16).toString("hex");
}

function lost(id: string): LeaseLostError {
  return new LeaseLostError(`the lease on ${quote(id)} is no longer held by this caller`);
}

function itemId(it: string | Lease): string {
  return typeof it === "string" ? it : it.id;
}

/** Validates complete items before any I/O, as Queue would. */
function checkItems(items: unknown[], requireLease: boolean): void {
  for (const it of items) {
    if (requireLease) leaseParts(it);
    else idBytes(typeof it === "string" ? it : (it as Lease | null)?.id);
  }
}

