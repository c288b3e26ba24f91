#!/usr/bin/env node
/** The conformance adapter of the TypeScript client (conformance/PROTOCOL.md, protocol 1): NDJSON
 * requests on stdin, one reply line each on stdout. It only maps JSON to the package's calls. */
import { createInterface } from "node:readline";
import {
  Lease, Queue, RwqError, Scheduler, ShardedQueue, VERSION, createClient, idFromBytes, idToBytes, nextSlots, scriptSha1s,
  type CleanReport, type StoredSchedule, type DeadItem, type Outcome, type RetryPolicy,
} from "@rwq-protocol/rwq";

type Json = any; // JSON as the runner sends it
type AnyQueue = Queue | ShardedQueue;

class BadRequest extends Error {}
class Unsupported extends Error {}

/** Bytes values: {"utf8": s} or {"base64": s}; ids become strings (bytes that are not UTF-8 as
 * escaped surrogates, the library's encoding), payloads Buffers. */
function bytes(v: Json): Buffer {
  if (v && typeof v.utf8 === "string") return Buffer.from(v.utf8, "utf8");
  if (v && typeof v.base64 === "string") return Buffer.from(v.base64, "base64");
  throw new BadRequest(`not a bytes value: ${JSON.stringify(v)}`);
}
const id = (v: Json): string => (v && typeof v.utf8 === "string" ? v.utf8 : idFromBytes(bytes(v)));
function jbytes(b: Buffer | string): Json {
  const raw = typeof b === "string" ? idToBytes(b) : b;
  const text = raw.toString("utf8");
  return Buffer.from(text, "utf8").equals(raw) ? { utf8: text } : { base64: raw.toString("base64") };
}
const lease = (l: Json): Lease => new Lease(id(l.id), Buffer.alloc(0), l.token, l.attempt ?? 0);
const leaseJSON = (l: Lease | null | undefined): Json =>
  l ? { id: jbytes(l.id), data: jbytes(l.data), token: l.token, attempt: l.attempt } : null;
const target = (p: Json): string | Lease => {
  if ((p.id === undefined) === (p.lease === undefined)) throw new BadRequest("complete takes exactly one of id and lease");
  return p.lease !== undefined ? lease(p.lease) : id(p.id);
};
const clean = (r: CleanReport): Json => ({ requeued: r.requeued.map(jbytes), dropped: r.dropped, dead: r.dead.map(jbytes), promoted: r.promoted });
const dead = (d: DeadItem): Json => ({
  id: jbytes(d.id), dead_at_ms: d.deadAtMs, reason: d.reason, attempts: d.attempts, detail: d.detail,
  ...(d.data ? { data: jbytes(d.data) } : {}),
});
const POLICY: [keyof RetryPolicy, string][] = [
  ["maxAttempts", "max_attempts"], ["backoff", "backoff"], ["baseMs", "base_ms"], ["capMs", "cap_ms"],
  ["jitterPct", "jitter_pct"], ["deadMaxCount", "dead_max_count"], ["deadMaxAgeMs", "dead_max_age_ms"],
];
const policyIn = (p: Json): Partial<RetryPolicy> | null =>
  p === null || p === undefined ? null : Object.fromEntries(POLICY.filter(([, s]) => s in p).map(([c, s]) => [c, p[s]]));
const policyOut = (p: RetryPolicy | null): Json => (p ? Object.fromEntries(POLICY.map(([c, s]) => [s, p[c]])) : null);
const SCHEDULE = [["every_ms", "everyMs"], ["offset_ms", "offsetMs"], ["cron", "cron"], ["tz", "tz"], ["missed", "missed"], ["grace_ms", "graceMs"]];
/** A schedule object in the library's names; anything else as it is (the library refuses it). */
const scheduleIn = (s: Json): Json =>
  s === null || typeof s !== "object" || Array.isArray(s) ? s : Object.fromEntries(SCHEDULE.filter(([j]) => j! in s).map(([j, c]) => [c, s[j!]]));
