import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { inspect } from "node:util";
import { Redis, type RedisOptions } from "ioredis";
import {
  InvalidArgumentError, Lease, LeaseLostError, Queue, RedisError, RwqError, ShardedQueue, ShardMismatchError,
  WrongTypeError, createClient, idFromBytes, idToBytes, scriptSha1s,
} from "@rwq-protocol/rwq";
import { readFileSync } from "node:fs";
import { type Server1, sleep, startProxy, startRedis } from "./helpers.js";

let redis: Server1;
const clients: ReturnType<typeof createClient>[] = [];
const queues: { close(): Promise<void> }[] = [];
let n = 0;

function queue(options: ConstructorParameters<typeof Queue>[2] = {}): Queue {
  const client = createClient(redis.url);
  clients.push(client);
  const q = new Queue(client, `t${++n}:{q}`, options);
  queues.push(q);
  return q;
}

before(async () => {
  redis = await startRedis();
});
after(async () => {
  for (const q of queues) await q.close();
  for (const c of clients) c.disconnect();
  await redis.stop();
});

describe("scripts", () => {
  test("the embedded scripts are lua/manifest.json's", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../../lua/manifest.json", import.meta.url), "utf8")) as {
      scripts: Record<string, { sha1: string }>;
    };
    assert.deepEqual(scriptSha1s(), Object.fromEntries(Object.entries(manifest.scripts).map(([k, v]) => [k, v.sha1])));
  });
});

describe("core", () => {
  test("EVALSHA, then EVAL on NOSCRIPT: a flushed script cache costs one round trip", async () => {
    const q = queue();
    await q.add("before", "");
    await redis.admin.script("FLUSH");
    assert.equal(await q.add("after", ""), true);
    assert.equal((await q.counts()).queued, 2);
  });

  test("add, lease, complete: an item runs once, in order", async () => {
    const q = queue();
    assert.equal(await q.add("a", "A"), true);
    assert.equal(await q.add("a", "other"), false, "add is idempotent by id");
    assert.deepEqual(await q.addMany([{ id: "b", data: Buffer.from([0, 255]) }, { id: "c", data: "C" }]), [true, true]);
    assert.deepEqual(await q.counts(), { queued: 3, processing: 0, delayed: 0, dead: 0 });
    const l = await q.lease(30_000);
    assert.ok(l);
    assert.equal(l.id, "a");
    assert.equal(l.data.toString(), "A");
    assert.equal(await redis.admin.get(`${q.prefix}:lease:a`), l.token);
    assert.equal(await q.complete(l, { requireLease: true }), true);
    assert.equal(await q.complete("a"), false, "only the first completer gets true");
    const many = await q.leaseMany({ count: 5, leaseMs: 30_000 });
    assert.deepEqual(many.map((x) => x.id), ["b", "c"]);
    assert.deepEqual([...many[0]!.data], [0, 255]);
    assert.equal(many[0]!.token, many[1]!.token, "one token for a lease_many");
    assert.equal(await q.lease(30_000), null);
    assert.deepEqual(await q.completeMany(["b", "zz"]), ["done", "gone"]);
  });

  test("renew, release, lease lost", async () => {
    const q = queue();
    await q.add("x", "X");
    const l = (await q.lease(10_000))!;
    assert.equal(await q.renew(l, 60_000), true);
    const ttl = await redis.admin.pttl(`${q.prefix}:lease:x`);
    assert.ok(ttl > 50_000 && ttl <= 60_000);
    const stranger = new Lease("x", "", "0".repeat(32));
    assert.equal(await q.renew(stranger, 1000), false);
    await assert.rejects(q.release(stranger), LeaseLostError);
    await assert.rejects(q.complete(stranger, { requireLease: true }), (e: unknown) => e instanceof LeaseLostError && e.code === "LEASE_LOST");
    assert.equal(await q.release(l), true);
    assert.deepEqual(await q.counts(), { queued: 1, processing: 0, delayed: 0, dead: 0 });
  });

  test("complete_and_lease completes then leases the next item in one call", async () => {
    const q = queue();
    await q.addMany([{ id: "1", data: "" }, { id: "2", data: "" }, { id: "3", data: "" }]);
    const first = (await q.lease(30_000))!;
    const r = await q.completeAndLease([first], { leaseMs: 30_000, count: 2, requireLease: true });
    assert.deepEqual(r.outcomes, ["done"]);
    assert.deepEqual(r.leases.map((x) => x.id), ["2", "3"]);
  });

  test("blocking lease waits for an add; a timeout gives null; an aborted wait gives null", async () => {
    const q = queue();
    const other = createClient(redis.url);
    clients.push(other);
    const p = new Queue(other, q.prefix);
    queues.push(p);
    const waiting = q.lease(30_000, { block: true, timeoutMs: 5000 });
    await sleep(50);
    await p.add("late", "L");
    assert.equal((await waiting)?.id, "late");
    const t0 = Date.now();
    assert.equal(await q.lease(30_000, { block: true, timeoutMs: 100 }), null);
    assert.ok(Date.now() - t0 < 2000);
    const ac = new AbortController();
    const aborted = q.lease(30_000, { block: true, signal: ac.signal });
    ac.abort();
    assert.equal(await aborted, null);
  });

  test("light clean requeues an expired lease; deep clean an orphan", async () => {
    const q = queue();
    await q.add("e", "E");
    await q.lease(1);
    await sleep(10);
    const r = await q.lightClean();
    assert.deepEqual(r.requeued, ["e"]);
    await redis.admin.set(`${q.prefix}:item:orphan`, "O");
    const d = await q.deepClean();
    assert.deepEqual(d.requeued, ["orphan"]);
    assert.equal((await q.counts()).queued, 2);
  });

  test("an id that is not UTF-8 keeps its bytes (RWQ-ENC-006)", async () => {
    const q = queue();
    const raw = Buffer.from([0x61, 0xff]);
    await redis.admin.set(Buffer.concat([Buffer.from(`${q.prefix}:item:`), raw]), "P");
    await redis.admin.lpush(`${q.prefix}:queue`, raw);
    const l = (await q.lease(30_000))!;
    assert.deepEqual(idToBytes(l.id), raw);
    assert.equal(idFromBytes(raw), l.id);
    await assert.rejects(q.add(l.id, "new"), InvalidArgumentError);
    assert.equal(await q.complete(l.id), true);
  });

  test("a wrong-typed key is WRONG_TYPE, nothing written", async () => {
    const q = queue();
    await redis.admin.set(`${q.prefix}:queue`, "not a list");
    await assert.rejects(q.add("a", "A"), WrongTypeError);
    assert.equal(await redis.admin.exists(`${q.prefix}:item:a`), 0);
  });
});

