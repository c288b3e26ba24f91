/** createClient: an ioredis client set up the way RWQ/1 needs it. */
import { Cluster, Redis, type RedisOptions } from "ioredis";

/** Options of createClient. */
export interface ClientOptions {
  /** The URL is one node (a seed) of a Redis Cluster: open a Cluster client. */
  cluster?: boolean;
  /** CLIENT SETNAME on every connection (shows in CLIENT LIST). */
  connectionName?: string;
  /** More ioredis options; the ones that would re-send a command are overridden. */
  redisOptions?: RedisOptions;
}

/** The settings that stop ioredis from re-sending a command whose reply was lost: a script
 * would run twice and its second answer be reported (RWQ-FAIL-004). Commands issued while the
 * connection is down fail rather than wait. */
export const NO_RESEND = Object.freeze({ autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 });

/**
 * An ioredis client for `url` (redis://[user:password@]host:port[/db]) that never re-sends a
 * command: a `Redis`, or with `cluster` a `Cluster` seeded with that node. Close it with `quit()`.
 */
export function createClient(url: string, options: ClientOptions = {}): Redis | Cluster {
  // lazyConnect: nothing is sent before the first command, so a call refused as bad input
  // sends nothing at all (RWQ-ERR-002), not even the connection's ready check.
  const base: RedisOptions = { lazyConnect: true, ...options.redisOptions, ...NO_RESEND };
  if (options.connectionName !== undefined) base.connectionName = options.connectionName;
  if (!options.cluster) return new Redis(url, base);
  const u = new URL(url);
  if (u.username) base.username = decodeURIComponent(u.username);
  if (u.password) base.password = decodeURIComponent(u.password);
  return new Cluster([{ host: u.hostname, port: Number(u.port || 6379) }], {
    redisOptions: base,
    lazyConnect: base.lazyConnect ?? true,
    retryDelayOnFailover: 0,
    // Its ready check is CLUSTER INFO, a command RWQ/1 clients do not send (RWQ-SCRIPT-006).
    enableReadyCheck: false,
  });
}
