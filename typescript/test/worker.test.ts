import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type HandlerContext, InvalidArgumentError, type Lease, NonRetryable, Queue, RetryLater, Worker, type WorkerOptions, createClient } from "@rwq-protocol/rwq";
import { type Server1, sleep, startRedis } from "./helpers.js";

let redis: Server1;
const closers: (() => unknown)[] = [];
let n = 0;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const logs: string[] = [];
const recording = { info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m), error: (m: string) => logs.push(m) };

function queue(prefix = `w${++n}:{q}`): Queue {
  const client = createClient(redis.url);
  const q = new Queue(client, prefix);
  closers.push(() => q.close(), () => client.disconnect());
  return q;
}

/** Runs a worker until `until` holds (checked every 10 ms, at most 10 s), then stops it. */
async function runUntil(w: Worker, until: () => Promise<boolean> | boolean): Promise<void> {
  const running = w.run();
  const deadline = Date.now() + 10_000;
  while (!(await until()) && Date.now() < deadline) await sleep(10);
  w.stop();
  await running;
}

const fast: WorkerOptions = { pollTimeoutMs: 50, logger: quiet, retry: { maxAttempts: 3, backoff: "fixed", baseMs: 1, jitterPct: 0 } };

before(async () => {
  redis = await startRedis();
});
after(async () => {
  for (const c of closers) await c();
  await redis.stop();
});

