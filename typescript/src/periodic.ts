/** Profile periodic (SPEC §23): schedules, their slots, and the replies of the `schedule` and
 * `fire` scripts. Every check here throws InvalidArgumentError before any I/O; slots are computed
 * from the server's now that the replies carry (RWQ-SCHED-011), never from this process's clock. */
import { createHash } from "node:crypto";
import { type CronSchedule, MAX_CRON_BYTES, parseCron } from "./cron.js";
import { RedisError, invalid } from "./errors.js";
import { checkInt } from "./validate.js";

export const MIN_EVERY_MS = 1000;
export const MAX_EVERY_MS = 31_536_000_000;
export const MAX_GRACE_MS = 86_400_000;
export const DEFAULT_GRACE_MS = 60_000;
/** The most slots one `fire` call takes. */
export const MAX_FIRE_SLOTS = 100;
export const MAX_SLOT_MS = 1e15;
/** The longest a scheduler waits between ticks, each of which reads the definitions again
 * (RWQ-SCHED-012, -018). */
export const SCHEDULER_REFRESH_MS = 10_000;
export const SCHEDULE_LIST_COUNT = 1000;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
const TZ = /^[A-Za-z0-9_+/-]{1,64}$/;
const CRON_CHARS = /^[A-Za-z0-9*/,@ \t-]+$/;
const DIGEST = /^[0-9a-f]{40}$/;

/** What happens to slots more than `graceMs` late: `skip` never fires them; `once` fires the
 * latest of them once when no slot is on time. */
export type Missed = "skip" | "once";

/** A definition (SPEC §23.1): every `everyMs` ms on the grid `k·everyMs + offsetMs` from the
 * epoch, or at the times of a 5-field `cron` expression in zone `tz` (default UTC). Absent
 * members take their defaults: `offsetMs` 0, `missed` "skip", `graceMs` 60000. */
export type Schedule =
  | { everyMs: number; offsetMs?: number; missed?: Missed; graceMs?: number }
  | { cron: string; tz?: string; missed?: Missed; graceMs?: number };

/** A checked schedule with its defaults filled in and its cron expression parsed. */
interface Walk {
  everyMs: number | null;
  offsetMs: number;
  cron: CronSchedule | null;
  tz: string;
  missed: Missed;
  graceMs: number;
}

/** Checks a schedule (RWQ-SCHED-001, -004, -007); InvalidArgumentError where SPEC §23.1 refuses it. */
export function checkSchedule(schedule: unknown): Walk {
  if (schedule === null || typeof schedule !== "object" || Array.isArray(schedule)) {
    throw invalid("a schedule must be an object with everyMs or cron (RWQ-SCHED-001)");
  }
  const s = schedule as Record<string, unknown>;
  if ((s.everyMs === undefined) === (s.cron === undefined)) {
    throw invalid("a schedule takes exactly one of everyMs or cron (RWQ-SCHED-001)");
  }
  const missed = s.missed === undefined ? "skip" : s.missed;
  if (missed !== "skip" && missed !== "once") throw invalid(`missed must be skip or once, not ${String(missed)} (RWQ-SCHED-001)`);
  const graceMs = checkInt("graceMs", s.graceMs === undefined ? DEFAULT_GRACE_MS : s.graceMs, 0, MAX_GRACE_MS);
  if (s.everyMs !== undefined) {
    const everyMs = checkInt("everyMs", s.everyMs, MIN_EVERY_MS, MAX_EVERY_MS);
    const offsetMs = checkInt("offsetMs", s.offsetMs === undefined ? 0 : s.offsetMs, 0, everyMs - 1);
    if (s.tz !== undefined && s.tz !== "UTC") throw invalid("tz applies to cron schedules only (RWQ-SCHED-001)");
    return { everyMs, offsetMs, cron: null, tz: "UTC", missed, graceMs };
  }
  if (typeof s.cron !== "string" || Buffer.byteLength(s.cron) > MAX_CRON_BYTES || !CRON_CHARS.test(s.cron)) {
    throw invalid("cron must be 1..200 bytes of a cron expression (RWQ-SCHED-004)");
  }
  if (s.offsetMs !== undefined && s.offsetMs !== 0) throw invalid("offsetMs applies to everyMs schedules only (RWQ-SCHED-001)");
  const tz = s.tz === undefined ? "UTC" : s.tz;
  if (typeof tz !== "string" || !TZ.test(tz)) throw invalid("tz must be an IANA zone name of 1..64 bytes (RWQ-SCHED-001)");
  return { everyMs: null, offsetMs: 0, cron: parseCron(s.cron, tz), tz, missed, graceMs };
}