describe("bad input", () => {
  test("typed errors before any I/O: nothing listens on the client's port", async () => {
    const client = createClient("redis://127.0.0.1:1");
    clients.push(client);
    const q = new Queue(client, "{bad}");
    const cases: (() => Promise<unknown>)[] = [
      () => q.add("", "x"),
      () => q.add("x".repeat(513), "x"),
      () => q.lease(0),
      () => q.lease(1000, { timeoutMs: 5 }),
      () => q.leaseMany({ count: 1001, leaseMs: 1000 }),
      () => q.renew({ id: "a" } as Lease, 1000),
      () => q.release(new Lease("a", "", "t"), { delayMs: -1 }),
      () => q.lightClean({ chunk: 0 }),
      () => q.setRetryPolicy({ backoff: "linear" as "fixed" }),
      () => q.fail(new Lease("a", "", "t"), { dead: true, delayMs: 5 }),
      () => q.completeAndLease([], { leaseMs: 1000 }),
    ];
    for (const call of cases) {
      await assert.rejects(call(), (e: unknown) => e instanceof InvalidArgumentError && e.code === "INVALID_ARGUMENT" && e instanceof RwqError);
    }
    assert.equal(client.status, "wait", "the client never connected");
  });

  test("prefixes: glob characters, reserved segments, shard form, cluster hash tag", () => {
    const client = createClient("redis://127.0.0.1:1");
    clients.push(client);
    for (const prefix of ["a*", "a:item:b", "{jobs#3}", ""]) assert.throws(() => new Queue(client, prefix), InvalidArgumentError);
  });

  test("a client that re-sends commands is refused (RWQ-FAIL-004)", () => {
    const plain = new Redis({ lazyConnect: true });
    assert.throws(() => new Queue(plain, "{q}"), /autoResendUnfulfilledCommands/);
    plain.disconnect();
  });

  test("a client refused when either setting re-sends, accepted only with both off (RWQ-FAIL-004)", () => {
    const made: Redis[] = [];
    const client = (options: RedisOptions): Redis => {
      const c = new Redis({ lazyConnect: true, ...options });
      made.push(c);
      return c;
    };
    // ioredis's default maxRetriesPerRequest (20) re-sends although auto re-send is off, and the mirror case.
    assert.throws(() => new Queue(client({ autoResendUnfulfilledCommands: false }), "{q}"), InvalidArgumentError);
    assert.throws(() => new Queue(client({ maxRetriesPerRequest: 0 }), "{q}"), InvalidArgumentError);
    assert.throws(() => new Queue(client({ autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 3 }), "{q}"), InvalidArgumentError);
    assert.throws(() => new Queue(client({ autoResendUnfulfilledCommands: true, maxRetriesPerRequest: 0 }), "{q}"), InvalidArgumentError);
    assert.ok(new Queue(client({ autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 }), "{q}"));
    for (const c of made) c.disconnect();
  });

  test("createClient keeps its no-resend settings over redisOptions that ask to re-send (RWQ-FAIL-004)", () => {
    const c = createClient("redis://127.0.0.1:1", { redisOptions: { maxRetriesPerRequest: 3, autoResendUnfulfilledCommands: true } });
    clients.push(c);
    const opts = (c as Redis).options;
    assert.equal(opts.maxRetriesPerRequest, 0);
    assert.equal(opts.autoResendUnfulfilledCommands, false);
    assert.ok(new Queue(c, "{q}"), "the client it made is accepted");
  });
});

