/** The canonical scripts as this package embeds them (src/scripts.generated.ts, generated from
 * lua/), checked against their SHA1s when the module loads, and the calls that run them. */
import { createHash } from "node:crypto";
import { SCRIPTS } from "./scripts.generated.js";

export interface Script {
  readonly name: string;
  readonly source: Buffer;
  readonly sha1: string;
  /** The key names after "<P>:" of the header's DECLARED line (profile declared-keys). */
  readonly declared: readonly string[];
}

/** The names every RWQ/1 client needs. */
const NAMES = [
  "add", "lease", "claim", "renew", "complete", "complete_and_lease", "release", "counts",
  "light_clean", "deep_clean", "set_policy", "fail", "dead", "shards", "ring", "heartbeat",
  "stats", "schedule", "fire",
] as const;
export type ScriptName = (typeof NAMES)[number];

function parseDeclared(source: string): string[] {
  for (const line of source.split("\n")) {
    if (line.startsWith("-- DECLARED ")) {
      return [...line.matchAll(/<P>:(\S+)/g)].map((m) => m[1]!);
    }
  }
  return [];
}

function load(): Record<ScriptName, Script> {
  const out: Partial<Record<ScriptName, Script>> = {};
  for (const name of NAMES) {
    const entry = SCRIPTS[name];
    if (!entry) throw new Error(`rwq: embedded script ${name} is missing; run make generate`);
    const source = Buffer.from(entry.source, "utf8");
    const sha1 = createHash("sha1").update(source).digest("hex");
    if (sha1 !== entry.sha1) throw new Error(`rwq: embedded script ${name} does not match its SHA1; run make generate`);
    out[name] = { name, source, sha1, declared: parseDeclared(entry.source) };
  }
  return out as Record<ScriptName, Script>;
}

export const scripts = load();

/** Each canonical script's name and the SHA1 of the text this package runs (RWQ-VER-003). */
export function scriptSha1s(): Record<string, string> {
  return Object.fromEntries(NAMES.map((n) => [n, scripts[n].sha1]));
}