/** The stored definition: compact JSON with `v` = 1, members in the order every client writes. */
export function definition(w: Walk): Buffer {
  const kind = w.cron === null ? { every_ms: w.everyMs, offset_ms: w.offsetMs } : { cron: w.cron.expr, tz: w.tz };
  return Buffer.from(JSON.stringify({ v: 1, ...kind, missed: w.missed, grace_ms: w.graceMs }), "utf8");
}

/** A stored definition as a Schedule; InvalidArgumentError for another `v` or one that does not
 * parse (a scheduler skips it, RWQ-SCHED-017). Members it does not know are ignored. */
export function parseSchedule(text: Buffer | string): Schedule {
  let d: unknown;
  try {
    d = JSON.parse(text.toString());
  } catch {
    throw invalid("the definition is not JSON (RWQ-SCHED-017)");
  }
  if (d === null || typeof d !== "object" || Array.isArray(d) || (d as { v?: unknown }).v !== 1) {
    throw invalid("the definition is not a version 1 object (RWQ-SCHED-017)");
  }
  const doc = d as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [from, to] of [["every_ms", "everyMs"], ["offset_ms", "offsetMs"], ["cron", "cron"], ["tz", "tz"], ["missed", "missed"], ["grace_ms", "graceMs"]] as const) {
    if (doc[from] !== undefined) out[to] = doc[from];
  }
  checkSchedule(out);
  return out as Schedule;
}

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

/** The least slot after `afterMs`; Infinity when there is none. */
export function nextSlot(w: Walk, afterMs: number): number {
  if (w.cron === null) return (floorDiv(afterMs - w.offsetMs, w.everyMs!) + 1) * w.everyMs! + w.offsetMs;
  const slot = w.cron.nextSlot(Math.max(afterMs, 0));
  return slot >= 0 ? slot : Infinity;
}

/** The greatest slot in (lowMs, highMs], or null. */
function latestSlot(w: Walk, lowMs: number, highMs: number): number | null {
  if (w.cron === null) {
    const slot = floorDiv(highMs - w.offsetMs, w.everyMs!) * w.everyMs! + w.offsetMs;
    return slot > lowMs ? slot : null;
  }
  for (let window = 3_600_000; ; window *= 2) { // an hour, doubling: a long outage costs few steps
    const start = Math.max(lowMs, highMs - window);
    let found: number | null = null;
    for (let slot = nextSlot(w, start); slot <= highMs; slot = nextSlot(w, slot)) found = slot;
    if (found !== null || start === lowMs) return found;
  }
}

/** The slots a scheduler offers at `nowMs` with watermark `markMs` (RWQ-SCHED-010): those after
 * the watermark at most `graceMs` late, oldest first, at most 100; under `once`, when there is
 * none such but a slot after the watermark, the latest of them. */
export function dueSlots(w: Walk, markMs: number, nowMs: number): number[] {
  const slots: number[] = [];
  for (let slot = nextSlot(w, Math.max(markMs, nowMs - w.graceMs - 1)); slot <= nowMs && slots.length < MAX_FIRE_SLOTS; slot = nextSlot(w, slot)) {
    slots.push(slot);
  }
  if (slots.length === 0 && w.missed === "once") {
    const late = latestSlot(w, markMs, nowMs);
    if (late !== null) slots.push(late);
  }
  return slots;
}

/** The `count` (1..100) slots of `schedule` after `afterMs` (0..10^15, server ms), in order; no I/O. */
export function nextSlots(schedule: Schedule, afterMs: number, count: number): number[] {
  const w = checkSchedule(schedule);
  checkInt("afterMs", afterMs, 0, MAX_SLOT_MS);
  checkInt("count", count, 1, MAX_FIRE_SLOTS);
  const slots = [nextSlot(w, afterMs)];
  while (slots.length < count) slots.push(nextSlot(w, slots[slots.length - 1]!));
  return slots;
}

/** A schedule as Redis holds it: its name, definition text (its SHA1 is `fire`'s digest),
 * payload, watermark (the last slot fired) and the server time of its pause, if paused. */
export class StoredSchedule {
  constructor(
    readonly name: string,
    readonly definition: Buffer,
    readonly data: Buffer,
    readonly lastFiredMs: number | null,
    readonly pausedMs: number | null,
  ) {}

