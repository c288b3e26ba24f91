/**
 * Queue: one RWQ/1 queue, identified by its key prefix, on an ioredis `Redis` or `Cluster`.
 * Every operation that writes is one call of a canonical Lua script (EVALSHA, then EVAL on
 * NOSCRIPT); this module validates arguments, runs the scripts and parses their replies.
 * Durations are integer milliseconds on the Redis server's clock.
 */
import { randomBytes, randomInt } from "node:crypto";
import { Cluster, type Redis } from "ioredis";
import { LeaseLostError, NotReplicatedError, RedisError, UnsupportedServerError, WrongTypeError, invalid, translate } from "./errors.js";
import { decodeId } from "./ids.js";
import { type Beat, type LiveWorker, beatReply, checkBeat, checkListing, checkWorkerId, listReply } from "./live.js";
import {
  type Fired, type Schedule, type ScheduleList, SCHEDULE_LIST_COUNT, type StoredSchedule, checkSchedule, checkScheduleName,
  definition, fireArgs, firedReply, listPage,
} from "./periodic.js";
import { type ScriptName, scripts } from "./scripts.js";
import { type QueueStats, statsReply } from "./stats.js";
import {
  type CleanReport, type Counts, DEFAULT_RETRY_POLICY, type DeadItem, type FailOptions, type FailResult,
  type Item, Lease, type Payload, type Outcome, type ReleaseOptions, type RetryPolicy, leaseParts, outcome,
} from "./types.js";
import {
  MAX_BATCH, MAX_DETAIL_BYTES, MAX_REASON_BYTES, checkArray, checkBatch, checkBool, checkDuration,
  checkInt, checkPrefix, checkShardForm, idBytes, newIdBytes, payload, quote,
} from "./validate.js";

/** An ioredis client: a `Redis` (standalone or Sentinel) or a `Cluster`. */
export type RedisClient = Redis | Cluster;
/** A script argument or key as sent: bytes, text or an integer. */
export type Arg = Buffer | string | number;
/** A reply as ioredis parses it with Buffer replies. */
export type Reply = Buffer | number | null | Reply[];

const MAX_BLOCK_STEP_MS = 1000;
/** Passed by ShardedQueue to open its shards, whose prefixes have the form {P#i}. */
export const SHARD: unique symbol = Symbol("rwq shard");
export const DEFAULT_LIGHT_CLEAN_CHUNK = 100;
export const DEFAULT_DEEP_CLEAN_CHUNK = 1000;

/** Options of a Queue; all default to off. */
export interface QueueOptions {
  /** Also write <prefix>:leased_by_session:<id>, for redis-work-queue 0.1.x fleets (RWQ-COMPAT-004). */
  legacyLeaseKey?: boolean;
  /** Keep leased ids in the sorted set <prefix>:in_flight (profile flat, SPEC §18). */
  flatInFlight?: boolean;
  /** Pass every key a script touches in KEYS (profile declared-keys, SPEC §20). */
  declaredKeys?: boolean;
  /** Wait for replicas after adds and completes (profile ack, SPEC §17). */
  ack?: { replicas: number; timeoutMs: number };
  /** Receives warnings about server settings; default: console.warn. */
  warn?: (message: string) => void;
}

/** Checks that client never re-sends a command whose reply was lost (RWQ-FAIL-004). */
export function checkNoResend(client: unknown): RedisClient {
  const isCluster = client instanceof Cluster;
  const opts = (isCluster ? (client as Cluster).options.redisOptions : (client as Redis | undefined)?.options) as
    | { autoResendUnfulfilledCommands?: boolean; maxRetriesPerRequest?: number | null }
    | undefined;
  if (!opts) throw invalid("an ioredis Redis or Cluster client is required");
  if (opts.autoResendUnfulfilledCommands !== false || opts.maxRetriesPerRequest !== 0) {
    throw invalid(
      "create the ioredis client with autoResendUnfulfilledCommands: false and maxRetriesPerRequest: 0 " +
        "(or use createClient): it re-sends a command whose reply was lost, so a script could run twice (RWQ-FAIL-004)",
    );
  }
  if (isCluster && (client as Cluster).options.retryDelayOnFailover !== 0) {
    throw invalid("create the ioredis Cluster with retryDelayOnFailover: 0: it re-sends a command whose connection closed (RWQ-FAIL-004)");
  }
  return client as RedisClient;
}

const ITEM_KINDS = ["item:", "lease:", "leased_by_session:"];
const WINDOW_AT: Record<string, number> = { lease: 3, light_clean: 5, deep_clean: 2 };
const ACKED = new Set<ScriptName>(["add", "complete", "complete_and_lease"]);

function toInt(v: Reply | undefined): number {
  return typeof v === "number" ? v : 0;
}
function toBuf(v: Reply | undefined): Buffer {
  return Buffer.isBuffer(v) ? v : Buffer.alloc(0);
}
function toIds(v: Reply | undefined): string[] {
  return Array.isArray(v) ? v.map((x) => decodeId(toBuf(x))) : [];
}
function argText(v: Arg | undefined): string {
  return Buffer.isBuffer(v) ? v.toString("latin1") : String(v);
}
function unexpected(what: string, reply: unknown): RedisError {
  return new RedisError(`unexpected ${what} reply: ${JSON.stringify(reply)?.slice(0, 200)}`);
}
function newToken(): string {
  return randomBytes(16).toString("hex");
}
function chunked<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
/** A single owner-checked outcome as a boolean, LEASE_LOST as an error. */
function owned(outcomes: Outcome[], id: string): boolean {
  if (outcomes[0] === "lease_lost") throw new LeaseLostError(`the lease on ${quote(id)} is no longer held by this caller`);
  return outcomes[0] === "done";
}