const readable = (s: StoredSchedule): Json => {
  try {
    return (s.schedule(), JSON.parse(s.definition.toString("utf8")));
  } catch {
    return null; // the library cannot read it
  }
};
const plain = (q: AnyQueue): Queue => {
  if (q instanceof Queue) return q;
  throw new Unsupported("periodic on a sharded session");
};
const schedulers = new WeakMap<Queue, Scheduler>(); // one per session, dropped with it
const stderr = (m: string) => process.stderr.write(`${m}\n`);
/** Optional params left out by a case stay out of the library call (its default applies). */
const opt = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const methods: Record<string, (q: AnyQueue, p: Json) => Promise<Json>> = {
  add: (q, p) => q.add(id(p.id), bytes(p.data), opt({ delayMs: p.delay_ms })),
  add_many: (q, p) => q.addMany((p.items ?? []).map((it: Json) => ({ id: id(it.id), data: bytes(it.data) })), opt({ delayMs: p.delay_ms })),
  lease: async (q, p) => leaseJSON(await q.lease(p.lease_ms, opt({ block: p.block, timeoutMs: p.timeout_ms }))),
  lease_many: async (q, p) => (await q.leaseMany({ count: p.count, leaseMs: p.lease_ms })).map(leaseJSON),
  renew: (q, p) => q.renew(lease(p.lease), p.lease_ms),
  renew_many: (q, p) => q.renewMany((p.leases ?? []).map(lease), p.lease_ms),
  complete: (q, p) => q.complete(target(p), opt({ requireLease: p.require_lease })),
  complete_many: (q, p) => q.completeMany((p.items ?? []).map(target), opt({ requireLease: p.require_lease })),
  complete_and_lease: async (q, p) => {
    const r = await q.completeAndLease((p.items ?? []).map(target), opt({ leaseMs: p.lease_ms, count: p.count, requireLease: p.require_lease }));
    return { outcomes: r.outcomes satisfies Outcome[], leases: r.leases.map(leaseJSON) };
  },
  release: (q, p) => q.release(lease(p.lease), opt({ delayMs: p.delay_ms, refundAttempt: p.refund_attempt })),
  release_many: (q, p) => q.releaseMany((p.leases ?? []).map(lease), opt({ delayMs: p.delay_ms, refundAttempt: p.refund_attempt })),
  counts: (q) => q.counts(),
  light_clean: async (q, p) => clean(await q.lightClean(opt({ chunk: p.chunk, paceMs: p.pace_ms }))),
  deep_clean: async (q, p) => clean(await q.deepClean(opt({ chunk: p.chunk }))),
  fail: async (q, p) => {
    const r = await q.fail(lease(p.lease), opt({ reason: p.reason, dead: p.dead, delayMs: p.delay_ms, fallbackDelayMs: p.fallback_delay_ms, detail: p.detail }));
    return { outcome: r.outcome, delay_ms: r.delayMs };
  },
  set_policy: async (q, p) => (await q.setRetryPolicy(policyIn(p.policy)), {}),
  set_policy_if_absent: (q, p) => q.setRetryPolicyIfAbsent(policyIn(p.policy) as Partial<RetryPolicy>),
  get_policy: async (q) => policyOut(await q.getRetryPolicy()),
  dead_list: async (q, p) => (await q.deadItems(opt({ offset: p.offset, count: p.count }))).map(dead),
  dead_get: async (q, p) => {
    const d = await q.deadItem(id(p.id));
    return d ? dead(d) : null;
  },
  dead_requeue: (q, p) => q.requeueDead((p.ids ?? []).map(id)),
  dead_purge: (q, p) => q.purgeDead((p.ids ?? []).map(id)),
  worker_beat: async (q, p) => {
    const b = await q.workerBeat(p.id, p.ttl_ms, p.record);
    return { now_ms: b.nowMs, removed: b.removed };
  },
  worker_leave: (q, p) => q.workerLeave(p.id),
  workers: async (q, p) =>
    (await q.workers(opt({ offset: p.offset, count: p.count }))).map((w) => ({ id: w.id, record: w.record, deadline_ms: w.deadlineMs })),
  stats_enable: (q) => q.enableStats(),
  stats_disable: (q) => q.disableStats(),
  stats: async (q) => {
    const s = await q.stats();
    return { enabled: s.enabled, since_ms: s.sinceMs, now_ms: s.nowMs, current: s.current, windows: s.windows };
  },
  schedule_put: (q, p) => q.putSchedule(p.name, scheduleIn(p.schedule), bytes(p.data)),
  schedule_remove: (q, p) => plain(q).removeSchedule(p.name),
  schedule_pause: (q, p) => plain(q).pauseSchedule(p.name),
  schedule_resume: (q, p) => plain(q).resumeSchedule(p.name),
  schedule_list: async (q) => (await plain(q).schedules()).schedules.map((s) => ({
    name: s.name, schedule: readable(s), data: jbytes(s.data), last_fired_ms: s.lastFiredMs, paused_ms: s.pausedMs,
  })),
  schedule_fire: async (q, p) => {
    const f = await plain(q).fire(p.name, p.digest, p.slots);
    return { now_ms: f.nowMs, status: f.status, last_fired_ms: f.lastFiredMs, outcomes: f.outcomes };
  },
  schedule_next: async (_q, p) => nextSlots(scheduleIn(p.schedule), p.after_ms, p.count),
  scheduler_tick: async (q) => {
    const s = schedulers.get(plain(q)) ?? new Scheduler(plain(q), { heartbeatMs: null, logger: { info: stderr, warn: stderr, error: stderr } });
    schedulers.set(plain(q), s);
    const t = await s.tick();
    return { fired: t.fired, next_ms: t.nextMs };
  },
};

