/**
 * Interoperability with the published npm package @mevitae/redis-work-queue 0.1.5 (redis-work-queue's
 * Node client, wire generation G1), both ways, as tests/test_interop_pypi.py does for the Python
 * client and PyPI's redis-work-queue 0.1.5. Every G1 call is a real call into the installed
 * package (a devDependency, from the lockfile).
 *
 * G1: addItem = SET + LPUSH (no dedupe); lease = (B)RPOPLPUSH, GET (a ghost comes back with an
 * empty payload), SETEX `P:leased_by_session:<id>` <secs>; complete = LREM processing, and only if
 * that removed the id, DEL item + DEL lease; lightClean requeues every processing id without a
 * `leased_by_session` key, with no data check, and pushes a bogus id "0" along with it.
 *
 * A lease "running out" is server-side surgery: the lease key's TTL cut to 1 ms, never a sleep.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Redis } from "ioredis";
import { Item, KeyPrefix, WorkQueue as G1WorkQueue } from "@mevitae/redis-work-queue/dist/WorkQueue.js";
import { Queue, Worker, createClient } from "@rwq-protocol/rwq";
import { type Server1, startRedis } from "./helpers.js";

let server: Server1;
let db: Redis; // the G1 client's connection, a plain ioredis client as its README shows
const closers: (() => Promise<void> | void)[] = [];
let n = 0;

const PAYLOADS: [string, Buffer][] = [
  ["plain", Buffer.from("hello")],
  ["all-bytes", Buffer.from(Array.from({ length: 256 }, (_, i) => i))],
  ["nul-crlf", Buffer.from([0, 13, 10, 255, 0])],
  ["utf8", Buffer.from("gr\u00fc\u00dfe \u2713", "utf8")],
  ["large", Buffer.alloc(200_000, 0xab)],
];

function prefix(): string {
  return `g1t${++n}:{q}`;
}

function rwq(p: string, options: ConstructorParameters<typeof Queue>[2] = {}): Queue {
  const client = createClient(server.url);
  const queue = new Queue(client, p, options);
  closers.push(async () => {
    await queue.close();
    client.disconnect();
  });
  return queue;
}

const g1 = (p: string) => new G1WorkQueue(new KeyPrefix(p));
const keys = async (p: string) => (await db.keys(`${p}*`)).sort();
const lists = async (p: string) => [await db.lrange(`${p}:queue`, 0, -1), await db.lrange(`${p}:processing`, 0, -1)];
/** The lease behind `key` runs out now: its TTL cut to 1 ms on the server. */
async function expire(key: string): Promise<void> {
  assert.equal(await db.pexpire(key, 1), 1, `${key} should be a live lease`);
  while (await db.exists(key));
}
async function waitBlocked(clients = 1): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const info = await db.info("clients");
    if (Number(/blocked_clients:(\d+)/.exec(info)?.[1] ?? 0) >= clients) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail("the blocking lease never blocked");
}

before(async () => {
  server = await startRedis();
  db = new Redis(server.url);
});
after(async () => {
  for (const close of closers) await close();
  db.disconnect();
  await server.stop();
});

