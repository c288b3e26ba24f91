import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Cluster } from "ioredis";
import { InvalidArgumentError, Queue, ShardedQueue, Worker, createClient } from "@rwq-protocol/rwq";
import { sleep, startCluster } from "./helpers.js";

let cluster: Awaited<ReturnType<typeof startCluster>>;
let client: ReturnType<typeof createClient>;

before(async () => {
  cluster = await startCluster();
  client = createClient(cluster.url, { cluster: true, connectionName: "rwq-ts-test" });
});
after(async () => {
  client.disconnect();
  await cluster.stop();
});

test("a queue on a Redis Cluster: every operation routed to its slot's master", async () => {
  assert.ok(client instanceof Cluster);
  assert.throws(() => new Queue(client, "no-tag"), InvalidArgumentError);
  const q = new Queue(client, "c:{jobs}");
  try {
    await q.addMany([{ id: "a", data: "A" }, { id: "b", data: "B" }]);
    const l = (await q.lease(30_000))!;
    assert.equal(l.id, "a");
    const r = await q.completeAndLease([l], { leaseMs: 30_000, requireLease: true });
    assert.deepEqual(r.outcomes, ["done"]);
    assert.equal(r.leases[0]?.id, "b");
    await q.release(r.leases[0]!);
    const waiting = q.lease(30_000, { block: true, timeoutMs: 3000 });
    assert.equal((await waiting)?.id, "b");
    await client.set("c:{jobs}:item:orphan", "O");
    assert.deepEqual((await q.deepClean()).requeued, ["orphan"]);
  } finally {
    await q.close();
  }
});

test("a sharded queue spreads its shards over the masters, and a worker drains it", async () => {
  const s = new ShardedQueue(client, "cs", 6);
  try {
    const ids = Array.from({ length: 40 }, (_, i) => `j${i}`);
    await s.addMany(ids.map((id) => ({ id, data: id })));
    const done = new Set<string>();
    const w = new Worker(s, async (job) => {
      done.add(job.id);
    }, { pollTimeoutMs: 50, concurrency: 3, logger: { info: () => {}, warn: () => {}, error: () => {} } });
    const running = w.run();
    for (let i = 0; i < 500 && done.size < 40; i++) await sleep(10);
    w.stop();
    await running;
    assert.equal(done.size, 40);
    assert.deepEqual(await s.counts(), { queued: 0, processing: 0, delayed: 0, dead: 0 });
  } finally {
    await s.close();
  }
});
