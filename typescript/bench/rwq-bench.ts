#!/usr/bin/env node
/**
 * rwq-bench: the TypeScript client against raw ioredis and BullMQ on one Redis, in one run; the
 * figures go to stdout as JSON (the TypeScript section of `make bench`: bench/typescript.py runs
 * it). It mirrors go/cmd/rwq-bench and bench/peers/raw.py:
 *
 *   enqueue, 1 per call      Queue.add            LPUSH                   BullMQ Queue.add
 *   enqueue, <batch> per call Queue.addMany       pipeline of LPUSH       BullMQ Queue.addBulk
 *   drain, 1 consumer        lease, then          LMOVE + LREM            BullMQ Worker, concurrency 1
 *                            completeAndLease
 *   drain, <workers>         the same in          the same in             BullMQ Worker, concurrency
 *   concurrent consumers     <workers> async loops <workers> async loops   <workers>
 *   wake-up median           lease({block})       BLMOVE                  a blocked Worker
 *
 * rwq and raw ioredis take turns on slices of the items, all their keys in Redis at once, so that
 * load from other processes hits both alike; a throughput figure is the median of its turns'
 * rates. BullMQ runs alone, once, on fewer items (-slow-n), as the Python bench runs its peers.
 *
 *   node dist/bench/rwq-bench.js --url redis://127.0.0.1:6379/0 --n 20000 --repeats 2
 *
 * It flushes the database it is given: point it at a Redis of its own.
 */
import { performance } from "node:perf_hooks";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { createRequire } from "node:module";
import { Redis } from "ioredis";
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import { Queue, VERSION, createClient, type Lease } from "../src/index.js";

const LEASE_MS = 60_000;
const RAW_QUEUE = "traw:queue";
const RAW_INFLIGHT = "traw:processing";
const PREFIX = "rwqt"; // four characters, as the Python and Go peers' prefixes
const BULL_NAME = "tbq";
const RAW = "ioredis";
const RWQ = "rwq-ts";
const BULL = "bullmq-node"; // "bullmq" is the Python bench's BullMQ for Python
const TIMEOUT_MS = 600_000;

interface Result {
  value: number;
  samples: number[];
  n: number;
  how: string;
  detail?: Record<string, number>;
}

interface Measurement {
  id: string;
  title: string;
  unit: string;
  better: "higher" | "lower";
  results: Record<string, Result>;
  notes: string[];
}

/** One side of the comparison. */
interface Peer {
  name: string;
  how: Record<string, string>;
  enqueue(ids: string[]): Promise<void>;
  batch(ids: string[], size: number): Promise<void>;
  fill(ids: string[]): Promise<void>;
  /** Drains `count` items with `consumers` concurrent consumers; resolves with the items done. */
  drain(count: number, consumers: number): Promise<number>;
  /** Starts the blocked consumer; each arrival calls `arrived` with its performance.now(). */
  startWaiter(arrived: (at: number) => void): Promise<void>;
  wakeAdd(id: string): Promise<void>;
  close(): Promise<void>;
}