describe("rwq adds, npm 0.1.5 leases and completes", () => {
  test("every payload byte for byte, FIFO, its whole-second lease under leased_by_session", async () => {
    const p = prefix();
    const queue = rwq(p);
    const worker = g1(p);
    assert.deepEqual(await queue.addMany(PAYLOADS.map(([id, data]) => ({ id, data }))), PAYLOADS.map(() => true));
    const leased = [];
    for (const [id, data] of PAYLOADS) {
      const item = await worker.lease(db, 30, false);
      assert.ok(item);
      assert.equal(item.id, id);
      assert.ok(Buffer.from(item.data).equals(data), `payload of ${id}`);
      assert.equal(await db.ttl(`${p}:leased_by_session:${id}`), 30);
      leased.push(item);
    }
    assert.equal(await worker.lease(db, 30, false), null);
    assert.deepEqual(await queue.counts(), { queued: 0, processing: PAYLOADS.length, delayed: 0, dead: 0 });
    assert.equal(await queue.lightClean().then((r) => r.requeued.length), 0); // G1's leases are live
    for (const item of leased) assert.equal(await worker.complete(db, item), true);
    for (const [id] of PAYLOADS) assert.equal(await queue.complete(id), false);
    assert.equal(await queue.lease(1000), null);
    assert.deepEqual(await keys(p), []);
  });

  test("a blocked npm 0.1.5 lease is woken by rwq's add", async () => {
    const p = prefix();
    const queue = rwq(p);
    const worker = g1(p);
    const other = new Redis(server.url);
    closers.push(() => other.disconnect());
    const waiting = worker.lease(other, 30, true, 5);
    await waitBlocked();
    assert.equal(await queue.add("late", Buffer.from([0, 108, 97, 116, 101, 255])), true);
    const item = await waiting;
    assert.ok(item);
    assert.equal(item.id, "late");
    assert.deepEqual(Buffer.from(item.data), Buffer.from([0, 108, 97, 116, 101, 255]));
    assert.equal(await worker.complete(db, item), true);
    assert.equal(await queue.complete("late"), false);
    assert.deepEqual(await keys(p), []);
  });
});

describe("npm 0.1.5 adds, rwq leases and completes", () => {
  test("every payload byte for byte, one by one, in a batch and blocking; npm's late complete is refused", async () => {
    const p = prefix();
    const queue = rwq(p);
    const producer = g1(p);
    for (const [id, data] of PAYLOADS) await producer.addItem(db, new Item(data, id));
    await producer.addItem(db, new Item("text payload", "from-str")); // 0.1.5 encodes a string as UTF-8
    const expected: [string, Buffer][] = [...PAYLOADS, ["from-str", Buffer.from("text payload")]];

    const first = await queue.lease(30_000);
    assert.ok(first);
    assert.deepEqual([first.id, first.data], expected[0]);
    assert.ok(Math.abs((await db.pttl(`${p}:lease:${first.id}`)) - 30_000) < 1000);
    assert.equal(await db.exists(`${p}:leased_by_session:${first.id}`), 0); // legacyLeaseKey is off
    const batch = await queue.leaseMany({ count: 3, leaseMs: 30_000 });
    assert.deepEqual(batch.map((l) => [l.id, l.data]), expected.slice(1, 4));
    const blocking = await queue.lease(30_000, { block: true, timeoutMs: 1000 });
    const last = await queue.lease(30_000, { block: true, timeoutMs: 1000 });
    assert.ok(blocking && last);
    assert.deepEqual([[blocking.id, blocking.data], [last.id, last.data]], expected.slice(4));
    assert.equal(await queue.lease(30_000), null);

    const held = [first, ...batch, blocking, last];
    for (const lease of held) assert.equal(await queue.complete(lease, { requireLease: true }), true);
    for (const lease of held) assert.equal(await queue.complete(lease), false);
    for (const [id] of expected) assert.equal(await producer.complete(db, new Item("", id)), false);
    assert.deepEqual(await keys(p), []);
  });

  test("a blocked rwq lease is woken by npm 0.1.5's add", async () => {
    const p = prefix();
    const queue = rwq(p);
    await queue.counts(); // the one-off server check, before blocking
    const waiting = queue.lease(30_000, { block: true, timeoutMs: 5000 });
    await waitBlocked();
    await g1(p).addItem(db, new Item(Buffer.from([255, 0]), "wake"));
    const lease = await waiting;
    assert.ok(lease);
    assert.deepEqual([lease.id, lease.data], ["wake", Buffer.from([255, 0])]);
    assert.deepEqual(await lists(p), [[], ["wake"]]);
    assert.equal(await queue.complete(lease, { requireLease: true }), true);
    assert.deepEqual(await keys(p), []);
  });

  test("duplicate npm 0.1.5 adds never reach an npm worker as a ghost", async () => {
    const p = prefix();
    const queue = rwq(p);
    const fleet = g1(p);
    await fleet.addItem(db, new Item("first", "dup"));
    await fleet.addItem(db, new Item("second", "dup")); // 0.1.5 does not dedupe
    assert.deepEqual(await lists(p), [["dup", "dup"], []]);
    const held = await queue.lease(30_000);
    assert.ok(held);
    assert.deepEqual([held.id, held.data.toString()], ["dup", "second"]);
    assert.equal(await queue.complete(held), true);
    assert.deepEqual(await lists(p), [["dup"], []]); // now a ghost: no item key
    assert.deepEqual(await queue.deepClean(), { requeued: [], dropped: 1, dead: [], promoted: 0 });
    assert.equal(await fleet.lease(db, 30, false), null); // not an empty payload
    assert.deepEqual(await keys(p), []);
  });
});

