import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  InvalidArgumentError, MAX_FIRE_SLOTS, Queue, Scheduler, ShardedQueue, createClient, nextSlots, parseSchedule, type Schedule,
} from "@rwq-protocol/rwq";
import { type Server1, sleep, startRedis } from "./helpers.js";

// Profile periodic (SPEC §23) against a real redis-server; every wait is bounded.

let redis: Server1;
const closers: (() => unknown)[] = [];
let n = 0;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

function queue(options: { declaredKeys?: boolean } = {}, prefix = `periodic${++n}:{q}`): Queue {
  const client = createClient(redis.url);
  const q = new Queue(client, prefix, options);
  closers.push(() => q.close(), () => client.disconnect());
  return q;
}

async function serverNow(): Promise<number> {
  const [s, us] = await redis.admin.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

async function untilServer(ms: number): Promise<void> {
  while ((await serverNow()) < ms) await sleep(50);
}

before(async () => {
  redis = await startRedis();
});
after(async () => {
  for (const c of closers) await c();
  await redis.stop();
});

describe("periodic", () => {
  test("put, list, replace, pause, resume and remove", async () => {
    const q = queue();
    const before = await serverNow();
    assert.equal(await q.putSchedule("s", { everyMs: 60_000 }, "hello"), true);
    let list = await q.schedules();
    const s = list.schedules[0]!;
    // the same text as the Python and Go clients write, so a put from any of them keeps the digest
    assert.equal(s.definition.toString(), '{"v":1,"every_ms":60000,"offset_ms":0,"missed":"skip","grace_ms":60000}');
    assert.equal(s.data.toString(), "hello");
    assert.ok(s.lastFiredMs! >= before && s.lastFiredMs! <= list.nowMs && s.pausedMs === null);
    const cron: Schedule = { cron: "30 2 * * *", tz: "Europe/London", missed: "once", graceMs: 0 };
    assert.equal(await q.putSchedule("s", cron, "two"), false);
    list = await q.schedules();
    assert.equal(list.schedules[0]!.definition.toString(), '{"v":1,"cron":"30 2 * * *","tz":"Europe/London","missed":"once","grace_ms":0}');
    assert.equal(list.schedules[0]!.lastFiredMs, s.lastFiredMs, "replacing keeps the watermark (RWQ-SCHED-013)");
    assert.deepEqual(list.schedules[0]!.schedule(), cron);
    assert.deepEqual([await q.pauseSchedule("s"), await q.pauseSchedule("s")], [true, false]);
    assert.notEqual((await q.schedules()).schedules[0]!.pausedMs, null);
    assert.deepEqual([await q.resumeSchedule("s"), await q.resumeSchedule("s")], [true, false]);
    assert.deepEqual([await q.removeSchedule("s"), await q.removeSchedule("s")], [true, false]);
    const p = "periodic1:{q}";
    assert.equal(await redis.admin.exists(`${p}:schedules`, `${p}:schedules:data`, `${p}:schedules:fired`, `${p}:schedules:paused`), 0);
  });

  test("fire adds each slot's item once; gone, stale and off-grid calls write nothing", async () => {
    const q = queue({ declaredKeys: true });
    await q.putSchedule("s", { everyMs: 1000 }, "P");
    const s = (await q.schedules()).schedules[0]!;
    const slot = (Math.floor(s.lastFiredMs! / 1000) + 1) * 1000;
    await untilServer(slot + 1000);
    const f = await q.fire("s", s.digest, [slot, slot + 1000, slot + 60_000]);
    assert.deepEqual([f.status, f.outcomes, f.lastFiredMs, f.added], ["ok", [1, 1, "early"], slot + 1000, [`s@${slot}`, `s@${slot + 1000}`]]);
    assert.equal(await redis.admin.get(`periodic2:{q}:item:s@${slot}`), "P");
    assert.deepEqual((await q.fire("s", s.digest, [slot])).outcomes, ["old"]);
    assert.equal((await q.fire("gone", s.digest, [slot + 2000])).status, "gone");
    assert.equal((await q.fire("s", "0".repeat(40), [slot + 2000])).status, "stale");
    await assert.rejects(q.fire("s", s.digest, [slot + 1]), InvalidArgumentError, "a slot off the grid (RWQ-SCHED-003)");
    assert.equal(await redis.admin.llen("periodic2:{q}:queue"), 2);
  });

  test("bad input is refused before any I/O", async () => {
    const closed = createClient("redis://127.0.0.1:1");
    const q = new Queue(closed, "jobs");
    const sq = new ShardedQueue(closed, "jobs", 2);
    const bad: unknown[] = [
      {}, { everyMs: 1000, cron: "* * * * *" }, { everyMs: 999 }, { everyMs: 31_536_000_001 }, { everyMs: "60000" },
      { everyMs: 1000.5 }, { everyMs: 1000, offsetMs: 1000 }, { everyMs: 1000, offsetMs: -1 }, { everyMs: 1000, tz: "Europe/London" },
      { everyMs: 1000, missed: "never" }, { everyMs: 1000, graceMs: -1 }, { everyMs: 1000, graceMs: 86_400_001 },
      { cron: "*".repeat(201) }, { cron: 5 }, { cron: "0 * * * * *" }, { cron: "0 0 30 2 *" }, { cron: "0 0 * * *", tz: "Europe/Lon don" },
      { cron: "0 0 * * *", tz: "Mars/Olympus" }, "every minute", [60000], null,
    ];
    const calls: (() => Promise<unknown>)[] = [];
    for (const s of bad) {
      calls.push(() => q.putSchedule("s", s as Schedule, "x"));
      calls.push(async () => nextSlots(s as Schedule, 0, 1));
    }
    for (const name of ["", ".a", "a@1", "a b", "é", "n".repeat(201), 5]) {
      calls.push(() => q.putSchedule(name as string, { everyMs: 1000 }), () => q.pauseSchedule(name as string));
      calls.push(() => q.fire(name as string, "a".repeat(40), [1000]));
    }
    const many = Array.from({ length: MAX_FIRE_SLOTS + 1 }, (_, i) => (i + 1) * 1000);
    for (const slots of [[], many, [2000, 1000], [1000, 1000], [-1000], [1e15 + 1], [1000.5]]) {
      calls.push(() => q.fire("s", "a".repeat(40), slots));
    }
    calls.push(() => q.fire("s", "NOT-A-DIGEST", [1000]));
    calls.push(async () => nextSlots({ everyMs: 1000 }, 0, 0), async () => nextSlots({ everyMs: 1000 }, 0, 101));
    calls.push(() => sq.putSchedule("s", { everyMs: 1000 }));
    calls.push(async () => new Scheduler(q, { heartbeatMs: 10_001, heartbeatTtlMs: 30_000 }));
    for (const call of calls) await assert.rejects(call(), InvalidArgumentError);
    q.close();
    await sq.close();
    closed.disconnect();
  });

  test("slot walks: the interval grid, a cron gap, skip and once", () => {
    assert.deepEqual(nextSlots({ everyMs: 60_000, offsetMs: 1000 }, 0, 3), [1000, 61_000, 121_000]);
    // 2024-03-31 in London: 01:30 falls in the gap and is read with +00:00
    assert.deepEqual(nextSlots({ cron: "30 1 * * *", tz: "Europe/London" }, 1_711_846_800_000, 2), [1_711_848_600_000, 1_711_931_400_000]);
    assert.deepEqual(parseSchedule('{"v":1,"every_ms":5000,"later":"ignored"}'), { everyMs: 5000 });
    for (const text of ['{"v":2,"every_ms":5000}', "{", "[1]", "null", '{"v":1}', '{"v":true,"every_ms":5000}', '{"v":1,"every_ms":5000.5}',
      '{"v":1,"every_ms":"5000"}', '{"v":1,"cron":"* * * * *","tz":""}', '{"v":1,"every_ms":5000,"missed":""}']) {
      assert.throws(() => parseSchedule(text), InvalidArgumentError, text);
    }
  });

  test("a scheduler fires due slots, skips unreadable definitions once, and says when the next slot is", async () => {
    const q = queue();
    const p = `periodic${n}:{q}`;
    await q.putSchedule("s", { everyMs: 1000 }, "P");
    await redis.admin.hset(`${p}:schedules`, "future", '{"v":2,"every_ms":1000}', "broken", "{");
    await redis.admin.hset(`${p}:schedules:fired`, "future", "0", "broken", "0");
    await q.putSchedule("paused", { everyMs: 1000 });
    await q.pauseSchedule("paused");
    const warned: string[] = [];
    const s = new Scheduler(q, { logger: { ...quiet, warn: (m) => warned.push(m) } });
    await untilServer((Math.floor((await serverNow()) / 1000) + 2) * 1000);
    const tick = await s.tick();
    assert.ok(tick.fired.length >= 1 && tick.fired.length <= 2 && tick.fired.every((id) => id.startsWith("s@")), String(tick.fired));
    assert.ok(tick.nextMs! > tick.nowMs && tick.nextMs! <= tick.nowMs + 1000 && tick.nextMs! % 1000 === 0, JSON.stringify(tick));
    const again = await s.tick();
    if (again.nowMs < tick.nextMs!) assert.deepEqual(again.fired, []);
    assert.equal(warned.length, 2, warned.join("\n"));
  });

  test("run registers a live worker of kind scheduler, fires each slot once and leaves", async () => {
    const q = queue();
    await q.putSchedule("tick", { everyMs: 1000 });
    const s = new Scheduler(q, { logger: quiet });
    const running = s.run(AbortSignal.timeout(2500));
    await sleep(500);
    const live = await q.workers();
    assert.equal(live.length, 1);
    assert.equal(live[0]!.id, s.id);
    assert.equal(live[0]!.record.kind, "scheduler");
    assert.equal(live[0]!.record.language, "typescript");
    assert.notEqual(live[0]!.record.started_ms, null);
    await running;
    const ids = await redis.admin.lrange(`periodic${n}:{q}:queue`, 0, -1);
    assert.ok(ids.length >= 2 && ids.length <= 3, String(ids));
    assert.deepEqual(await q.workers(), []);
  });

  test("eight schedulers at once for 4 s: every slot one item, none twice, none lost", async () => {
    const prefix = `periodic${++n}:{q}`;
    const queues = [queue({}, prefix), queue({ declaredKeys: true }, prefix)];
    for (const name of ["a", "b", "c"]) await queues[0]!.putSchedule(name, { everyMs: 1000 });
    const starts = new Map((await queues[0]!.schedules()).schedules.map((s) => [s.name, s.lastFiredMs!]));
    const signal = AbortSignal.timeout(4000);
    await Promise.all(Array.from({ length: 8 }, (_, i) => new Scheduler(queues[i % 2]!, { logger: quiet, heartbeatMs: null }).run(signal)));
    const ids = await redis.admin.lrange(`${prefix}:queue`, 0, -1);
    assert.equal(new Set(ids).size, ids.length, "no slot twice");
    let total = 0;
    for (const s of (await queues[0]!.schedules()).schedules) {
      for (let slot = (Math.floor(starts.get(s.name)! / 1000) + 1) * 1000; slot <= s.lastFiredMs!; slot += 1000, total++) {
        assert.ok(ids.includes(`${s.name}@${slot}`), `${s.name}@${slot} was lost`);
      }
    }
    assert.equal(total, ids.length);
    assert.ok(total >= 9 && total <= 15, `${total} slots in about 4 s of three 1 s schedules`);
  });
});