/** The ARGV positions of the ids a call names, per script (profile declared-keys). */
function namedIds(script: ScriptName, args: Arg[]): Arg[] {
  const every = (from: number, step: number) => args.filter((_, i) => i >= from && (i - from) % step === 0);
  const first = args.length > 0 ? argText(args[0]) : "";
  switch (script) {
    case "add": return every(1, 2);
    case "release": return first === "refund" ? every(2, 2) : every(1, 2);
    case "renew": return every(2, 2);
    case "claim": case "fail": return args.slice(0, 1);
    case "complete": return first === "owner" ? every(1, 2) : every(1, 1);
    case "complete_and_lease": return args.length > 5 && argText(args[5]) === "owner" ? every(6, 2) : every(6, 1);
    case "fire": return args.slice(2).map((slot) => `${first}@${argText(slot)}`); // name, digest, slots (SPEC §23)
    case "dead": case "deep_clean": return first === "requeue" ? every(1, 1) : [];
    default: return [];
  }
}

function windowKind(script: ScriptName, args: Arg[]): string {
  if (script === "lease" || script === "complete_and_lease") return "lease";
  if (script === "light_clean") return "light_clean";
  if (script === "deep_clean" && args.length > 1 && argText(args[0]) === "index") return `deep_clean:${argText(args[1])}`;
  return "";
}

/** One RWQ/1 queue. Safe for concurrent use; `new Queue` does no I/O. */
export class Queue {
  readonly prefix: string;
  readonly redis: RedisClient;
  private readonly queueKey: string;
  private readonly inflightKey: string;
  private readonly legacy: string;
  private readonly flat: string;
  private readonly declared: boolean;
  private readonly ack: { replicas: number; timeoutMs: number } | null;
  private readonly warn: (message: string) => void;
  private readonly windows = new Map<string, Buffer[]>();
  private checked: Promise<void> | null = null;
  private blockingClient: RedisClient | null = null;

  /**
   * The queue with the given key prefix on `redis`, which must not re-send commands
   * ({@link createClient} makes one). On a Cluster the prefix needs a hash tag ("{jobs}").
   * A prefix of the form {P#i} is shard i of a sharded queue and is refused (RWQ-KEYS-010).
   */
  constructor(redis: RedisClient, prefix: string, options: QueueOptions = {}, shard?: typeof SHARD) {
    if (shard !== SHARD) checkShardForm(typeof prefix === "string" ? prefix : "");
    this.redis = checkNoResend(redis);
    this.prefix = checkPrefix(prefix, redis instanceof Cluster);
    this.queueKey = `${prefix}:queue`;
    this.inflightKey = `${prefix}:processing`;
    this.legacy = options.legacyLeaseKey ? "1" : "0";
    this.flat = options.flatInFlight ? "1" : "0";
    this.declared = Boolean(options.declaredKeys);
    this.warn = options.warn ?? ((m) => console.warn(m));
    this.ack = null;
    if (options.ack) {
      const replicas = checkInt("ack.replicas", options.ack.replicas, 0, 1000);
      const timeoutMs = checkDuration("ack.timeoutMs", options.ack.timeoutMs, 1);
      if (replicas > 0) this.ack = { replicas, timeoutMs };
    }
  }

  /**
   * The connection blocking commands (BLMOVE, BLPOP) wait on: a duplicate of the client, made on
   * the first blocking lease, so that a wait of up to a second never holds up the other commands
   * of the queue's client (ioredis sends them all down one connection). Same options, same
   * connection name. close() closes it.
   */
  blocking(): RedisClient {
    if (this.blockingClient === null) {
      this.blockingClient = this.redis.duplicate();
      this.blockingClient.on("error", () => {}); // a failure reaches the waiting call
    }
    return this.blockingClient;
  }

  /** Closes the connection of blocking leases, if one was opened; the client stays open (it is yours). */
  async close(): Promise<void> {
    const c = this.blockingClient;
    this.blockingClient = null;
    c?.disconnect();
  }

  private both(): Arg[] {
    return [this.queueKey, this.inflightKey];
  }
  private one(): Arg[] {
    return [this.queueKey];
  }

  /** Refuses servers older than 6.2 and warns about an eviction policy (SPEC §11), once. */
  private check(): Promise<void> {
    this.checked ??= this.doCheck().catch((err: unknown) => {
      this.checked = null;
      throw err;
    });
    return this.checked;
  }

  private async doCheck(): Promise<void> {
    let info: string;
    try {
      // Through the cluster client itself on a cluster: its first command connects and loads
      // the slot map that node() reads.
      info = await (this.redis instanceof Cluster ? this.redis : this.node()).info("server");
    } catch (err) {
      if (isReplyError(err)) return; // INFO refused: version and policy unknown, go on
      throw translate(err);
    }
    const version = /redis_version:(\d+)\.(\d+)/.exec(info);
    if (!version) throw new RedisError("cannot read redis_version from INFO server");
    const major = Number(version[1]);
    const minor = Number(version[2]);
    if (major < 6 || (major === 6 && minor < 2)) {
      throw new UnsupportedServerError(`RWQ/1 needs Redis >= 6.2, the server is ${major}.${minor}`);
    }
    try {
      const memory = await this.node().info("memory");
      const policy = /maxmemory_policy:(\S+)/.exec(memory)?.[1];
      if (policy && policy !== "noeviction") {
        this.warn(`rwq: Redis maxmemory-policy is ${policy}, not noeviction: an evicted lease or item means a duplicate run or a lost item`);
      }
    } catch (err) {
      if (!isReplyError(err)) throw translate(err);
    }
  }