  /** SHA1 of the definition, in hex: what `fire` checks the stored one against. */
  get digest(): string {
    return createHash("sha1").update(this.definition).digest("hex");
  }

  /** The parsed definition (InvalidArgumentError when it does not parse, RWQ-SCHED-017). */
  schedule(): Schedule {
    return parseSchedule(this.definition);
  }
}

/** Every schedule of a queue, by name, and the server's now when the list was read. */
export interface ScheduleList {
  nowMs: number;
  schedules: StoredSchedule[];
}

/** What `fire` did with one slot: 1 fired and added, 0 fired (an item, delayed or dead item with
 * its id existed), "old" (not after the watermark), "late" (missed skip, more than graceMs
 * late), "early" (after the server's now, and so is every later slot). */
export type SlotOutcome = 1 | 0 | "old" | "late" | "early";

/** What one `fire` did: the server's now, the status ("ok"; "gone", "stale", "paused" or "corrupt": nothing
 * written), the watermark after the call, one outcome per slot, and the ids of the items added. */
export interface Fired {
  nowMs: number;
  status: "ok" | "gone" | "stale" | "paused" | "corrupt";
  lastFiredMs: number | null;
  outcomes: SlotOutcome[];
  added: string[];
}

export function checkScheduleName(name: unknown): string {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw invalid("a schedule name must be 1..200 characters of A-Z a-z 0-9 _ . : -, starting with a letter or digit (RWQ-SCHED-001)");
  }
  return name;
}

/** fire's arguments, checked: name, digest, then the slots (1..100, ascending, 0..10^15). */
export function fireArgs(name: unknown, digest: unknown, slots: unknown): [string, string, ...number[]] {
  const n = checkScheduleName(name);
  if (typeof digest !== "string" || !DIGEST.test(digest)) {
    throw invalid("digest must be 40 lower-case hex digits (the SHA1 of the definition)");
  }
  if (!Array.isArray(slots) || slots.length < 1 || slots.length > MAX_FIRE_SLOTS) {
    throw invalid(`fire takes 1..${MAX_FIRE_SLOTS} slots`);
  }
  slots.forEach((slot, i) => {
    checkInt("slot", slot, 0, MAX_SLOT_MS);
    if (i > 0 && slot <= slots[i - 1]) throw invalid("slots must be strictly ascending");
  });
  return [n, digest, ...(slots as number[])];
}

type Reply = Buffer | number | null | Reply[];

/** A watermark or pause time; null when absent or not decimal ms (written by hand, RWQ-SCHED-021). */
const ms = (raw: Reply | undefined): number | null => (Buffer.isBuffer(raw) && /^[0-9]+$/.test(raw.toString("latin1")) ? Number(raw.toString()) : null);

function unexpected(what: string, reply: Reply): RedisError {
  return new RedisError(`unexpected ${what} reply: ${JSON.stringify(reply)?.slice(0, 200)}`);
}

/** One page of `schedule list`: the server's now, the next cursor ("0" when done), the rows. */
export function listPage(reply: Reply): [number, string, StoredSchedule[]] {
  if (!Array.isArray(reply) || reply.length !== 3 || typeof reply[0] !== "number" || !Array.isArray(reply[2])) {
    throw unexpected("schedule list", reply);
  }
  const rows = reply[2].map((row) => {
    if (!Array.isArray(row) || row.length !== 5 || !row.every(Buffer.isBuffer)) throw unexpected("schedule list", reply);
    const [name, def, data, mark, paused] = row as Buffer[];
    return new StoredSchedule(name!.toString("latin1"), def!, data!, ms(mark), ms(paused));
  });
  return [reply[0], String(reply[1]), rows];
}

export function firedReply(name: string, slots: number[], reply: Reply): Fired {
  if (!Array.isArray(reply) || reply.length !== 4 || typeof reply[0] !== "number" || !Array.isArray(reply[3]) || reply[3].length > slots.length) {
    throw unexpected("fire", reply);
  }
  const outcomes = reply[3].map((o): SlotOutcome => {
    const v = Buffer.isBuffer(o) ? o.toString() : o;
    if (v === 1 || v === 0 || v === "old" || v === "late" || v === "early") return v;
    throw unexpected("fire", reply);
  });
  const status = String(reply[1]) as Fired["status"];
  const added = slots.filter((_, i) => outcomes[i] === 1).map((slot) => `${name}@${slot}`);
  return { nowMs: reply[0], status, lastFiredMs: ms(reply[2]), outcomes, added };
}
