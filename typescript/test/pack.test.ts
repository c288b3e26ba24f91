/** From the packed tarball to a working producer and worker: `npm pack`, an empty Node project
 * that installs the tarball (and ioredis, from the npm cache or registry), and the README's
 * quickstart run there, as a user would. */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Server1, startRedis } from "./helpers.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url)); // typescript/
let redis: Server1;
let dir: string;

before(async () => {
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), "rwq-ts-pack-"));
});
after(async () => {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("the packed tarball installs in an empty project and runs the README's quickstart", { timeout: 120_000 }, async () => {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const quiet = ["--no-audit", "--no-fund", "--loglevel=error"];
  const { stdout } = await run(npm, ["pack", "--ignore-scripts", "--pack-destination", dir, ...quiet], { cwd: root });
  const tarball = join(dir, stdout.trim().split("\n").pop()!);
  const app = join(dir, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", type: "module", private: true }));
  await run(npm, ["install", "--prefer-offline", ...quiet, tarball, "ioredis@5"], { cwd: app, timeout: 100_000 });
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const code = Object.fromEntries([...readme.matchAll(/```js\n\/\/ (\S+\.mjs)\n([\s\S]*?)```/g)].map((m) => [m[1], m[2]]));
  const env = { ...process.env, REDIS_URL: redis.url };
  const out: string[] = [];
  for (const name of ["producer.mjs", "worker.mjs"]) {
    writeFileSync(join(app, name), code[name]!);
    out.push((await run(process.execPath, [name], { cwd: app, env, timeout: 20_000 })).stdout);
  }
  assert.match(out[0]!, /queued: 3/);
  assert.match(out[1]!, /sending to grace@example\.org/);
  assert.equal(await redis.admin.llen("{emails}:queue"), 0);
});