const { values: opts } = parseArgs({
  options: {
    url: { type: "string", default: "redis://127.0.0.1:6379/0" },
    n: { type: "string", default: "20000" },
    "slow-n": { type: "string", default: "4000" },
    repeats: { type: "string", default: "2" },
    batch: { type: "string", default: "100" },
    workers: { type: "string", default: "4" },
    "wake-samples": { type: "string", default: "300" },
    only: { type: "string", default: "" },
    peers: { type: "string", default: `${RAW},${RWQ},${BULL}` },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (opts.help) {
  process.stdout.write(
    "rwq-bench [--url redis://...] [--n 20000] [--slow-n 4000] [--repeats 2] [--batch 100] [--workers 4]\n" +
      "          [--wake-samples 300] [--only enqueue,drain,wake] [--peers ioredis,rwq-ts,bullmq-node]\n" +
      "The TypeScript client against raw ioredis and BullMQ; JSON on stdout. Flushes the database.\n",
  );
  process.exit(0);
}

function int(name: string, value: string, least: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < least) {
    process.stderr.write(`rwq-bench: --${name} must be an integer >= ${least}, got ${JSON.stringify(value)}\n`);
    process.exit(2);
  }
  return n;
}

const N = int("n", opts.n, 1);
const SLOW_N = int("slow-n", opts["slow-n"], 1);
const REPEATS = int("repeats", opts.repeats, 1);
const BATCH = int("batch", opts.batch, 1);
const WORKERS = int("workers", opts.workers, 1);
const WAKES = int("wake-samples", opts["wake-samples"], 1);
const DATA = Buffer.from("0123456789abcdef".repeat(7).slice(0, 100)); // bench/core.py's payload
const BULL_DATA = { d: DATA.toString() };
const BULL_JOB = { removeOnComplete: true };
const admin = new Redis(opts.url, { lazyConnect: true });

function ids(n: number): string[] {
  return Array.from({ length: n }, () => randomBytes(16).toString("hex"));
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  const a = s[lo] ?? 0;
  const b = s[lo + 1];
  return b === undefined ? a : a + (b - a) * (pos - lo);
}

const median = (values: number[]): number => quantile(values, 0.5);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Raw ioredis, as bench/peers/raw.py does it with redis-py. */
function rawPeer(url: string): Peer {
  const r = new Redis(url);
  const waiter = new Redis(url);
  const drainLoop = async (limit: number, shared: { left: number }): Promise<number> => {
    let done = 0;
    while (shared.left > 0 && done < limit) {
      const value = await r.lmoveBuffer(RAW_QUEUE, RAW_INFLIGHT, "RIGHT", "LEFT");
      if (value === null) break;
      shared.left--;
      await r.lrem(RAW_INFLIGHT, -1, value);
      done++;
    }
    return done;
  };
  return {
    name: RAW,
    how: {
      enqueue_one: "LPUSH traw:queue <payload>, one command per item",
      enqueue_batch: "pipeline (no MULTI) of one LPUSH per item, one round trip per batch",
      drain_one: "LMOVE queue processing RIGHT LEFT, then LREM processing -1 <payload>: 2 round trips",
      drain_processes: "each async consumer: LMOVE + LREM until the queue is empty (one shared connection)",
      wake_median: "BLMOVE queue processing RIGHT LEFT 0 in the consumer, LPUSH in the producer",
    },
    async enqueue(items) {
      for (let i = 0; i < items.length; i++) await r.lpush(RAW_QUEUE, DATA);
    },
    async batch(items, size) {
      for (const part of chunks(items, size)) {
        const pipe = r.pipeline();
        for (let i = 0; i < part.length; i++) pipe.lpush(RAW_QUEUE, DATA);
        await pipe.exec();
      }
    },
    async fill(items) {
      // Distinct values, so that an LREM has to find its own entry (as raw.py).
      for (const part of chunks(items, 1000)) {
        await r.lpush(RAW_QUEUE, ...part.map((id) => Buffer.concat([Buffer.from(id), DATA.subarray(32)])));
      }
    },
    async drain(count, consumers) {
      const shared = { left: Number.POSITIVE_INFINITY };
      if (consumers === 1) return drainLoop(count, shared);
      const done = await Promise.all(Array.from({ length: consumers }, () => drainLoop(Number.POSITIVE_INFINITY, shared)));
      return done.reduce((a, b) => a + b, 0);
    },
    async startWaiter(arrived) {
      void (async () => {
        for (;;) {
          const value = await waiter.blmoveBuffer(RAW_QUEUE, RAW_INFLIGHT, "RIGHT", "LEFT", 0);
          arrived(performance.now());
          if (value !== null) await waiter.lrem(RAW_INFLIGHT, -1, value);
        }
      })().catch(() => {}); // ends when close() disconnects it
    },
    async wakeAdd() {
      await r.lpush(RAW_QUEUE, DATA);
    },
    async close() {
      waiter.disconnect();
      r.disconnect();
    },
  };
}

/** The TypeScript client, draining as its Worker does: a lease, then one completeAndLease per item. */
async function rwqPeer(url: string): Promise<Peer> {
  const client = createClient(url); // no re-sends (RWQ-FAIL-004)
  const waiterClient = createClient(url);
  const q = new Queue(client, PREFIX);
  const waiterQ = new Queue(waiterClient, PREFIX);
  // Warm up: connections, the one-time server check, the scripts loaded.
  await waiterQ.counts();
  await q.addMany([{ id: "warm-up", data: "x" }]);
  const warm = await q.lease(LEASE_MS);
  if (warm) await q.completeAndLease([warm], { leaseMs: LEASE_MS });
  await q.complete("warm-up");
  const drainLoop = async (limit: number): Promise<number> => {
    let held: Lease | undefined = (await q.lease(LEASE_MS)) ?? undefined;
    let done = 0;
    while (held) {
      done++;
      if (done >= limit) {
        await q.complete(held); // the turn's last item: complete, lease nothing
        break;
      }
      held = (await q.completeAndLease([held], { leaseMs: LEASE_MS })).leases[0];
    }
    return done;
  };
  return {
    name: RWQ,
    how: {
      enqueue_one: "Queue.add(id, payload), one call each",
      enqueue_batch: "Queue.addMany of <batch> items per call",
      drain_one: "Queue.lease once, then completeAndLease (complete + lease the next) per item",
      drain_processes: "each async consumer: lease, then completeAndLease until the queue is empty (one shared client)",
      wake_median: "Queue.lease(leaseMs, {block: true}) (BLMOVE, then claim) in the consumer, Queue.add in the producer",
    },
    async enqueue(items) {
      for (const id of items) await q.add(id, DATA);
    },
    async batch(items, size) {
      for (const part of chunks(items, size)) await q.addMany(part.map((id) => ({ id, data: DATA })));
    },
    async fill(items) {
      for (const part of chunks(items, 1000)) await q.addMany(part.map((id) => ({ id, data: DATA })));
    },
    async drain(count, consumers) {
      if (consumers === 1) return drainLoop(count);
      const done = await Promise.all(Array.from({ length: consumers }, () => drainLoop(Number.POSITIVE_INFINITY)));
      return done.reduce((a, b) => a + b, 0);
    },
    async startWaiter(arrived) {
      void (async () => {
        for (;;) {
          const lease = await waiterQ.lease(LEASE_MS, { block: true });
          arrived(performance.now());
          if (lease) await waiterQ.complete(lease);
        }
      })().catch(() => {});
    },
    async wakeAdd(id) {
      await q.add(id, DATA);
    },
    async close() {
      await waiterQ.close();
      waiterClient.disconnect();
      client.disconnect();
    },
  };
}

/** BullMQ for Node: Queue.add / addBulk, and a Worker with a no-op processor. */
async function bullPeer(url: string): Promise<Peer> {
  const u = new URL(url);
  const connection = { host: u.hostname, port: Number(u.port || 6379), db: Number(u.pathname.slice(1) || 0) };
  const queue = new BullQueue(BULL_NAME, { connection });
  await queue.waitUntilReady();
  let waiter: BullWorker | null = null;
  const bulk = async (n: number): Promise<void> => {
    await queue.addBulk(Array.from({ length: n }, () => ({ name: "job", data: BULL_DATA, opts: BULL_JOB })));
  };
  return {
    name: BULL,
    how: {
      enqueue_one: "await Queue.add(name, {d: payload}, {removeOnComplete: true}), one call each",
      enqueue_batch: "await Queue.addBulk(<batch> jobs), one call per batch",
      drain_one: "Worker(concurrency 1), no-op processor, made and ready before the clock starts; timed from run() to the " +
        "n-th 'completed' event (moveToFinished also fetches the next job)",
      drain_processes: "Worker(concurrency <workers>), no-op processor; timed as drain_one",
      wake_median: "a Worker blocked for its next job (BZPOPMIN on its marker), Queue.add in the producer; timed to the processor call",
    },
    async enqueue(items) {
      for (let i = 0; i < items.length; i++) await queue.add("job", BULL_DATA, BULL_JOB);
    },
    async batch(items, size) {
      for (const part of chunks(items, size)) await bulk(part.length);
    },
    async fill(items) {
      for (const part of chunks(items, 1000)) await bulk(part.length);
    },
    async drain(count, consumers) {
      let done = 0;
      let finish: () => void = () => {};
      const finished = new Promise<void>((resolve) => (finish = resolve));
      const worker = new BullWorker(BULL_NAME, async () => undefined, { connection, concurrency: consumers, autorun: false });
      worker.on("completed", () => {
        if (++done >= count) finish();
      });
      worker.on("error", () => {});
      await worker.waitUntilReady();
      const running = worker.run();
      const timer = setTimeout(finish, TIMEOUT_MS);
      await finished;
      clearTimeout(timer);
      const counted = done;
      await worker.close();
      await running;
      return counted;
    },
    async startWaiter(arrived) {
      waiter = new BullWorker(BULL_NAME, async () => arrived(performance.now()), { connection, concurrency: 1 });
      waiter.on("error", () => {});
      await waiter.waitUntilReady();
    },
    async wakeAdd() {
      await queue.add("job", BULL_DATA, BULL_JOB);
    },
    async close() {
      await waiter?.close(true);
      await queue.close();
    },
  };
}

async function flush(): Promise<void> {
  await admin.flushdb();
  gc();
}

type Step = (p: Peer, items: string[]) => Promise<void>;

/** Rounds in which the peers take turns of `slice` items: `turnSetup` (untimed) before each turn,
 * `timed` is the turn. The figure is the median of the turns' rates; samples are whole-round rates. */
async function throughput(
  m: Measurement,
  peers: Peer[],
  n: number,
  repeats: number,
  slice: number,
  turnSetup: Step | null,
  timed: Step,
): Promise<void> {
  if (peers.length === 0) return;
  const turns = new Map<string, number[]>();
  const rounds = new Map<string, number[]>();
  for (let round = 0; round < repeats; round++) {
    await flush();
    const all = ids(n);
    const seconds = new Map<string, number>();
    for (let index = 0, start = 0; start < n; index++, start += slice) {
      const turn = all.slice(start, start + slice);
      const shift = (index + round) % peers.length;
      for (const p of [...peers.slice(shift), ...peers.slice(0, shift)]) {
        if (turnSetup) await turnSetup(p, turn);
        gc();
        const began = performance.now();
        await timed(p, turn);
        const took = (performance.now() - began) / 1000;
        seconds.set(p.name, (seconds.get(p.name) ?? 0) + took);
        turns.set(p.name, [...(turns.get(p.name) ?? []), turn.length / took]);
      }
    }
    for (const [name, s] of seconds) rounds.set(name, [...(rounds.get(name) ?? []), n / s]);
  }
  for (const p of peers) {
    const value = median(turns.get(p.name) ?? []);
    m.results[p.name] = {
      value,
      samples: rounds.get(p.name) ?? [],
      n,
      how: p.how[m.id] ?? "",
      detail: { us_per_item: 1e6 / value, turns: (turns.get(p.name) ?? []).length },
    };
  }
  m.notes.push(
    `${peers.map((p) => p.name).join(" and ")}: turns of ${slice} items on one Redis, ${repeats} round(s) of ${n} items; ` +
      "the figure is the median of the turns' rates, samples are whole-round rates",
  );
}

/** The fast peers interleaved on N items, then the slow one (BullMQ) alone, once, on SLOW_N. */
async function measure(m: Measurement, fast: Peer[], slow: Peer[], slice: number, turnSetup: Step | null, timed: Step): Promise<Measurement> {
  await throughput(m, fast, N, REPEATS, slice, turnSetup, timed);
  await throughput(m, slow, Math.min(N, SLOW_N), 1, Math.min(slice, SLOW_N), turnSetup, timed);
  return m;
}

function expectDrained(p: Peer, done: number, want: number): void {
  if (done !== want) throw new Error(`${p.name}: drained ${done} items, expected ${want}`);
}

const fillTurn: Step = (p, items) => p.fill(items);

const steps: Record<string, (fast: Peer[], slow: Peer[]) => Promise<Measurement>> = {
  enqueue_one: (fast, slow) =>
    measure(row("enqueue_one", "enqueue, 1 item per call"), fast, slow, 500, null, (p, items) => p.enqueue(items)),
  enqueue_batch: (fast, slow) =>
    measure(row("enqueue_batch", `enqueue, ${BATCH} items per call`), fast, slow, 20 * BATCH, null, (p, items) => p.batch(items, BATCH)),
  drain_one: (fast, slow) =>
    measure(row("drain_one", "drain, 1 consumer, lease + complete"), fast, slow, 500, fillTurn, async (p, items) =>
      expectDrained(p, await p.drain(items.length, 1), items.length),
    ),
  drain_processes: async (fast, slow) => {
    const m = row("drain_processes", `drain, ${WORKERS} concurrent consumers (async, one process)`);
    await measure(m, fast, slow, Math.max(Math.floor(N / 8), 100), fillTurn, async (p, items) =>
      expectDrained(p, await p.drain(items.length, WORKERS), items.length),
    );
    m.notes.push(
      "the consumers are concurrent async loops in one Node process sharing one client (ioredis: one connection, " +
        "commands pipelined); BullMQ: one Worker with that concurrency; the turn's time runs from the start to the last item done",
    );
    return m;
  },
  wake_median: (fast, slow) => wake([...fast, ...slow]),
};

function row(id: string, title: string): Measurement {
  return { id, title, unit: "items/s", better: "higher", results: {}, notes: [] };
}

async function blockedClients(): Promise<number> {
  const info = await admin.info("clients");
  return Number(/blocked_clients:(\d+)/.exec(info)?.[1] ?? 0);
}

/** One blocked consumer per peer; for each sample the producer takes the peers in turn, waits until
 * Redis reports every consumer blocked, sleeps 1-3 ms, stamps and adds one item; the consumer
 * stamps when its item arrives. */
async function wake(peers: Peer[]): Promise<Measurement> {
  const m: Measurement = { id: "wake_median", title: "blocked consumer wake-up, median", unit: "ms", better: "lower", results: {}, notes: [] };
  await flush();
  const pending = new Map<string, (at: number) => void>();
  for (const p of peers) {
    await p.startWaiter((at) => {
      const resolve = pending.get(p.name);
      pending.delete(p.name);
      resolve?.(at);
    });
  }
  const latencies = new Map<string, number[]>(peers.map((p) => [p.name, []]));
  for (const [i, id] of ids(WAKES).entries()) {
    const shift = i % peers.length;
    for (const p of [...peers.slice(shift), ...peers.slice(0, shift)]) {
      const deadline = performance.now() + 30_000;
      while ((await blockedClients()) < peers.length) {
        if (performance.now() > deadline) throw new Error("a consumer never blocked");
        await sleep(0.1);
      }
      await sleep(1 + Math.random() * 2);
      const got = new Promise<number>((resolve) => pending.set(p.name, resolve));
      const sent = performance.now();
      await p.wakeAdd(id);
      const at = await Promise.race([got, sleep(30_000).then(() => -1)]);
      if (at < 0) throw new Error(`${p.name}: the consumer did not get the item`);
      latencies.get(p.name)?.push(at - sent);
    }
  }
  for (const p of peers) {
    const values = latencies.get(p.name) ?? [];
    m.results[p.name] = {
      value: median(values),
      samples: values,
      n: values.length,
      how: p.how["wake_median"] ?? "",
      detail: { p50_ms: median(values), p90_ms: quantile(values, 0.9), p99_ms: quantile(values, 0.99) },
    };
  }
  m.notes.push(
    "one blocked consumer per peer on a connection of its own, all in this process; for each sample the producer " +
      "waits until Redis reports every consumer blocked, sleeps 1-3 ms, stamps and adds one item; the consumer stamps " +
      "when its item arrives (rwq's blocking lease re-blocks every second, BullMQ's Worker on its drain delay)",
  );
  return m;
}

async function main(): Promise<void> {
  await admin.connect();
  await flush();
  const wanted = new Set(opts.peers.split(",").filter(Boolean));
  for (const name of wanted) {
    if (![RAW, RWQ, BULL].includes(name)) throw new Error(`unknown peer ${name} (ioredis, rwq-ts, bullmq-node)`);
  }
  const fast: Peer[] = [];
  const slow: Peer[] = [];
  if (wanted.has(RAW)) fast.push(rawPeer(opts.url));
  if (wanted.has(RWQ)) fast.push(await rwqPeer(opts.url));
  if (wanted.has(BULL)) slow.push(await bullPeer(opts.url));
  const only = opts.only.split(",").filter(Boolean);
  const require = createRequire(import.meta.url);
  const version = (name: string): string => (require(`${name}/package.json`) as { version: string }).version;
  const out = {
    node: process.version,
    ioredis: version("ioredis"),
    bullmq: version("bullmq"),
    client: VERSION,
    peers: [...fast, ...slow].map((p) => p.name),
    measurements: [] as Measurement[],
  };
  try {
    for (const [id, step] of Object.entries(steps)) {
      if (only.length > 0 && !only.some((prefix) => id.startsWith(prefix))) continue;
      const started = performance.now();
      try {
        out.measurements.push(await step(fast, slow));
      } catch (err) {
        throw new Error(`${id}: ${err instanceof Error ? err.message : String(err)}`);
      }
      process.stderr.write(`rwq-bench: ${id} took ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    }
  } finally {
    for (const p of [...fast, ...slow]) await p.close();
    admin.disconnect();
  }
  process.stdout.write(JSON.stringify(out, null, 1) + "\n");
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`rwq-bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