describe("workers of both", () => {
  test("rwq's Worker runs every item npm 0.1.5 adds, once, byte for byte", async () => {
    const p = prefix();
    const queue = rwq(p);
    const producer = g1(p);
    const expected = new Map(Array.from({ length: 40 }, (_, i) => [`job-${i}`, Buffer.from([i, 0, 255, ...Buffer.from(`payload ${i}`)])]));
    const seen: [string, Buffer][] = [];
    const worker = new Worker(
      queue,
      async (job) => {
        seen.push([job.id, job.data]);
        if (seen.length === expected.size) worker.stop();
      },
      { concurrency: 4, pollTimeoutMs: 100, cleanIntervalMs: null, logger: { info() {}, warn() {}, error: console.error } },
    );
    const running = worker.run();
    const bound = setTimeout(() => worker.stop(), 10_000); // bounded, whatever happens
    for (const [id, data] of expected) await producer.addItem(db, new Item(data, id));
    const stats = await running;
    clearTimeout(bound);
    assert.deepEqual(new Map(seen), expected);
    assert.equal(seen.length, expected.size);
    assert.equal(stats.completed, expected.size);
    assert.deepEqual(await lists(p), [[], []]);
    assert.deepEqual(await keys(p), [`${p}:policy`]); // the worker's retry policy, offered at start
  });

  test("npm 0.1.5 workers run every item rwq adds, once, byte for byte", async () => {
    const p = prefix();
    const queue = rwq(p);
    const fleet = [g1(p), g1(p)];
    const expected = new Map(Array.from({ length: 40 }, (_, i) => [`job-${i}`, Buffer.from([255, i, 0, 13, 10])]));
    assert.deepEqual(await queue.addMany([...expected].map(([id, data]) => ({ id, data }))), [...expected].map(() => true));
    const done: string[] = [];
    for (let turn = 0; done.length < expected.size; turn++) {
      const worker = fleet[turn % 2]!;
      const item = await worker.lease(db, 30, false);
      assert.ok(item, "an npm worker found nothing in a queue not yet drained");
      assert.deepEqual(Buffer.from(item.data), expected.get(item.id), `payload of ${item.id}`);
      assert.equal(await worker.complete(db, item), true);
      done.push(item.id);
    }
    assert.deepEqual(done, [...expected.keys()]); // FIFO
    assert.deepEqual(await queue.counts(), { queued: 0, processing: 0, delayed: 0, dead: 0 });
    assert.deepEqual(await keys(p), []);
  });
});