describe("Worker", () => {
  test("runs every item once and completes it, within its concurrency", async () => {
    const q = queue();
    await q.addMany(Array.from({ length: 30 }, (_, i) => ({ id: `i${i}`, data: String(i) })));
    const seen: string[] = [];
    let running = 0;
    let most = 0;
    const w = new Worker(q, async (job) => {
      running++;
      most = Math.max(most, running);
      await sleep(5);
      seen.push(job.data.toString());
      running--;
    }, { ...fast, concurrency: 4 });
    await runUntil(w, () => seen.length === 30);
    assert.equal(new Set(seen).size, 30);
    assert.ok(most <= 4 && most > 1, `concurrency ${most}`);
    assert.deepEqual(await q.counts(), { queued: 0, processing: 0, delayed: 0, dead: 0 });
    assert.equal(w.stats.completed, 30);
  });

  test("offers its policy; a thrown error is a failed attempt, dead-lettered with its stack", async () => {
    const q = queue();
    await q.add("bad", "B");
    const w = new Worker(q, async () => {
      throw new Error("always broken");
    }, fast);
    await runUntil(w, async () => (await q.counts()).dead === 1);
    assert.equal((await q.getRetryPolicy())?.maxAttempts, 3);
    const [dead] = await q.deadItems();
    assert.equal(dead?.reason, "Error: always broken");
    assert.equal(dead?.attempts, 3);
    assert.match(dead?.detail ?? "", /always broken\n\s+at /);
    assert.equal(w.stats.dead, 1);
  });

  test("the stored policy wins over the worker's, with a warning (RWQ-WORKER-003)", async () => {
    const q = queue();
    await q.setRetryPolicy({ maxAttempts: 7 });
    logs.length = 0;
    const w = new Worker(q, async () => {}, { ...fast, logger: recording });
    await runUntil(w, () => true);
    assert.equal((await q.getRetryPolicy())?.maxAttempts, 7);
    assert.ok(logs.some((m) => m.includes("keeps its stored retry policy") && m.includes("rwq policy set")));
  });

  test("NonRetryable dead-letters now; RetryLater delays the retry", async () => {
    const q = queue();
    await q.addMany([{ id: "nr", data: "" }, { id: "later", data: "" }]);
    const w = new Worker(q, async (job) => {
      if (job.id === "nr") throw new NonRetryable("bad payload");
      throw new RetryLater(60_000);
    }, fast);
    await runUntil(w, async () => {
      const c = await q.counts();
      return c.dead === 1 && c.delayed === 1;
    });
    const [dead] = await q.deadItems();
    assert.deepEqual([dead?.id, dead?.attempts, dead?.reason], ["nr", 1, "NonRetryable: bad payload"]);
    const due = Number(await redis.admin.zscore(`${q.prefix}:delayed`, "later"));
    const [sec] = await redis.admin.time();
    assert.ok(due - Number(sec) * 1000 > 50_000, "retried in about a minute");
  });

  test("without a policy a failure waits the fallback delay (RWQ-WORKER-002)", async () => {
    const q = queue();
    await q.add("f", "F");
    const w = new Worker(q, async () => {
      throw new RetryLater(1);
    }, { ...fast, retry: null });
    await runUntil(w, async () => (await q.counts()).delayed === 1);
    const due = Number(await redis.admin.zscore(`${q.prefix}:delayed`, "f"));
    const [sec, usec] = await redis.admin.time();
    assert.ok(due - (Number(sec) * 1000 + Number(usec) / 1000) > 500, "raised to the 1 s fallback");
    assert.equal(await q.getRetryPolicy(), null);
  });

  test("a handler past timeoutMs is aborted and its item failed", async () => {
    const q = queue();
    await q.add("slow", "S");
    let reason: unknown;
    const w = new Worker(q, (job: HandlerContext) => new Promise((_, reject) => {
      job.signal.addEventListener("abort", () => {
        reason = job.signal.reason;
        reject(job.signal.reason);
      });
    }), { ...fast, timeoutMs: 50, retry: { maxAttempts: 1 } });
    await runUntil(w, async () => (await q.counts()).dead === 1);
    assert.equal((reason as Error).name, "TimeoutError");
    assert.match((await q.deadItems())[0]?.reason ?? "", /^TimeoutError: the handler ran longer than 50 ms/);
  });

  test("a timed-out handler that ignores its signal still holds its slot", async () => {
    const q = queue();
    await q.addMany([{ id: "stubborn", data: "" }, { id: "next", data: "" }]);
    let running = 0;
    let most = 0;
    const w = new Worker(q, async () => {
      running++;
      most = Math.max(most, running);
      await sleep(150); // ignores job.signal
      running--;
    }, { ...fast, timeoutMs: 20, retry: { maxAttempts: 1 } });
    await runUntil(w, async () => (await q.counts()).dead === 2);
    assert.equal(most, 1, "never two handlers at once with concurrency 1");
  });

  test("an item leased again while its earlier run goes on here waits for that run", async () => {
    const q = queue();
    await q.add("twice", "");
    let running = 0;
    let most = 0;
    let runs = 0;
    const w = new Worker(q, async () => {
      runs++;
      running++;
      most = Math.max(most, running);
      if (runs === 1) {
        await redis.admin.del(`${q.prefix}:lease:twice`); // the lease is lost...
        await q.lightClean(); // ...and the item requeued, to be leased again by this worker
      }
      await sleep(100);
      running--;
    }, { ...fast, concurrency: 2 });
    await runUntil(w, () => runs === 2 && running === 0);
    assert.equal(most, 1, "the two runs of one id did not overlap");
  });

  test("leases are renewed while a handler runs past its lease time", async () => {
    const q = queue();
    await q.add("long", "L");
    let runs = 0;
    const w = new Worker(q, async () => {
      runs++;
      await sleep(900); // three lease times
    }, { ...fast, leaseMs: 300, renewIntervalMs: 50, cleanIntervalMs: 20 });
    await runUntil(w, () => w.stats.completed === 1);
    assert.equal(runs, 1, "never requeued by the light cleans while it ran");
    assert.equal(w.stats.lost, 0);
  });

  test("a stop lets handlers finish within the grace, then gives items back refunded (RWQ-WORKER-004)", async () => {
    const q = queue();
    await q.setRetryPolicy({ maxAttempts: 5 });
    await q.add("stuck", "S");
    let aborted = false;
    let started = false;
    const stop = new AbortController();
    const w = new Worker(q, (job) => new Promise((resolve) => {
      started = true;
      job.signal.addEventListener("abort", () => {
        aborted = true;
        resolve(undefined);
      });
    }), { ...fast, shutdownGraceMs: 50, signal: stop.signal });
    const running = w.run();
    while (!started) await sleep(5);
    stop.abort();
    const stats = await running;
    assert.ok(aborted, "the handler was told to stop");
    assert.equal(stats.released, 1);
    assert.deepEqual(await q.counts(), { queued: 1, processing: 0, delayed: 0, dead: 0 });
    const again = await q.lease(1000);
    assert.equal(again?.attempt, 1, "the attempt was refunded");
  });

  test("a handler that ends after its lease was lost and the item taken over does not complete it", async () => {
    for (const stopFirst of [false, true]) { // completeAndLease while running; complete while stopping
      const q = queue();
      const other = queue(q.prefix); // another worker's client
      await q.add("x", "X");
      let taken: Lease | null = null;
      const w = new Worker(q, async () => {
        // Its lease runs out before a renewal (the key's expiry, done at once) and another worker takes the item.
        await redis.admin.del(`${q.prefix}:lease:x`);
        assert.deepEqual((await other.lightClean()).requeued, ["x"]);
        taken = await other.lease(30_000);
        if (stopFirst) w.stop();
      }, { ...fast, leaseMs: 300, renewIntervalMs: 250, cleanIntervalMs: null });
      await runUntil(w, () => w.stats.lost + w.stats.completed > 0);
      assert.equal((taken as Lease | null)?.id, "x", "the other worker holds the item");
      assert.equal(w.stats.lost, 1, `stop first: ${stopFirst}`);
      assert.equal(w.stats.completed, 0);
      assert.equal(await redis.admin.exists(`${q.prefix}:item:x`), 1, "the item still exists");
      assert.equal(await other.complete(taken!, { requireLease: true }), true, "its holder completes it");
    }
  });

  test("leases are still renewed during the grace period after stop()", async () => {
    const q = queue();
    await q.add("slow", "S");
    let started = false;
    const w = new Worker(q, async () => {
      started = true;
      await sleep(1000); // past three lease times
    }, { ...fast, leaseMs: 300, renewIntervalMs: 100, shutdownGraceMs: 2000, cleanIntervalMs: null });
    const running = w.run();
    while (!started) await sleep(5);
    await sleep(50);
    w.stop();
    await sleep(550);
    assert.equal(await redis.admin.exists(`${q.prefix}:lease:slow`), 1, "the lease is held 600 ms in, twice its lease time");
    assert.deepEqual((await queue(q.prefix).lightClean()).requeued, [], "a light clean requeues nothing");
    const stats = await running;
    assert.equal(stats.completed, 1);
    assert.equal(stats.lost, 0);
  });

  test("a lease that comes back while the worker stops is given back refunded (RWQ-WORKER-004)", async () => {
    const q = queue();
    await q.setRetryPolicy({ maxAttempts: 5 });
    const ran: string[] = [];
    const w = new Worker(q, async (job) => {
      ran.push(job.id);
    }, { ...fast, pollTimeoutMs: 5000, cleanIntervalMs: null });
    const running = w.run();
    // Wait until its blocking lease waits on the server (BLMOVE, a step of a second).
    const deadline = Date.now() + 5000;
    const blocked = async () => String(await redis.admin.call("CLIENT", "LIST")).split("\n").some((c) => / flags=b /.test(c) && c.includes(" cmd=blmove "));
    while (!(await blocked()) && Date.now() < deadline) await sleep(5);
    w.stop();
    await q.add("late", "L"); // the waiting BLMOVE takes it: the lease comes back after the stop
    const stats = await running;
    assert.deepEqual(ran, [], "not run after the stop");
    assert.equal(stats.released, 1);
    assert.deepEqual(await q.counts(), { queued: 1, processing: 0, delayed: 0, dead: 0 });
    const again = await q.lease(1000);
    assert.equal(again?.id, "late");
    assert.equal(again?.attempt, 1, "the attempt was refunded");
  });

  test("a worker that may not store its policy on a queue without one refuses to start (RWQ-WORKER-001)", async () => {
    await redis.admin.call("ACL", "SETUSER", "reader", "on", ">pw", "+@all", "~{acl}:queue", "~{acl}:processing", "%R~{acl}:*");
    const client = createClient(redis.url.replace("redis://", "redis://reader:pw@"));
    const q = new Queue(client, "{acl}");
    closers.push(() => q.close(), () => client.disconnect());
    const w = new Worker(q, async () => {}, fast);
    await assert.rejects(w.run(), (e: unknown) => e instanceof Error && /no retry policy.*rwq policy set --prefix \{acl\}/.test(e.message) && !e.message.includes("\n"));
    assert.equal(await redis.admin.exists("{acl}:policy"), 0);
    const without = new Worker(q, async () => {}, { ...fast, retry: null });
    const running = without.run();
    without.stop();
    await running; // runs without a policy when told to
  });

  test("its light cleans on a timer bring back an item a crashed worker left", async () => {
    const q = queue();
    await q.add("abandoned", "A");
    assert.ok(await q.lease(1)); // a worker that crashed: its lease runs out, the item stays in processing
    const ran: string[] = [];
    const w = new Worker(q, async (job) => {
      ran.push(job.id);
    }, { ...fast, cleanIntervalMs: 20 });
    await runUntil(w, () => ran.length === 1);
    assert.deepEqual(ran, ["abandoned"]);
  });

  test("bad options are refused before any I/O", () => {
    const q = queue();
    assert.throws(() => new Worker(q, async () => {}, { concurrency: 0 }), { code: "INVALID_ARGUMENT" });
    assert.throws(() => new Worker(q, async () => {}, { leaseMs: 100, renewIntervalMs: 100 }), { code: "INVALID_ARGUMENT" });
    assert.throws(() => new Worker(q, async () => {}, { retry: { maxAttempts: -1 } }), InvalidArgumentError);
    assert.throws(() => new Worker(q, "not a function" as never), InvalidArgumentError);
  });
});
