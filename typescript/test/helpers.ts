/** Test helpers: a real redis-server (or a 3-master cluster) on free loopback ports, started by
 * the tests themselves, and a fault proxy that drops a reply. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, type Server, type Socket, createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Server1 {
  url: string;
  port: number;
  admin: Redis;
  stop(): Promise<void>;
}

async function waitUp(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch {
      probe.disconnect();
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  throw new Error(`redis-server on ${port} did not start`);
}

function spawnRedis(port: number, dir: string, extra: string[] = []): ChildProcess {
  return spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, ...extra], {
    stdio: "ignore",
  });
}

/** A fresh redis-server on a free loopback port. */
export async function startRedis(): Promise<Server1> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "rwq-ts-"));
  const proc = spawnRedis(port, dir);
  await waitUp(port);
  const admin = new Redis({ port, host: "127.0.0.1" });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    admin,
    async stop() {
      admin.disconnect();
      proc.kill("SIGKILL");
      await new Promise((r) => proc.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A 3-master Redis Cluster on free loopback ports, slots split evenly. */
export async function startCluster(): Promise<{ url: string; stop(): Promise<void> }> {
  const ports = [await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), "rwq-ts-cluster-"));
  const procs = ports.map((port) =>
    spawnRedis(port, dir, ["--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`, "--cluster-node-timeout", "2000"]),
  );
  await Promise.all(ports.map(waitUp));
  const nodes = ports.map((port) => new Redis({ port, host: "127.0.0.1" }));
  const ranges = [[0, 5460], [5461, 10922], [10923, 16383]] as const;
  await Promise.all(nodes.map((n, i) => n.call("CLUSTER", "ADDSLOTSRANGE", ranges[i]![0], ranges[i]![1])));
  for (const n of nodes.slice(1)) await n.call("CLUSTER", "MEET", "127.0.0.1", ports[0]!);
  for (let i = 0; i < 400; i++) {
    const states = await Promise.all(nodes.map((n) => n.call("CLUSTER", "INFO") as Promise<string>));
    if (states.every((s) => s.includes("cluster_state:ok") && s.includes("cluster_known_nodes:3"))) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  nodes.forEach((n) => n.disconnect());
  return {
    url: `redis://127.0.0.1:${ports[0]}`,
    async stop() {
      for (const p of procs) p.kill("SIGKILL");
      await Promise.all(procs.map((p) => new Promise((r) => (p.exitCode !== null ? r(null) : p.once("exit", r)))));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A TCP proxy in front of a server: dropNextReply() makes it swallow the server's next reply
 * and cut that connection; `sent` is every byte clients sent through it. */
export async function startProxy(target: number): Promise<{ url: string; sent: () => string; dropNextReply(): void; close(): Promise<void> }> {
  let drop = false;
  let sent = "";
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ port: target, host: "127.0.0.1" });
    sockets.add(client).add(upstream);
    client.on("data", (d) => {
      sent += d.toString("latin1");
      upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (drop && sent.includes("EVALSHA")) {
        drop = false;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    sent: () => sent,
    dropNextReply() {
      drop = true;
      sent = "";
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