describe("leases under both names", () => {
  test("npm 0.1.5's light clean leaves an rwq legacy lease alone until it runs out", async () => {
    const p = prefix();
    const queue = rwq(p, { legacyLeaseKey: true });
    const fleet = g1(p);
    assert.equal(await queue.add("a", "A"), true);
    const held = await queue.lease(30_000);
    assert.ok(held);
    assert.equal(await db.get(`${p}:leased_by_session:a`), held.token);
    await fleet.lightClean(db);
    assert.deepEqual(await lists(p), [[], ["a"]]);
    assert.equal(await queue.renew(held, 30_000), true);
    assert.ok((await db.pttl(`${p}:leased_by_session:a`)) > 29_000); // renewed under both names

    await expire(`${p}:lease:a`);
    await expire(`${p}:leased_by_session:a`);
    await fleet.lightClean(db);
    // It requeues "a", and pushes its bogus "0" id along with it.
    assert.deepEqual(await lists(p), [["a", "0"], []]);
    const item = await fleet.lease(db, 30, false);
    assert.ok(item);
    assert.deepEqual([item.id, Buffer.from(item.data).toString()], ["0", ""]); // npm's own ghost, as npm sees it
    await fleet.complete(db, item);
    const again = await fleet.lease(db, 30, false);
    assert.ok(again);
    assert.deepEqual([again.id, Buffer.from(again.data).toString()], ["a", "A"]);
    assert.equal(await fleet.complete(db, again), true);
    assert.equal(await queue.complete(held), false);
    assert.deepEqual(await keys(p), []);
  });

  test("rwq's cleaners drop the bogus '0' npm 0.1.5's light clean pushes, before an npm worker meets it", async () => {
    const p = prefix();
    const queue = rwq(p);
    const fleet = g1(p);
    await fleet.addItem(db, new Item("A", "a"));
    const crashed = await fleet.lease(db, 30, false);
    assert.ok(crashed);
    await expire(`${p}:leased_by_session:a`);
    await fleet.lightClean(db);
    assert.deepEqual(await lists(p), [["a", "0"], []]);
    assert.deepEqual(await queue.deepClean(), { requeued: [], dropped: 1, dead: [], promoted: 0 });
    const item = await fleet.lease(db, 30, false);
    assert.ok(item);
    assert.deepEqual([item.id, Buffer.from(item.data).toString()], ["a", "A"]);
    assert.equal(await fleet.lease(db, 30, false), null);
    assert.equal(await fleet.complete(db, item), true);
    assert.deepEqual(await keys(p), []);
  });

  test("without legacyLeaseKey npm 0.1.5's light clean requeues an rwq-held item; rwq's complete removes that copy", async () => {
    const p = prefix();
    const queue = rwq(p);
    const fleet = g1(p);
    assert.equal(await queue.add("a", "A"), true);
    const held = await queue.lease(60_000);
    assert.ok(held);
    await fleet.lightClean(db);
    assert.deepEqual(await lists(p), [["a", "0"], []]);
    assert.equal(await queue.complete(held, { requireLease: true }), true);
    assert.deepEqual(await lists(p), [["0"], []]);
    assert.equal(await queue.lease(1000), null); // drops the ghost "0" on its way
    assert.equal(await fleet.lease(db, 30, false), null);
    assert.deepEqual(await keys(p), []);
  });

  test("rwq's cleaners leave an npm 0.1.5 lease alone until it runs out", async () => {
    const p = prefix();
    const queue = rwq(p);
    const fleet = g1(p);
    await fleet.addItem(db, new Item("A", "a"));
    const item = await fleet.lease(db, 10, false);
    assert.ok(item);
    const ttl = await db.pttl(`${p}:leased_by_session:a`); // npm's 10 s lease, less what has run since
    assert.ok(ttl > 9_000 && ttl <= 10_000, `pttl ${ttl}`);
    const nothing = { requeued: [], dropped: 0, dead: [], promoted: 0 };
    assert.deepEqual(await queue.lightClean(), nothing);
    assert.deepEqual(await queue.deepClean(), nothing);
    assert.equal(await queue.lease(1000), null);
    assert.deepEqual(await lists(p), [[], ["a"]]);

    await expire(`${p}:leased_by_session:a`);
    assert.deepEqual(await queue.lightClean(), { ...nothing, requeued: ["a"] });
    const held = await queue.lease(10_000);
    assert.ok(held);
    assert.deepEqual([held.id, held.data.toString()], ["a", "A"]);
    // The slow npm worker finishes first: it is the first completer, rwq's worker is not.
    assert.equal(await fleet.complete(db, item), true);
    assert.equal(await queue.complete(held), false);
    assert.deepEqual(await keys(p), []);
  });
});