  /** Where keyless commands about the queue go: on a cluster, the master of its slot. */
  private node(): Redis {
    if (!(this.redis instanceof Cluster)) return this.redis;
    return masterFor(this.redis, this.queueKey);
  }

  /** Runs a canonical script; with declared keys, declares the call's keys and takes the window
   * out of a finding script's reply. */
  async eval(name: ScriptName, keys: Arg[], args: Arg[]): Promise<Reply> {
    if (!this.declared) return this.run(name, keys, args);
    const kind = windowKind(name, args);
    const window = kind ? (this.windows.get(kind) ?? []) : [];
    const reply = await this.run(name, this.declaredKeys(name, keys, args, window), args);
    if (!kind) return reply;
    const [rest, ids] = splitWindow(name, reply);
    this.windows.set(kind, ids);
    return rest;
  }

  private declaredKeys(name: ScriptName, keys: Arg[], args: Arg[], window: Buffer[]): Arg[] {
    const names = scripts[name].declared;
    const first = keys[0];
    if (names.length === 0 || typeof first !== "string" || !first.endsWith("queue")) return keys;
    const base = first.slice(0, -"queue".length);
    const out: Arg[] = [...keys, ...names.map((n) => base + n)];
    const seen = new Set<string>();
    for (const id of [...namedIds(name, args), ...window]) {
      const text = argText(id);
      if (seen.has(text)) continue;
      seen.add(text);
      const raw = Buffer.isBuffer(id) ? id : Buffer.from(String(id), "utf8");
      for (const kind of ITEM_KINDS) out.push(Buffer.concat([Buffer.from(base + kind, "utf8"), raw]));
    }
    return out;
  }

  /** Runs a script with exactly keys and args: EVALSHA, EVAL on NOSCRIPT (the script did not run). */
  private async run(name: ScriptName, keys: Arg[], args: Arg[]): Promise<Reply> {
    await this.check();
    const script = scripts[name];
    if (this.ack && ACKED.has(name)) return this.runAcked(name, keys, args);
    const r = this.redis as Redis;
    try {
      try {
        return (await r.callBuffer("EVALSHA", script.sha1, keys.length, ...keys, ...args)) as Reply;
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
        return (await r.callBuffer("EVAL", script.source, keys.length, ...keys, ...args)) as Reply;
      }
    } catch (err) {
      throw translate(err);
    }
  }

  /** Profile ack: the script, then WAIT on the same connection (RWQ-ACK-001). */
  private async runAcked(name: ScriptName, keys: Arg[], args: Arg[]): Promise<Reply> {
    const ack = this.ack!;
    const node = this.node();
    const script = scripts[name];
    let reply: Reply;
    let got: number;
    try {
      try {
        reply = (await node.callBuffer("EVALSHA", script.sha1, keys.length, ...keys, ...args)) as Reply;
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
        reply = (await node.callBuffer("EVAL", script.source, keys.length, ...keys, ...args)) as Reply;
      }
      got = Number(await node.call("WAIT", ack.replicas, ack.timeoutMs));
    } catch (err) {
      throw translate(err);
    }
    if (got < ack.replicas) {
      throw new NotReplicatedError(
        `${name}: ${got} of ${ack.replicas} replicas acknowledged the write within ${ack.timeoutMs} ms; it took effect on the primary, and a failover may lose it`,
      );
    }
    return reply;
  }

  private async ints(name: ScriptName, keys: Arg[], n: number, args: Arg[]): Promise<number[]> {
    const reply = await this.eval(name, keys, args);
    if (!Array.isArray(reply) || reply.length !== n || reply.some((x) => typeof x !== "number")) throw unexpected(name, reply);
    return reply as number[];
  }

  // ---- add ----

  /** Adds an item unless its id is known (live, delayed or dead); true when this call created it.
   * `delayMs` (profile delay) makes it ready that long after now. */
  async add(id: string, data: Payload, options: { delayMs?: number } = {}): Promise<boolean> {
    const [added] = await this.addMany([{ id, data }], options);
    return added ?? false;
  }

  /** Adds items, one round trip per 1000; one added-flag per item, in order. */
  async addMany(items: Item[], options: { delayMs?: number } = {}): Promise<boolean[]> {
    const delayMs = checkDuration("delay_ms", options.delayMs ?? 0, 0);
    const parts = checkArray<Item>("items", items).map((it) => {
      if (typeof it !== "object" || it === null) throw invalid("each item must be {id, data}");
      return [newIdBytes(it.id), payload(it.data)] as const;
    });
    const added: boolean[] = [];
    for (const part of chunked(parts, MAX_BATCH)) {
      const flags = await this.ints("add", this.one(), part.length, [delayMs, ...part.flat()]);
      added.push(...flags.map((f) => f === 1));
    }
    return added;
  }

  // ---- lease ----