interface Session {
  client: ReturnType<typeof createClient>;
  queue: AnyQueue;
}
const sessions = new Map<string, Session>();
let redisURL = process.env.RWQ_REDIS_URL ?? "redis://127.0.0.1:6379";
let cluster = process.env.RWQ_REDIS_CLUSTER === "1";

function close(name: string): void {
  const s = sessions.get(name);
  if (s) {
    void s.queue.close();
    s.client.disconnect();
  }
  sessions.delete(name);
}

async function open(a: Json): Promise<Json> {
  close(a.session);
  const o = a.options ?? {};
  const client = createClient(redisURL, { cluster, connectionName: a.client_name });
  client.on("error", () => {}); // failures reach the calls; no unhandled "error" events
  const options = {
    legacyLeaseKey: Boolean(o.legacy_lease_key), flatInFlight: Boolean(o.flat_in_flight), declaredKeys: Boolean(o.declared_keys),
    warn: (m: string) => process.stderr.write(m + "\n"),
    ...(o.wait_replicas !== undefined || o.wait_timeout_ms !== undefined
      ? { ack: { replicas: o.wait_replicas ?? 0, timeoutMs: o.wait_timeout_ms ?? 1000 } } : {}),
  };
  try {
    const queue = o.shards !== undefined ? new ShardedQueue(client, a.queue, o.shards, options) : new Queue(client, a.queue, options);
    sessions.set(a.session, { client, queue });
  } catch (err) {
    client.disconnect();
    throw err;
  }
  return {};
}

function hello(a: Json): Json {
  if (!Array.isArray(a?.protocols) || !a.protocols.includes(1)) throw new BadRequest("this adapter speaks protocol 1 only");
  if (a.redis?.url) redisURL = a.redis.url;
  if (a.redis?.cluster !== undefined) cluster = Boolean(a.redis.cluster);
  return {
    protocol: 1,
    implementation: { name: "rwq-typescript", language: "typescript", version: VERSION },
    profiles: ["core", "retry", "delay", "ack", "flat", "sharded", "legacy-lease", "declared-keys", "workers", "stats", "periodic"],
    methods: Object.keys(methods).sort(),
    scripts: scriptSha1s(),
    capabilities: { cluster: true },
  };
}

async function dispatch(op: string, a: Json): Promise<Json> {
  switch (op) {
    case "hello": return hello(a);
    case "open": return open(a);
    case "call": {
      const s = sessions.get(a.session);
      if (!s) throw new BadRequest(`unknown session ${a.session}`);
      const m = methods[a.method];
      if (!m) throw new Unsupported(`no method ${a.method}`);
      return m(s.queue, a.params ?? {});
    }
    case "close": close(a.session); return {};
    case "reset": case "shutdown": for (const name of [...sessions.keys()]) close(name); return {};
    default: throw new BadRequest(`unknown op ${op}`);
  }
}

function errorReply(err: unknown): Json {
  if (err instanceof RwqError) return { kind: "domain", code: err.code, message: err.message };
  if (err instanceof Unsupported) return { kind: "unsupported", code: "UNSUPPORTED", message: err.message };
  if (err instanceof BadRequest || err instanceof SyntaxError) return { kind: "protocol", code: "BAD_REQUEST", message: err.message };
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: "internal", code: "INTERNAL", message: e.message, detail: { traceback: e.stack ?? "" } };
}

async function main(): Promise<void> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let reqId = 0;
    let op = "";
    let reply: Json;
    try {
      const req = JSON.parse(line);
      reqId = req.id ?? 0;
      op = req.op;
      reply = { v: 1, id: reqId, ok: await dispatch(op, req.args) };
    } catch (err) {
      reply = { v: 1, id: reqId, err: errorReply(err) };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
    if (op === "shutdown") break;
  }
  for (const name of [...sessions.keys()]) close(name);
  process.exit(0);
}

void main();