describe("flat leases and orphans", () => {
  test("a flat fleet shares the queue with npm 0.1.5, whose cleaner never sees flat leases", async () => {
    // Profile flat (SPEC §18): a flat lease sits in P:in_flight; rwq's light clean recovers it.
    const p = prefix();
    const flat = rwq(p, { flatInFlight: true });
    const fleet = g1(p);
    assert.deepEqual(await flat.addMany([{ id: "a", data: "A" }, { id: "b", data: "B" }, { id: "c", data: "C" }]), [true, true, true]);
    const held = await flat.lease(60_000);
    const theirs = await fleet.lease(db, 30, false);
    assert.ok(held && theirs);
    assert.deepEqual([held.id, theirs.id], ["a", "b"]);
    assert.deepEqual(await lists(p), [["c"], ["b"]]);
    assert.deepEqual(await db.zrange(`${p}:in_flight`, 0, -1), ["a"]);
    assert.equal((await flat.counts()).processing, 2); // LLEN processing alone would say 1

    await expire(`${p}:lease:a`); // the flat lease runs out: its key gone, its deadline moved back
    await db.zadd(`${p}:in_flight`, 1, "a");
    await fleet.lightClean(db);
    assert.deepEqual(await lists(p), [["c"], ["b"]]); // npm does not see flat leases
    assert.deepEqual(await flat.lightClean(), { requeued: ["a"], dropped: 0, dead: [], promoted: 0 });
    assert.deepEqual(await lists(p), [["a", "c"], ["b"]]);
    assert.equal(await fleet.complete(db, theirs), true);
    const again = await fleet.lease(db, 30, false);
    assert.ok(again);
    assert.equal(again.id, "c");
    assert.equal(await flat.complete(again.id), true); // a flat client completes a listed lease
    const last = await flat.lease(30_000);
    assert.ok(last);
    assert.deepEqual([last.id, last.data.toString()], ["a", "A"]);
    assert.equal(await flat.complete(last, { requireLease: true }), true);
    assert.deepEqual(await keys(p), []);
  });

  test("rwq's deep clean leaves an npm-leased orphan alone until its lease runs out", async () => {
    const p = prefix();
    const queue = rwq(p);
    const fleet = g1(p);
    await fleet.addItem(db, new Item("O", "o"));
    const item = await fleet.lease(db, 10, false);
    assert.ok(item);
    // npm's complete crashed after its first step (LREM): the item is in no list.
    assert.equal(await db.lrem(`${p}:processing`, 0, "o"), 1);
    const nothing = { requeued: [], dropped: 0, dead: [], promoted: 0 };
    assert.deepEqual(await queue.deepClean(), nothing);
    assert.deepEqual(await queue.lightClean(), nothing);
    await expire(`${p}:leased_by_session:o`);
    assert.deepEqual(await queue.deepClean(), { ...nothing, requeued: ["o"] });
    const again = await fleet.lease(db, 10, false);
    assert.ok(again);
    assert.deepEqual([again.id, Buffer.from(again.data).toString()], ["o", "O"]);
    assert.equal(await fleet.complete(db, again), true);
    assert.deepEqual(await keys(p), []);
  });

  test("an id added again after npm completed it is not orphaned by a lingering rwq lease", async () => {
    // npm's complete leaves P:lease:<id> behind: the id added again must still reach a worker.
    const p = prefix();
    const queue = rwq(p);
    const fleet = g1(p);
    await fleet.addItem(db, new Item("v1", "x"));
    const slow = await fleet.lease(db, 1, false);
    assert.ok(slow);
    await expire(`${p}:leased_by_session:x`);
    assert.deepEqual((await queue.lightClean()).requeued, ["x"]);
    const crashed = await queue.lease(60_000);
    assert.ok(crashed);
    assert.equal(await fleet.complete(db, slow), true);
    assert.deepEqual(await keys(p), [`${p}:lease:x`]);

    assert.equal(await queue.add("x", "v2"), true);
    let first = await queue.lease(60_000);
    const [queued, processing] = await lists(p);
    assert.ok(first || [...queued!, ...processing!].includes("x"), "the item added again is in no list");
    if (!first) {
      await expire(`${p}:lease:x`); // kept until the stale lease is gone, then brought back
      assert.deepEqual((await queue.lightClean()).requeued, ["x"]);
      first = await queue.lease(60_000);
    }
    assert.ok(first);
    assert.equal(first.data.toString(), "v2");
    assert.equal(await queue.complete(first, { requireLease: true }), true);
    assert.deepEqual(await keys(p), []);
  });
});

