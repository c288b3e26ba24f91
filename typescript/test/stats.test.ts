import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Queue, type QueueStats, ShardedQueue, type StatCounts, WrongTypeError, createClient } from "@rwq-protocol/rwq";
import { summed } from "../src/stats.js";
import { type Server1, startRedis } from "./helpers.js";

// Profile stats (SPEC §22) against a real redis-server.

let redis: Server1;
const closers: (() => unknown)[] = [];
let n = 0;

function client(): ReturnType<typeof createClient> {
  const c = createClient(redis.url);
  closers.push(() => c.disconnect());
  return c;
}

function queue(options = {}): Queue {
  const q = new Queue(client(), `stats${++n}:{q}`, options);
  closers.push(() => q.close());
  return q;
}

/** Waits up to 2 s for MONITOR, which lags behind the calls, to have seen what a test needs. */
async function seen(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** What was counted this minute and the one before (a read may fall just after a minute's end). */
function counted(s: QueueStats): StatCounts {
  const c = s.current;
  const w = s.windows[1];
  return { added: c.added + w.added, completed: c.completed + w.completed, failed: c.failed + w.failed, dead: c.dead + w.dead, recovered: c.recovered + w.recovered };
}

before(async () => {
  redis = await startRedis();
});
after(async () => {
  for (const c of closers) await c();
  await redis.stop();
});

describe("stats", () => {
  test("enable once, the scripts count, disable deletes both keys", async () => {
    const q = queue();
    const off = await q.stats();
    assert.deepEqual([off.enabled, off.sinceMs, off.series.length, off.minute], [false, null, 61, Math.floor(off.nowMs / 60_000)]);
    assert.equal(await q.enableStats(), true);
    assert.equal(await q.enableStats(), false);
    const since = Number(await redis.admin.get(`${q.prefix}:stats`));
    await q.addMany(["a", "b", "c", "a"].map((id) => ({ id, data: "x" })));
    await q.complete((await q.lease(30_000))!, { requireLease: true });
    await q.fail((await q.lease(30_000))!, { reason: "boom", dead: true });
    const s = await q.stats();
    assert.equal(s.enabled, true);
    assert.equal(s.sinceMs, since);
    assert.deepEqual(counted(s), { added: 3, completed: 1, failed: 1, dead: 1, recovered: 0 });
    assert.equal(await q.disableStats(), true);
    assert.equal(await q.disableStats(), false);
    assert.equal(await redis.admin.exists(`${q.prefix}:stats`, `${q.prefix}:stats:series`), 0);
  });

  test("windows sum exactly the complete minutes before the current one; rates per second", async () => {
    const q = queue();
    await q.enableStats();
    let s!: QueueStats;
    for (let attempt = 0; attempt < 3; attempt++) { // written and read within one minute of the server's clock
      const m = (await q.stats()).minute;
      const fields: Record<string, number> = { [`${m - 2}:added`]: 3 };
      for (const [back, count] of [[0, 7], [1, 1], [5, 10], [15, 100], [60, 1000], [61, 10000]]) fields[`${m - back!}:completed`] = count!;
      await redis.admin.hset(`${q.prefix}:stats:series`, fields);
      s = await q.stats();
      if (s.minute === m) break;
    }
    assert.deepEqual([s.current.completed, s.windows[1].completed, s.windows[5].completed, s.windows[15].completed, s.windows[60].completed], [7, 1, 11, 111, 1111]);
    assert.deepEqual([s.windows[1].added, s.windows[5].added], [0, 3]);
    assert.equal(s.rates[5].completed, 11 / 300);
    assert.equal(s.rates[60].added, 3 / 3600);
  });

  test("wrong types: a broken series counts nothing and fails nothing; stats throws WRONG_TYPE", async () => {
    const q = queue();
    await q.enableStats();
    await redis.admin.set(`${q.prefix}:stats:series`, "x");
    assert.equal(await q.add("a", "x"), true);
    await assert.rejects(q.stats(), WrongTypeError);
    await redis.admin.del(`${q.prefix}:stats`);
    await redis.admin.hset(`${q.prefix}:stats`, "f", "v");
    await assert.rejects(q.enableStats(), WrongTypeError);
    await assert.rejects(q.add("b", "x"), WrongTypeError);
  });

  test("declared keys: the stats calls name P:stats and P:stats:series", async () => {
    const q = queue({ declaredKeys: true });
    const sent: string[][] = [];
    const monitor = await redis.admin.monitor();
    closers.push(() => monitor.disconnect());
    monitor.on("monitor", (_time: string, args: string[]) => sent.push(args));
    await q.enableStats();
    await q.add("a", "x");
    assert.equal(counted(await q.stats()).added, 1);
    const statsCalls = () => sent.filter((a) => /^eval(sha)?$/i.test(a[0] ?? "") && ["enable", "read"].includes(a[a.length - 1]!));
    await seen(() => statsCalls().length >= 2);
    assert.ok(statsCalls().length >= 2); // an EVALSHA refused NOSCRIPT, then its EVAL, may both show
    for (const call of statsCalls()) assert.deepEqual(call.slice(2, 6), ["3", `${q.prefix}:queue`, `${q.prefix}:stats`, `${q.prefix}:stats:series`]);
  });

  test("sharded: every shard on and off, shard 0 first; the read sums the shards", async () => {
    const c = client();
    const prefix = `stats-sharded${++n}`;
    const s = new ShardedQueue(c, prefix, 3);
    closers.push(() => s.close());
    const order: string[] = [];
    const monitor = await redis.admin.monitor();
    closers.push(() => monitor.disconnect());
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (args[args.length - 1] === "enable") order.push(args[3]!);
    });
    assert.equal(await s.enableStats(), true);
    assert.equal(await s.enableStats(), false);
    await s.addMany(["a", "b", "c", "d", "e"].map((id) => ({ id, data: "x" })));
    let st = await s.stats();
    assert.equal(st.enabled, true);
    assert.equal(counted(st).added, 5);
    await redis.admin.del(`{${prefix}#1}:stats`);
    st = await s.stats();
    assert.deepEqual([st.enabled, st.sinceMs], [false, null]);
    assert.equal(await s.disableStats(), true);
    assert.equal(await redis.admin.exists(`{${prefix}#0}:stats`, `{${prefix}#2}:stats`), 0);
    const want = [0, 1, 2, 0, 1, 2].map((i) => `{${prefix}#${i}}:queue`);
    await seen(() => order.length >= want.length);
    assert.deepEqual(order, want);
  });

  test("a shard read in the minute before adds its counts one step older", () => {
    const zero = { added: 0, completed: 0, failed: 0, dead: 0, recovered: 0 };
    const read = (minute: number, last: number, sinceMs: number): QueueStats => {
      const series = Array.from({ length: 61 }, () => ({ ...zero }));
      [series[0]!.added, series[59]!.added, series[60]!.added] = [1000, 10, last];
      return { enabled: true, sinceMs, nowMs: minute * 60_000 + 1, minute, current: series[60]!, windows: {} as QueueStats["windows"], rates: {} as QueueStats["rates"], series };
    };
    const m = 29_000_000;
    const s = summed([read(m - 1, 1, 5), read(m, 2, 7)]);
    assert.deepEqual([s.minute, s.sinceMs, s.current.added, s.series[59]!.added, s.series[58]!.added, s.series[0]!.added, s.windows[60].added], [m, 7, 2, 11, 10, 1000, 1021]);
  });
});
