#!/usr/bin/env node
/** rwq-interop: plays one role on a queue that Python and Go programs share, for the interop tests
 * (tests/test_interop_langs.py): `rwq-interop ROLE REDIS_URL PREFIX`, the role's options as one
 * JSON object on stdin, what it did as one JSON object on stdout (a worker first prints "ready" on
 * a line of its own). Roles: produce, lease, clean, work, dead, schedule. It only maps JSON to the package's
 * calls; the Worker is the package's own. */
import { Queue, Scheduler, ShardedQueue, Worker, createClient, type CleanReport, type RetryPolicy } from "@rwq-protocol/rwq";

interface Options {
  shards?: number;
  items?: { id: string; data: string; delay_ms?: number }[]; // data: base64
  policy?: { max_attempts: number; backoff: "fixed" | "exponential"; base_ms: number; cap_ms?: number; jitter_pct?: number } | null;
  count?: number;
  lease_ms?: number;
  block_ms?: number;
  complete?: boolean;
  concurrency?: number;
  done_key?: string;
  handler_ms?: number;
  deadline_ms?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stderr = (message: string) => process.stderr.write(`${message}\n`);
const leased = (l: { id: string; data: Buffer; attempt: number }) => ({ id: l.id, data: l.data.toString("base64"), attempt: l.attempt });
const report = (r: CleanReport) => ({ requeued: r.requeued, dropped: r.dropped, dead: r.dead, promoted: r.promoted });

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function main(): Promise<void> {
  const [role, url, prefix] = process.argv.slice(2);
  if (!role || !url || !prefix) throw new Error("usage: rwq-interop produce|lease|clean|work|dead|schedule REDIS_URL PREFIX < options.json");
  const opts = JSON.parse(await readStdin()) as Options;
  const redis = createClient(url);
  const queue = opts.shards ? new ShardedQueue(redis, prefix, opts.shards) : new Queue(redis, prefix);
  try {
    process.stdout.write(`${JSON.stringify(await play(role, redis, queue, opts))}\n`);
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

async function play(role: string, redis: ReturnType<typeof createClient>, queue: Queue | ShardedQueue, opts: Options): Promise<unknown> {
  switch (role) {
    case "produce": {
      // The policy first, if given; then the items in order, each delayed by its delay_ms.
      if (opts.policy) {
        const p = opts.policy;
        const policy: Partial<RetryPolicy> = { maxAttempts: p.max_attempts, backoff: p.backoff, baseMs: p.base_ms };
        if (p.cap_ms !== undefined) policy.capMs = p.cap_ms;
        if (p.jitter_pct !== undefined) policy.jitterPct = p.jitter_pct;
        await queue.setRetryPolicy(policy);
      }
      const added: boolean[] = [];
      for (const it of opts.items ?? []) {
        added.push(await queue.add(it.id, Buffer.from(it.data, "base64"), it.delay_ms ? { delayMs: it.delay_ms } : {}));
      }
      return { added };
    }
    case "lease": {
      // Up to count items, completed if asked; otherwise held, as by a consumer that crashed.
      const got = [];
      const completed: boolean[] = [];
      for (let i = 0; i < (opts.count ?? 1); i++) {
        const block = (opts.block_ms ?? 0) > 0;
        const lease = await queue.lease(opts.lease_ms ?? 30_000, block ? { block, timeoutMs: opts.block_ms! } : {});
        if (!lease) break;
        got.push(leased(lease));
        if (opts.complete) completed.push(await queue.complete(lease, { requireLease: true }));
      }
      return { leased: got, completed };
    }
    case "clean":
      return { light: report(await queue.lightClean()), deep: report(await queue.deepClean()) };
    case "schedule": {
      // The package's Scheduler for deadline_ms; the ids it fired, from its log.
      if (!(queue instanceof Queue)) throw new Error("schedule needs a queue that is not sharded");
      const fired: string[] = [];
      const info = (m: string) => {
        const found = /^rwq: fired (\S+)$/.exec(m);
        if (found) fired.push(found[1]!);
      };
      await new Scheduler(queue, { logger: { info, warn: stderr, error: stderr } }).run(AbortSignal.timeout(opts.deadline_ms ?? 5000));
      return { fired };
    }
    case "dead": {
      // The dead items, each read again by id for its payload.
      const listed = await queue.deadItems({ count: 1000 });
      const items = await Promise.all(listed.map(async (d) => (await queue.deadItem(d.id)) ?? d));
      return items.map((d) => ({
        id: d.id, dead_at_ms: d.deadAtMs, reason: d.reason, attempts: d.attempts, detail: d.detail,
        ...(d.data ? { data: d.data.toString("base64") } : {}),
      }));
    }
    case "work":
      return work(redis, queue, opts);
    default:
      throw new Error(`unknown role ${role}`);
  }
}

/** The package's Worker (no light cleans of its own: recovering items is the cleaner's role) with
 * a handler that fails ids "fail-*" always and "flaky-*" at their first attempt, until done_key
 * exists and the queue holds nothing queued, processing or delayed. */
async function work(redis: ReturnType<typeof createClient>, queue: Queue | ShardedQueue, opts: Options): Promise<unknown> {
  const calls: { id: string; data: string; attempt: number; ok: boolean }[] = [];
  const worker = new Worker(
    queue,
    async (job) => {
      if (opts.handler_ms) await sleep(opts.handler_ms);
      const ok = !job.id.startsWith("fail-") && !(job.id.startsWith("flaky-") && job.attempt === 1);
      calls.push({ ...leased(job), ok });
      if (!ok) throw new Error(`typescript handler failed ${job.id} at attempt ${job.attempt}`);
    },
    {
      concurrency: opts.concurrency ?? 1, leaseMs: opts.lease_ms ?? 30_000, pollTimeoutMs: 100, cleanIntervalMs: null,
      shutdownGraceMs: 5000, logger: { info: () => {}, warn: stderr, error: stderr },
    },
  );
  const deadline = Date.now() + Math.max(opts.deadline_ms ?? 0, 1000);
  process.stdout.write("ready\n");
  const running = worker.run();
  let timedOut = false;
  for (;;) {
    await sleep(50);
    if (Date.now() > deadline) {
      timedOut = true;
      break;
    }
    if (!(await redis.exists(opts.done_key ?? ""))) continue;
    const c = await queue.counts();
    if (c.queued + c.processing + c.delayed === 0) break;
  }
  worker.stop();
  const stats = await running;
  return { calls, stats, timed_out: timedOut };
}

main().catch((err: unknown) => {
  stderr(`rwq-interop: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