describe("secrets", () => {
  test("tokens stay out of inspect, toString, JSON and error messages", async () => {
    const q = queue();
    await q.add("s", "S");
    const l = (await q.lease(30_000))!;
    for (const text of [inspect(l), String(l), JSON.stringify(l), inspect({ l }, { depth: 5 }), `${l}`]) {
      assert.ok(!text.includes(l.token), text);
    }
    await redis.admin.set(`${q.prefix}:lease:s`, "someone-else");
    const err = await q.release(l).catch((e: unknown) => e);
    assert.ok(err instanceof LeaseLostError);
    assert.ok(err instanceof Error && !err.message.includes(l.token) && !inspect(err).includes(l.token));
  });
});

describe("lost reply (RWQ-FAIL-004)", () => {
  test("a script whose reply is lost is a REDIS_ERROR and is not sent again", async () => {
    const proxy = await startProxy(redis.port);
    const client = createClient(proxy.url);
    clients.push(client);
    client.on("error", () => {});
    const q = new Queue(client, `t${++n}:{lost}`);
    await q.counts();
    proxy.dropNextReply();
    await assert.rejects(q.add("once", "1"), (e: unknown) => e instanceof RedisError && e.code === "REDIS_ERROR");
    await sleep(200); // a re-send would happen on the reconnect
    assert.equal(proxy.sent().split("EVALSHA").length - 1, 1, "the script was sent once");
    assert.equal((await q.counts()).queued, 1);
    await proxy.close();
  });
});

