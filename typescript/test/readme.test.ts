/** The README's examples (```js blocks whose first line names a file) run, in order, against a
 * real redis-server: what the README promises is what the package does. */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Server1, startRedis } from "./helpers.js";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url); // typescript/
let redis: Server1;

before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.stop();
});

test("the README's examples run", async () => {
  const readme = readFileSync(new URL("README.md", root), "utf8");
  const blocks = [...readme.matchAll(/```js\n\/\/ (\S+\.mjs)\n([\s\S]*?)```/g)];
  assert.deepEqual(blocks.map((m) => m[1]), ["producer.mjs", "worker.mjs", "stats.mjs", "errors.mjs", "scheduler.mjs"]);
  // Inside the package directory, so that "@rwq-protocol/rwq" resolves to this package.
  const dir = new URL("dist/readme-examples/", root);
  mkdirSync(dir, { recursive: true });
  const outputs: Record<string, string> = {};
  for (const [, name, code] of blocks) {
    const file = fileURLToPath(new URL(name!, dir));
    writeFileSync(file, code!);
    const { stdout } = await run(process.execPath, [file], { env: { ...process.env, REDIS_URL: redis.url }, timeout: 20_000 });
    outputs[name!] = stdout;
  }
  assert.match(outputs["producer.mjs"]!, /queued: 3, processing: 0, delayed: 0, dead: 0/);
  assert.match(outputs["worker.mjs"]!, /sending to ada@example\.org \(attempt 1\)/);
  assert.match(outputs["worker.mjs"]!, /true\n$/);
  assert.match(outputs["errors.mjs"]!, /^true true INVALID_ARGUMENT$/m);
  assert.equal(outputs["stats.mjs"], "added 3, completed 3; 0.00 completed/s over 5 minutes\n");
  assert.match(outputs["scheduler.mjs"]!, /^[23] items queued$/m); // 2.5 s of a 1 s schedule
  assert.equal((await redis.admin.lrange("{reports}:queue", 0, -1)).filter((id) => id.startsWith("ping@")).length,
    Number(outputs["scheduler.mjs"]![0]));
});
