import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { InvalidArgumentError, Queue, Worker, createClient } from "@rwq-protocol/rwq";
import { type Server1, sleep, startRedis } from "./helpers.js";

// Profile workers (SPEC §21) against a real redis-server; every wait is bounded.

let redis: Server1;
const closers: (() => unknown)[] = [];
let n = 0;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

function queue(client = createClient(redis.url)): Queue {
  const q = new Queue(client, `live${++n}:{q}`);
  closers.push(() => q.close(), () => client.disconnect());
  return q;
}

before(async () => {
  redis = await startRedis();
});
after(async () => {
  for (const c of closers) await c();
  await redis.stop();
});

describe("live workers", () => {
  test("a beat is listed with its deadline and leaves", async () => {
    const q = queue();
    const b = await q.workerBeat("w1", 30_000, { host: "h", items: ["a", "é"] });
    assert.deepEqual(await q.workers(), [{ id: "w1", record: { host: "h", items: ["a", "é"] }, deadlineMs: b.nowMs + 30_000 }]);
    assert.equal(await q.workerLeave("w1"), true);
    assert.equal(await q.workerLeave("w1"), false);
    assert.deepEqual(await q.workers(), []);
  });

  test("bad input is refused before any I/O", async () => {
    const closed = createClient("redis://127.0.0.1:1");
    const q = new Queue(closed, "jobs");
    const calls: (() => Promise<unknown>)[] = [
      () => q.workerBeat("w", 999, {}),
      () => q.workerBeat("w", 3_600_001, {}),
      () => q.workerBeat("w", 1.5, {}),
      () => q.workerBeat("", 30_000, {}),
      () => q.workerBeat("w".repeat(65), 30_000, {}),
      () => q.workerBeat("w 1", 30_000, {}),
      () => q.workerBeat("w", 30_000, [] as unknown as Record<string, unknown>),
      () => q.workerBeat("w", 30_000, { a: "x".repeat(4089) }),
      () => q.workerLeave("w/1"),
      () => q.workers({ count: 0 }),
      () => q.workers({ offset: -1 }),
    ];
    for (const call of calls) await assert.rejects(call(), InvalidArgumentError);
    q.close();
    closed.disconnect();
  });

  test("a worker shows up within one interval, with its counts, and leaves when stopped", async () => {
    const q = queue();
    await q.addMany([{ id: "a", data: Buffer.from("x") }, { id: "b", data: Buffer.from("y") }]);
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    setTimeout(release, 10_000).unref(); // bounded even if an assertion fails first
    const w = new Worker(q, async (job) => {
      if (job.id === "b") await held;
    }, { heartbeatMs: 200, heartbeatTtlMs: 1000, pollTimeoutMs: 50, logger: quiet });
    const running = w.run();
    const deadline = Date.now() + 5000;
    let seen = await q.workers();
    while (!(seen.length === 1 && seen[0]!.record.in_hand === 1 && seen[0]!.record.completed === 1) && Date.now() < deadline) {
      await sleep(20);
      seen = await q.workers();
    }
    assert.equal(seen[0]?.id, w.id);
    assert.deepEqual(seen[0]!.record.items, ["b"]);
    assert.equal(typeof seen[0]!.record.started_ms, "number");
    release();
    w.stop();
    await running;
    assert.deepEqual(await q.workers(), []);
  });
});