describe("retry, delay, dead set", () => {
  test("fail retries with the policy's backoff, then dead-letters with the detail", async () => {
    const q = queue();
    await q.setRetryPolicy({ maxAttempts: 2, backoff: "fixed", baseMs: 1, capMs: 0, jitterPct: 0 });
    assert.deepEqual(await q.getRetryPolicy(), {
      maxAttempts: 2, backoff: "fixed", baseMs: 1, capMs: 0, jitterPct: 0, deadMaxCount: 10_000, deadMaxAgeMs: 604_800_000,
    });
    assert.equal(await q.setRetryPolicyIfAbsent({ maxAttempts: 9 }), false);
    await q.add("f", "F");
    const l1 = (await q.lease(30_000))!;
    assert.equal(l1.attempt, 1);
    assert.deepEqual(await q.fail(l1, { reason: "boom" }), { outcome: "retry", delayMs: 1 });
    await sleep(5);
    const l2 = (await q.lease(30_000))!;
    assert.equal(l2.attempt, 2);
    assert.equal((await q.fail(l2, { reason: "boom again", detail: "stack" })).outcome, "dead");
    const [item] = await q.deadItems();
    assert.equal(item?.id, "f");
    assert.equal(item?.reason, "boom again");
    assert.equal(item?.detail, "stack");
    assert.equal((await q.deadItem("f"))?.data?.toString(), "F");
    assert.deepEqual(await q.requeueDead(["f", "nope"]), [true, false]);
    const l3 = (await q.lease(30_000))!;
    assert.equal(l3.attempt, 1, "requeued dead items start over");
    assert.equal((await q.fail(l3, { dead: true })).outcome, "dead");
    assert.deepEqual(await q.purgeDead(["f"]), [true]);
    await q.setRetryPolicy(null);
    assert.equal(await q.getRetryPolicy(), null);
  });

  test("delayed adds and releases", async () => {
    const q = queue();
    await q.add("d", "D", { delayMs: 60_000 });
    assert.deepEqual(await q.counts(), { queued: 0, processing: 0, delayed: 1, dead: 0 });
    assert.equal(await q.lease(1000), null);
    await q.add("r", "R");
    const l = (await q.lease(30_000))!;
    assert.equal(await q.release(l, { delayMs: 60_000 }), true);
    assert.equal((await q.counts()).delayed, 2);
  });
});

describe("profiles", () => {
  test("declared keys, flat in-flight and legacy lease key give the same results", async () => {
    for (const options of [{ declaredKeys: true }, { flatInFlight: true }, { legacyLeaseKey: true }]) {
      const q = queue(options);
      await q.addMany([{ id: "a", data: "A" }, { id: "b", data: "B" }]);
      const l = (await q.lease(30_000))!;
      assert.equal(l.id, "a");
      if (options.legacyLeaseKey) assert.equal(await redis.admin.exists(`${q.prefix}:leased_by_session:a`), 1);
      if (options.flatInFlight) assert.equal(await redis.admin.zcard(`${q.prefix}:in_flight`), 1);
      const r = await q.completeAndLease([l], { leaseMs: 30_000, requireLease: true });
      assert.deepEqual([r.outcomes, r.leases.map((x) => x.id)], [["done"], ["b"]]);
      assert.deepEqual(await q.counts(), { queued: 0, processing: 1, delayed: 0, dead: 0 });
    }
  });

  test("ack: too few replicas is NOT_REPLICATED, the write done", async () => {
    const q = queue({ ack: { replicas: 1, timeoutMs: 10 } });
    await assert.rejects(q.add("a", "A"), (e: unknown) => e instanceof RwqError && e.code === "NOT_REPLICATED");
    assert.equal((await q.counts()).queued, 1);
  });

  test("sharded: ids routed by crc32, leases in rotation, shard count checked", async () => {
    const client = createClient(redis.url);
    clients.push(client);
    const prefix = `s${++n}`;
    const s = new ShardedQueue(client, prefix, 4);
    queues.push(s);
    const ids = Array.from({ length: 20 }, (_, i) => `id${i}`);
    assert.deepEqual(await s.addMany(ids.map((id) => ({ id, data: id }))), ids.map(() => true));
    for (const id of ids) assert.equal(await redis.admin.exists(`{${prefix}#${s.shardOf(id)}}:item:${id}`), 1);
    const leased = new Set<string>();
    for (let l = await s.lease(30_000); l; l = await s.lease(30_000)) {
      leased.add(l.id);
      await s.complete(l, { requireLease: true });
    }
    assert.equal(leased.size, 20);
    const waiting = s.lease(30_000, { block: true, timeoutMs: 5000 });
    await sleep(30);
    await s.add("rung", "R");
    assert.equal((await waiting)?.id, "rung");
    await assert.rejects(new ShardedQueue(client, prefix, 3).counts(), ShardMismatchError);
  });
});