describe("completion across generations", () => {
  test("rwq's complete deletes the npm lease; npm's late complete resurrects nothing", async () => {
    const p = prefix();
    const queue = rwq(p);
    const fleet = g1(p);
    assert.equal(await queue.add("a", "A"), true);
    const item = await fleet.lease(db, 30, false);
    assert.ok(item);
    assert.equal(await db.exists(`${p}:leased_by_session:a`), 1);
    assert.equal(await queue.complete("a"), true);
    assert.deepEqual(await keys(p), []); // item, processing entry and leased_by_session key gone
    assert.equal(await fleet.complete(db, item), false);
    await fleet.lightClean(db);
    assert.equal(await fleet.lease(db, 30, false), null);
    assert.deepEqual(await keys(p), []);
  });

  test("npm 0.1.5 completes first an item rwq leased and lost", async () => {
    const p = prefix();
    const queue = rwq(p, { legacyLeaseKey: true });
    const fleet = g1(p);
    assert.equal(await queue.add("a", "A"), true);
    const held = await queue.lease(5000);
    assert.ok(held);
    await expire(`${p}:lease:a`);
    await expire(`${p}:leased_by_session:a`);
    await fleet.lightClean(db); // the rwq worker is gone: npm's cleaner puts the item back
    assert.equal(await queue.lease(1000).then((l) => l?.id), "a"); // a rwq worker takes it...
    await expire(`${p}:lease:a`); // ...and is gone too
    await expire(`${p}:leased_by_session:a`);
    assert.deepEqual(await queue.lightClean(), { requeued: ["a"], dropped: 0, dead: [], promoted: 0 });
    const item = await fleet.lease(db, 30, false); // the ghost "0" first went with the rwq lease
    assert.ok(item);
    assert.deepEqual([item.id, Buffer.from(item.data).toString()], ["a", "A"]);
    assert.equal(await fleet.complete(db, item), true);
    assert.equal(await queue.complete(held), false);
    assert.equal(await queue.lease(1000), null);
    assert.deepEqual(await keys(p), []);
  });
});

describe("ghosts and races", () => {
  test("rwq's light clean drops a processing ghost an npm cleaner would hand out", async () => {
    const p = prefix();
    const queue = rwq(p);
    await db.lpush(`${p}:processing`, "ghost"); // left by a crashed foreign client, no item
    assert.deepEqual(await queue.lightClean(), { requeued: [], dropped: 1, dead: [], promoted: 0 });
    await g1(p).lightClean(db);
    assert.equal(await g1(p).lease(db, 30, false), null);
    assert.deepEqual(await keys(p), []);
  });

  test("an rwq light clean inside npm 0.1.5's lease window: the item still completes once", async () => {
    // npm's lease is RPOPLPUSH, GET, SETEX: a cleaner between RPOPLPUSH and SETEX sees no lease
    // and requeues the id; rwq's lease must then neither hand it out nor drop its only entry.
    const p = prefix();
    const queue = rwq(p);
    assert.equal(await queue.add("a", "A"), true);
    const reports: unknown[] = [];
    const racing = new Proxy(db, {
      get(target, name) {
        if (name === "rpoplpush") {
          return async (src: string, dst: string) => {
            const moved = await target.rpoplpush(src, dst);
            reports.push(await queue.lightClean());
            return moved;
          };
        }
        const value = Reflect.get(target, name) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const item = await g1(p).lease(racing, 10, false);
    assert.deepEqual(reports, [{ requeued: ["a"], dropped: 0, dead: [], promoted: 0 }]);
    assert.ok(item);
    assert.deepEqual(await lists(p), [["a"], []]);
    assert.equal(await db.exists(`${p}:leased_by_session:a`), 1);
    assert.equal(await queue.lease(10_000), null); // held by the npm worker
    assert.deepEqual(await lists(p), [[], ["a"]], "rwq's lease dropped the only entry of a held item");
    assert.equal(await g1(p).complete(db, item), true);
    assert.deepEqual(await keys(p), []);
  });
});