  /**
   * Leases the oldest ready item for leaseMs; null when none is ready. With `block`, waits up to
   * `timeoutMs` on the server's clock (0: no limit) in steps of at most a second; `signal` ends
   * the wait between steps (null is returned).
   */
  async lease(leaseMs: number, options: { block?: boolean; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Lease | null> {
    checkDuration("lease_ms", leaseMs, 1);
    const block = checkBool("block", options.block ?? false);
    const timeoutMs = checkDuration("timeout_ms", options.timeoutMs ?? 0, 0);
    if (!block && timeoutMs !== 0) throw invalid("timeout_ms needs block: a non-blocking lease does not wait (RWQ-LEASE-014)");
    const token = newToken();
    if (!block) return (await this.leaseCalls(token, leaseMs, 1)).leases[0] ?? null;
    return this.leaseBlocking(token, leaseMs, timeoutMs, options.signal);
  }

  /** Leases up to count (1..1000) ready items under one token, without waiting. */
  async leaseMany(options: { count: number; leaseMs: number }): Promise<Lease[]> {
    checkDuration("lease_ms", options.leaseMs, 1);
    checkBatch("count", options.count);
    return (await this.leaseCalls(newToken(), options.leaseMs, options.count)).leases;
  }

  /** Non-blocking lease calls under token until count are leased or a reply says again = 0
   * (RWQ-LEASE-007): the leases, the server's time and the ms until the next delayed item is due. */
  async leaseCalls(token: string, leaseMs: number, count: number): Promise<{ leases: Lease[]; now: number; dueIn: number }> {
    const leases: Lease[] = [];
    for (;;) {
      const reply = await this.eval("lease", this.both(), [leaseMs, token, count - leases.length, this.legacy, this.flat]);
      const r = parseLease("lease", reply, token);
      leases.push(...r.leases);
      if (leases.length >= count || r.again !== 1) return { leases, now: r.now, dueIn: r.dueIn };
    }
  }

  private async leaseBlocking(token: string, leaseMs: number, timeoutMs: number, signal?: AbortSignal): Promise<Lease | null> {
    let deadline = -1;
    for (;;) {
      if (signal?.aborted) return null;
      const { leases, now, dueIn } = await this.leaseCalls(token, leaseMs, 1);
      if (leases[0]) return leases[0];
      if (deadline < 0 && timeoutMs > 0) deadline = now + timeoutMs;
      let wait = MAX_BLOCK_STEP_MS;
      if (deadline >= 0) {
        if (now >= deadline) return null;
        wait = Math.min(wait, deadline - now);
      }
      if (dueIn >= 0) wait = Math.max(Math.min(wait, dueIn), 1);
      if (signal?.aborted) return null;
      let moved: Buffer | null;
      try {
        moved = await (this.blocking() as Redis).blmoveBuffer(this.queueKey, this.inflightKey, "RIGHT", "LEFT", wait / 1000);
      } catch (err) {
        throw translate(err);
      }
      if (moved === null) continue;
      const claimed = await this.eval("claim", this.both(), [moved, leaseMs, token, this.legacy, this.flat]);
      if (Array.isArray(claimed) && claimed.length === 3 && claimed[0] === 1) {
        return new Lease(decodeId(moved), toBuf(claimed[1]), token, toInt(claimed[2]));
      }
    }
  }

  // ---- renew ----

  /** Extends a held lease to leaseMs from now; false when it was lost (stop working on the item). */
  async renew(lease: Lease, leaseMs: number): Promise<boolean> {
    return (await this.renewMany([lease], leaseMs))[0] ?? false;
  }

  /** Renews many leases, one round trip per 1000; false where the lease was lost. */
  async renewMany(leases: Lease[], leaseMs: number): Promise<boolean[]> {
    checkDuration("lease_ms", leaseMs, 1);
    const pairs = checkArray<Lease>("leases", leases).map(leaseParts);
    const out: boolean[] = [];
    for (const part of chunked(pairs, MAX_BATCH)) {
      const flags = await this.ints("renew", this.one(), part.length, [leaseMs, this.legacy, ...part.flat()]);
      out.push(...flags.map((f) => f === 1));
    }
    return out;
  }

  // ---- complete ----

  /**
   * Completes an item: by id (whoever holds it; a delayed item is cancelled), or by lease. With
   * `requireLease` only while the caller holds the lease (a Lease is needed; LeaseLostError
   * otherwise). True for the item's first completer only.
   */
  async complete(item: string | Lease, options: { requireLease?: boolean } = {}): Promise<boolean> {
    const outcomes = await this.completeMany([item], options);
    return owned(outcomes, typeof item === "string" ? item : item.id);
  }

  /** Completes many items, one round trip per 1000: an outcome per item, in order. */
  async completeMany(items: (string | Lease)[], options: { requireLease?: boolean } = {}): Promise<Outcome[]> {
    const [head, step, args] = completeArgs(checkArray("items", items), options.requireLease ?? false);
    return this.outcomes("complete", head, step, args);
  }

  /**
   * Completes 1..1000 items (as completeMany), then leases up to count (1..1000, default 1) ready
   * items for leaseMs under one new token, in one script call (SPEC §6.13): a worker handling
   * items one after another pays one round trip per item. Lost leases are outcomes, never errors.
   */
  async completeAndLease(
    items: (string | Lease)[],
    options: { leaseMs: number; count?: number; requireLease?: boolean },
  ): Promise<{ outcomes: Outcome[]; leases: Lease[] }> {
    const [mode, step, args] = completeArgs(checkArray("items", items), options.requireLease ?? false);
    const n = args.length / step;
    checkBatch("items", n);
    const count = checkBatch("count", options.count ?? 1);
    const leaseMs = checkDuration("lease_ms", options.leaseMs, 1);
    const token = newToken();
    const reply = await this.eval("complete_and_lease", this.both(), [leaseMs, token, count, this.legacy, this.flat, ...mode, ...args]);
    if (!Array.isArray(reply) || reply.length !== 2 || !Array.isArray(reply[0]) || reply[0].length !== n) {
      throw unexpected("complete_and_lease", reply);
    }
    const outcomes = reply[0].map(outcome);
    const r = parseLease("complete_and_lease", reply[1], token);
    if (r.leases.length < count && r.again === 1) {
      const more = await this.leaseCalls(token, leaseMs, count - r.leases.length);
      r.leases.push(...more.leases);
    }
    return { outcomes, leases: r.leases };
  }

  // ---- release ----

  /** Gives a held item back: true when released, false when the item was gone, LeaseLostError
   * when the caller does not hold the lease. */
  async release(lease: Lease, options: ReleaseOptions = {}): Promise<boolean> {
    return owned(await this.releaseMany([lease], options), lease instanceof Lease ? lease.id : "");
  }

  /** Releases many held items, one round trip per 1000: an outcome per lease. */
  async releaseMany(leases: Lease[], options: ReleaseOptions = {}): Promise<Outcome[]> {
    const head = releaseHead(options);
    const pairs = checkArray<Lease>("leases", leases).map(leaseParts);
    return this.outcomes("release", head, 2, pairs.flat());
  }

  private async outcomes(script: ScriptName, head: Arg[], step: number, args: Arg[]): Promise<Outcome[]> {
    const out: Outcome[] = [];
    for (const part of chunked(args, MAX_BATCH * step)) {
      const codes = await this.ints(script, this.both(), part.length / step, [...head, ...part]);
      out.push(...codes.map(outcome));
    }
    return out;
  }

  // ---- counts and cleaning ----

  /** The ready, in-flight, delayed and dead counts, read at one instant. */
  async counts(): Promise<Counts> {
    const [queued, processing, delayed, dead] = await this.ints("counts", this.both(), 4, []);
    return { queued: queued!, processing: processing!, delayed: delayed!, dead: dead! };
  }

  /**
   * Requeues abandoned items (lease expired) and drops ghost entries, chunk (1..1000) entries per
   * script call until the whole list was seen; then applies the dead-letter retention. With
   * `paceMs`, does nothing when another paced clean started within paceMs (RWQ-CLEAN-007).
   */
  async lightClean(options: { chunk?: number; paceMs?: number } = {}): Promise<CleanReport> {
    const chunk = checkBatch("chunk", options.chunk ?? DEFAULT_LIGHT_CLEAN_CHUNK);
    const paceMs = checkDuration("pace_ms", options.paceMs ?? 0, 0);
    const report: CleanReport = { requeued: [], dropped: 0, dead: [], promoted: 0 };
    for (let cursor = 0, first = true; ; first = false) {
      const args: Arg[] = paceMs > 0 && first ? [cursor, chunk, paceMs] : [cursor, chunk];
      const reply = await this.eval("light_clean", this.both(), args);
      if (!Array.isArray(reply) || reply.length !== 5) throw unexpected("light_clean", reply);
      cursor = toInt(reply[0]);
      report.requeued.push(...toIds(reply[1]));
      report.dropped += toInt(reply[2]);
      report.dead.push(...toIds(reply[3]));
      report.promoted += toInt(reply[4]);
      if (cursor < 0) break;
    }
    await this.trimDead();
    return report;
  }

  /** Requeues orphans found with SCAN and drops ghost ids from both lists; chunk (1..1000) is
   * the entries per script call and the SCAN COUNT. Rare maintenance, run by one process. */
  async deepClean(options: { chunk?: number } = {}): Promise<CleanReport> {
    const chunk = checkBatch("chunk", options.chunk ?? DEFAULT_DEEP_CLEAN_CHUNK);
    const keys: Arg[] = [...this.both(), `${this.prefix}:deep_clean:${newToken().slice(0, 16)}`];
    let report: CleanReport | undefined;
    let failure: unknown;
    try {
      report = await this.deepCleanRun(keys, chunk);
    } catch (err) {
      if (!(err instanceof WrongTypeError)) throw err;
      failure = err;
    }
    // A refused run still ends with finish, which checks only the index's type (RWQ-DEEP-005).
    try {
      await this.eval("deep_clean", keys, ["finish"]);
    } catch (err) {
      if (failure === undefined) throw err;
    }
    if (failure !== undefined) throw failure;
    return report!;
  }

  private async deepCleanRun(keys: Arg[], chunk: number): Promise<CleanReport> {
    const report: CleanReport = { requeued: [], dropped: 0, dead: [], promoted: 0 };
    await this.check();
    const node = this.node(); // SCAN goes to the node of the queue's slot (RWQ-CLUSTER-002)
    const itemPrefix = Buffer.from(`${this.prefix}:item:`, "utf8");
    const scan = async (cursor: string): Promise<[string, Buffer[]]> => {
      try {
        // Only strings are items: a nested queue's lists and hashes are not (RWQ-KEYS-009).
        const [next, found] = await node.scanBuffer(cursor, "MATCH", `${this.prefix}:item:*`, "COUNT", chunk, "TYPE", "string");
        return [String(next), found];
      } catch (err) {
        throw translate(err);
      }
    };
    // The first SCAN page comes before the index, so a refused deep clean writes nothing (RWQ-SEC-006).
    let [next, found] = await scan("0");
    for (const list of ["queue", "processing"]) {
      for (let start = 0; start >= 0; ) {
        const reply = await this.eval("deep_clean", keys, ["index", list, start, chunk]);
        if (!Array.isArray(reply) || reply.length !== 2) throw unexpected("deep_clean", reply);
        start = toInt(reply[0]);
        report.dropped += toInt(reply[1]);
      }
    }
    for (;;) {
      // Ids longer than RWQ/1 allows (older clients have no limit) are left alone.
      const ids = found.map((key) => key.subarray(itemPrefix.length)).filter((id) => id.length > 0 && id.length <= 512);
      for (const part of chunked(ids, chunk)) {
        report.requeued.push(...toIds(await this.eval("deep_clean", keys, ["requeue", ...part])));
      }
      if (next === "0") break;
      [next, found] = await scan(next);
    }
    return report;
  }

  // ---- profile retry ----

  /** Stores the queue's retry policy (fields left out take DEFAULT_RETRY_POLICY's); null removes it. */
  async setRetryPolicy(policy: Partial<RetryPolicy> | null): Promise<void> {
    await this.eval("set_policy", this.one(), policy === null ? ["clear"] : policyArgs(policy));
  }

  /** Stores policy only if the queue has none, in one script call: true if stored (RWQ-RETRY-015). */
  async setRetryPolicyIfAbsent(policy: Partial<RetryPolicy>): Promise<boolean> {
    if (policy === null || typeof policy !== "object") throw invalid("setRetryPolicyIfAbsent needs a policy");
    return toInt(await this.eval("set_policy", this.one(), ["default", ...policyArgs(policy)])) === 1;
  }

  /** The queue's retry policy, read as the scripts read it; null when it has none. */
  async getRetryPolicy(): Promise<RetryPolicy | null> {
    await this.check();
    let raw: Record<string, string>;
    try {
      raw = await this.redis.hgetall(`${this.prefix}:policy`);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith("WRONGTYPE")) {
        throw new WrongTypeError(`${this.prefix}:policy holds another Redis type than SPEC 3 gives it`);
      }
      throw translate(err);
    }
    if (Object.keys(raw).length === 0) return null;
    return {
      maxAttempts: storedInt(raw.max_attempts),
      backoff: raw.backoff === "exponential" ? "exponential" : "fixed",
      baseMs: storedInt(raw.base_ms),
      capMs: storedInt(raw.cap_ms),
      jitterPct: storedInt(raw.jitter_pct),
      deadMaxCount: storedInt(raw.dead_max_count),
      deadMaxAgeMs: storedInt(raw.dead_max_age_ms),
    };
  }

  /**
   * Records a failed attempt by the lease holder: retried after the policy's backoff, or
   * dead-lettered when its attempts are used up (without a policy: released after
   * fallbackDelayMs). LeaseLostError when the lease is not held.
   */
  async fail(lease: Lease, options: FailOptions = {}): Promise<FailResult> {
    const [id, token] = leaseParts(lease);
    const reason = options.reason ?? "";
    const tail = failArgs(reason, options);
    const [code, delayMs] = await this.ints("fail", this.both(), 2, [id, token, reason, randomInt(1_000_000), ...tail]);
    if (code === 2) await this.trimDead();
    if (code !== 0 && code !== 1 && code !== 2) throw new LeaseLostError(`the lease on ${quote(lease.id)} is no longer held by this caller`);
    return { outcome: code === 1 ? "retry" : code === 2 ? "dead" : "gone", delayMs: delayMs! };
  }

  /** Dead-lettered items, newest first, without payloads; offset 0..1e8, count 1..1000. */
  async deadItems(options: { offset?: number; count?: number } = {}): Promise<DeadItem[]> {
    const offset = checkInt("offset", options.offset ?? 0, 0, 100_000_000);
    const count = checkBatch("count", options.count ?? 100);
    const reply = await this.eval("dead", this.one(), ["list", offset, count]);
    return (Array.isArray(reply) ? reply : []).map(deadItem);
  }

  /** One dead-lettered item with its payload; null when the id is not dead. */
  async deadItem(id: string): Promise<DeadItem | null> {
    const reply = await this.eval("dead", this.one(), ["get", idBytes(id)]);
    return reply === null ? null : deadItem(reply);
  }

  /** Turns dead items back into ready items, attempts reset; false where not dead or live again. */
  async requeueDead(ids: string[]): Promise<boolean[]> {
    return this.deadAction("requeue", ids);
  }

  /** Deletes dead items for good; false where the id is not dead. */
  async purgeDead(ids: string[]): Promise<boolean[]> {
    return this.deadAction("purge", ids);
  }

  private async deadAction(action: string, ids: string[]): Promise<boolean[]> {
    const raw = checkArray<string>("ids", ids).map(idBytes);
    const out: boolean[] = [];
    for (const part of chunked(raw, MAX_BATCH)) {
      out.push(...(await this.ints("dead", this.one(), part.length, [action, ...part])).map((f) => f === 1));
    }
    return out;
  }

  // ---- profile workers (SPEC §21) ----

  /** Registers or refreshes worker `id` until the server's now plus `ttlMs` (1000..3600000), with
   * its record (a JSON object of at most 4096 bytes), in one script call (RWQ-LIVE-002). */
  async workerBeat(id: string, ttlMs: number, record: Record<string, unknown>): Promise<Beat> {
    const [wid, ttl, raw] = checkBeat(id, ttlMs, record);
    return beatReply(await this.eval("heartbeat", this.one(), ["beat", wid, ttl, raw]));
  }

  /** Removes worker `id`'s entry (a graceful stop); false when it had none. */
  async workerLeave(id: string): Promise<boolean> {
    const reply = await this.eval("heartbeat", this.one(), ["leave", checkWorkerId(id)]);
    return reply === 1;
  }

  /** The live workers, earliest deadline first (RWQ-LIVE-003). */
  async workers(options: { offset?: number; count?: number } = {}): Promise<LiveWorker[]> {
    const [offset, count] = checkListing(options);
    return listReply(await this.eval("heartbeat", this.one(), ["list", offset, count]));
  }

  // ---- profile stats (SPEC §22) ----

  /** Turns the queue's statistics on (an admin's job): from now on the scripts count its events
   * per minute. False when they were on already (their `sinceMs` is kept). */
  async enableStats(): Promise<boolean> {
    return (await this.eval("stats", this.one(), ["enable"])) === 1;
  }

  /** Turns the queue's statistics off and deletes its counts; false when they were off. */
  async disableStats(): Promise<boolean> {
    return (await this.eval("stats", this.one(), ["disable"])) === 1;
  }

  /** The queue's statistics from one script call (RWQ-STATS-006): per counter, the current
   * minute's count and the last 1, 5, 15 and 60 complete minutes', with rates. WrongTypeError
   * when either stats key holds another Redis type. */
  async stats(): Promise<QueueStats> {
    return statsReply(await this.eval("stats", this.one(), ["read"]));
  }

  // ---- profile periodic (SPEC §23) ----

  /** Creates or replaces schedule `name` with the payload of every item it adds; true when it was
   * created (its watermark is then the server's now: its first slot is its first after the
   * call). Replacing keeps the watermark (RWQ-SCHED-013). */
  async putSchedule(name: string, schedule: Schedule, data: Payload = ""): Promise<boolean> {
    const args = ["put", checkScheduleName(name), definition(checkSchedule(schedule)), payload(data)];
    const reply = await this.eval("schedule", this.one(), args);
    if (!Array.isArray(reply) || reply.length !== 2) throw unexpected("schedule put", reply);
    return reply[0] === 1;
  }

  /** Removes a schedule (the items it added stay); false when there was none. */
  async removeSchedule(name: string): Promise<boolean> {
    return (await this.eval("schedule", this.one(), ["remove", checkScheduleName(name)])) === 1;
  }

  /** Pauses a schedule; false when there is none or it is paused already. */
  async pauseSchedule(name: string): Promise<boolean> {
    return (await this.eval("schedule", this.one(), ["pause", checkScheduleName(name)])) === 1;
  }

  /** Resumes a paused schedule: no slot of the pause fires (RWQ-SCHED-014); false when it was not paused. */
  async resumeSchedule(name: string): Promise<boolean> {
    return (await this.eval("schedule", this.one(), ["resume", checkScheduleName(name)])) === 1;
  }

  /** Every schedule of the queue by name, with the server's now of the last page read. */
  async schedules(): Promise<ScheduleList> {
    const found = new Map<string, StoredSchedule>();
    let cursor = "0";
    let nowMs = 0;
    do {
      let rows: StoredSchedule[];
      [nowMs, cursor, rows] = listPage(await this.eval("schedule", this.one(), ["list", cursor, SCHEDULE_LIST_COUNT]));
      for (const row of rows) found.set(row.name, row);
    } while (cursor !== "0");
    return { nowMs, schedules: [...found.keys()].sort().map((name) => found.get(name)!) };
  }

  /** Fires `slots` (1..100, strictly ascending, 0..10^15) of schedule `name`, computed from the
   * definition whose SHA1 is `digest`, in one script call (RWQ-SCHED-008, -009). A call whose
   * reply was lost is a RedisError and is not sent again (RWQ-SCHED-011). */
  async fire(name: string, digest: string, slots: number[]): Promise<Fired> {
    const [n, d, ...checked] = fireArgs(name, digest, slots);
    return firedReply(n, checked, await this.eval("fire", this.one(), [n, d, ...checked]));
  }

  /** Applies the policy's dead-letter retention; how many dead items it removed. */
  async trimDead(): Promise<number> {
    let total = 0;
    for (;;) {
      const [n] = await this.ints("dead", this.one(), 2, ["trim"]);
      total += n!;
      if (n! < 1000) return total;
    }
  }
}

/** The master of key's slot, from the Cluster's slot map (the cluster client itself would
 * re-route a keyless command to a random node). */
export function masterFor(cluster: Cluster, key: string): Redis {
  const owner = (cluster as unknown as { slots: string[][] }).slots[clusterSlot(key)]?.[0];
  const pool = (cluster as unknown as {
    connectionPool: { getInstanceByKey(k: string): Redis | undefined; findOrCreate(n: { host: string; port: number }): Redis };
  }).connectionPool;
  if (!owner) throw new RedisError(`no known master serves the slot of ${quote(key)} yet`);
  // A node whose connection ended leaves the pool; the cluster client would reconnect it on its
  // next command to that slot, and so does this.
  const at = owner.lastIndexOf(":");
  return pool.getInstanceByKey(owner) ?? pool.findOrCreate({ host: owner.slice(0, at), port: Number(owner.slice(at + 1)) });
}

const crcTable = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

/** The Redis Cluster hash slot of a key (CRC16 of its hash tag, or of the whole key). */
export function clusterSlot(key: string): number {
  let bytes = Buffer.from(key, "utf8");
  const start = bytes.indexOf(0x7b);
  if (start >= 0) {
    const end = bytes.indexOf(0x7d, start + 1);
    if (end > start + 1) bytes = bytes.subarray(start + 1, end);
  }
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ crcTable[((crc >> 8) ^ b) & 0xff]!;
  return crc % 16384;
}

function isReplyError(err: unknown): boolean {
  return err instanceof Error && err.name === "ReplyError";
}

interface LeaseReply {
  again: number;
  now: number;
  dueIn: number;
  leases: Lease[];
}

/** Reads a lease reply: [again, now_ms, due_in_ms, [id, payload, attempt], ...]. */
function parseLease(script: string, reply: Reply | undefined, token: string): LeaseReply {
  if (!Array.isArray(reply) || reply.length < 3) throw unexpected(script, reply);
  const leases = reply.slice(3).map((e) => {
    if (!Array.isArray(e) || e.length !== 3) throw unexpected(script, reply);
    return new Lease(decodeId(toBuf(e[0])), toBuf(e[1]), token, toInt(e[2]));
  });
  return { again: toInt(reply[0]), now: toInt(reply[1]), dueIn: toInt(reply[2]), leases };
}

/** Takes the window out of a declared finding call's reply (RWQ-DECL-003). */
function splitWindow(script: ScriptName, reply: Reply): [Reply, Buffer[]] {
  if (script === "complete_and_lease") {
    if (!Array.isArray(reply) || reply.length !== 2) throw unexpected(script, reply);
    const [leased, window] = splitWindow("lease", reply[1]!);
    return [[reply[0]!, leased], window];
  }
  const at = WINDOW_AT[script];
  if (at === undefined || !Array.isArray(reply) || reply.length <= at || !Array.isArray(reply[at])) throw unexpected(script, reply);
  const window = (reply[at] as Reply[]).map(toBuf);
  return [[...reply.slice(0, at), ...reply.slice(at + 1)], window];
}

/** A complete call's mode and items: ["any"], 1, ids or ["owner"], 2, id/token pairs. */
function completeArgs(items: unknown[], requireLease: boolean): [Arg[], number, Arg[]] {
  if (checkBool("require_lease", requireLease)) return [["owner"], 2, items.map(leaseParts).flat()];
  return [["any"], 1, items.map((it) => idBytes(it instanceof Lease ? it.id : it))];
}

function releaseHead(options: ReleaseOptions): Arg[] {
  const delayMs = checkDuration("delay_ms", options.delayMs ?? 0, 0);
  return checkBool("refund_attempt", options.refundAttempt ?? false) ? ["refund", delayMs] : [delayMs];
}
export { releaseHead as checkReleaseOptions };

const POLICY_LIMITS: [keyof RetryPolicy, string, number][] = [
  ["maxAttempts", "max_attempts", 1_000_000],
  ["baseMs", "base_ms", 31_536_000_000],
  ["capMs", "cap_ms", 31_536_000_000],
  ["jitterPct", "jitter_pct", 100],
  ["deadMaxCount", "dead_max_count", 100_000_000],
  ["deadMaxAgeMs", "dead_max_age_ms", 31_536_000_000],
];

/** Validates a policy (missing fields take the default's) and returns its seven script arguments. */
export function policyArgs(partial: Partial<RetryPolicy>): Arg[] {
  if (partial === null || typeof partial !== "object") throw invalid("a policy must be an object");
  const p = { ...DEFAULT_RETRY_POLICY, ...partial };
  if (p.backoff !== "fixed" && p.backoff !== "exponential") throw invalid(`backoff must be fixed or exponential, got ${quote(String(p.backoff))}`);
  for (const [field, name, hi] of POLICY_LIMITS) checkInt(name, p[field], 0, hi);
  return [p.maxAttempts, p.backoff, p.baseMs, p.capMs, p.jitterPct, p.deadMaxCount, p.deadMaxAgeMs];
}

/** Validates fail's reason and options; the fail script's ARGV 5..7. */
export function failArgs(reason: unknown, o: FailOptions): Arg[] {
  if (typeof reason !== "string" || Buffer.byteLength(reason) > MAX_REASON_BYTES) throw invalid(`reason must be a string of at most ${MAX_REASON_BYTES} bytes`);
  const detail = o.detail ?? "";
  if (typeof detail !== "string" || Buffer.byteLength(detail) > MAX_DETAIL_BYTES) throw invalid(`detail must be a string of at most ${MAX_DETAIL_BYTES} bytes`);
  const fallback = checkDuration("fallback_delay_ms", o.fallbackDelayMs ?? 0, 0);
  const dead = checkBool("dead", o.dead ?? false);
  if (dead && o.delayMs !== undefined) throw invalid("dead and delayMs exclude each other: a dead item is not retried");
  if (dead) return ["dead", 0, detail];
  if (o.delayMs !== undefined) return ["delay", checkDuration("delay_ms", o.delayMs, 0), detail];
  return ["backoff", fallback, detail];
}

/** A number as the scripts read it: ASCII digits up to 10^15, else 0 (RWQ-RETRY-014). */
function storedInt(s: string | undefined): number {
  if (!s || !/^[0-9]+$/.test(s)) return 0;
  const n = Number(s);
  return n > 1e15 ? 0 : n;
}

function deadItem(raw: Reply): DeadItem {
  if (!Array.isArray(raw) || raw.length < 3) throw unexpected("dead", raw);
  // Info written by any client is read field by field, never as an error that would hide the
  // dead set (RWQ-RETRY-009): not a JSON object reads as {}, a field of another type as empty.
  let info: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(toBuf(raw[2]).toString("utf8"));
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) info = parsed as Record<string, unknown>;
  } catch {
    // not JSON: every field reads as empty
  }
  const { reason, attempts, detail } = info;
  const item: DeadItem = {
    id: decodeId(toBuf(raw[0])),
    deadAtMs: toInt(raw[1]),
    reason: typeof reason === "string" ? reason : "",
    attempts: Number.isSafeInteger(attempts) && (attempts as number) >= 0 ? (attempts as number) : 0,
    detail: typeof detail === "string" ? detail : "",
  };
  if (raw.length > 3) item.data = toBuf(raw[3]);
  return item;
}

