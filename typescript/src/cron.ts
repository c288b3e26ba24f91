/**
 * Cron schedules of profile periodic (SPEC §23, "Cron: the dialect and the slot set").
 *
 * `parseCron` checks an expression with one regular expression per field, so cron-parser only
 * reads the part of cron every library reads alike, and takes the field sets from its parsed
 * `fields`; `CronSchedule.nextSlot` walks local dates by SPEC's rule with luxon's zone offsets,
 * not by cron-parser's own iteration (which fires a repeated hour once but reads a wall time in a
 * gap its own way). conformance/vectors/cron.json holds the vectors every client reproduces.
 */
import { CronExpressionParser } from "cron-parser";
import { IANAZone } from "luxon";
import { InvalidArgumentError } from "./errors.js";

/** The longest cron expression, in bytes (RWQ-SCHED-001). */
export const MAX_CRON_BYTES = 200;
/** The longest zone name, in bytes (RWQ-SCHED-001). */
export const MAX_ZONE_BYTES = 64;
/** `nextSlot` takes instants in 0..9000-01-01T00:00Z (exclusive), ms. */
export const MAX_CRON_AFTER_MS = 221_845_392_000_000;
/** An expression must match a date among this many from 2000-01-01 (RWQ-SCHED-007): the longest
 * wait of one that matches at all is 2,922 days, 29 February 2096 to 2104. */
const NEVER_DAYS = 3000;
const DAY_MS = 86_400_000;

const MACROS: Readonly<Record<string, string>> = {
  "@hourly": "0 * * * *",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@weekly": "0 0 * * 0",
  "@monthly": "0 0 1 * *",
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
};
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

interface Field {
  name: string;
  least: number;
  greatest: number;
  names: string[];
  pattern: RegExp;
}

function field(name: string, least: number, greatest: number, value: string, step: string, names: string[] = []): Field {
  const v = [value, ...names].join("|");
  const item = `(?:\\*(?:/(?:${step}))?|(?:${v})-(?:${v})(?:/(?:${step}))?|(?:${v}))`;
  return { name, least, greatest, names, pattern: new RegExp(`^(?:${item}(?:,${item})*)$`, "i") };
}

const FIELDS: readonly Field[] = [
  field("minute", 0, 59, "[0-5]?[0-9]", "0?[1-9]|[1-5][0-9]|60"),
  field("hour", 0, 23, "[01]?[0-9]|2[0-3]", "0?[1-9]|1[0-9]|2[0-4]"),
  field("day-of-month", 1, 31, "0?[1-9]|[12][0-9]|3[01]", "0?[1-9]|[12][0-9]|3[01]"),
  field("month", 1, 12, "0?[1-9]|1[0-2]", "0?[1-9]|1[0-2]", MONTHS),
  field("day-of-week", 0, 6, "0?[0-6]", "0?[1-7]", DAYS),
];
const ZONE = /^[A-Z][A-Za-z0-9_+-]*(?:\/[A-Z][A-Za-z0-9_+-]*)*$/;
/** Names ICU accepts that are no IANA names (its Java-compatible ids, SystemV, links tzdata
 * removed), and tzdata's Factory, which ICU lacks; Python and Go refuse them too. */
const NOT_IANA = new Set([
  "ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT", "EAT", "ECT", "IET", "IST",
  "JST", "MIT", "NET", "NST", "PLT", "PNT", "PRT", "PST", "SST", "VST", "US/Pacific-New",
  "Canada/East-Saskatchewan", "Factory", "Local",
]);

function valueOf(text: string, f: Field): number {
  const i = f.names.indexOf(text.toLowerCase());
  return i >= 0 ? f.least + i : Number(text);
}

/** The five field texts of a valid expression (a macro expanded). */
function fieldTexts(expr: unknown): string[] {
  if (typeof expr !== "string") throw new InvalidArgumentError(`cron expression must be a string, not ${typeof expr}`);
  if (expr.length > MAX_CRON_BYTES || !/^[\x00-\x7f]*$/.test(expr)) {
    throw new InvalidArgumentError(`cron expression must be 1..${MAX_CRON_BYTES} ASCII bytes (RWQ-SCHED-001)`);
  }
  const texts = (MACROS[expr] ?? expr).split(/[ \t]+/);
  if (texts.length !== 5 || texts.includes("")) {
    throw new InvalidArgumentError(
      `cron expression ${JSON.stringify(expr)} must be five fields (minute hour day-of-month month day-of-week) ` +
        "separated by spaces or tabs, or one of @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually " +
        "(RWQ-SCHED-004)",
    );
  }
  FIELDS.forEach((f, i) => {
    const text = texts[i]!;
    if (!f.pattern.test(text)) {
      throw new InvalidArgumentError(
        `cron ${f.name} field ${JSON.stringify(text)} is outside the dialect: numbers ${f.least}-${f.greatest}` +
          `${f.names.length ? " or names" : ""}, *, a-b, */n, a-b/n (n at most ${f.greatest - f.least + 1}) ` +
          "and lists of them (RWQ-SCHED-004)",
      );
    }
    for (const item of text.split(",")) {
      const [start, end] = item.split("/")[0]!.split("-");
      if (end !== undefined && valueOf(start!, f) > valueOf(end, f)) {
        throw new InvalidArgumentError(
          `cron ${f.name} range ${JSON.stringify(item)} starts after its end (no wrap-around) (RWQ-SCHED-004)`,
        );
      }
    }
  });
  return texts;
}

function checkZone(tz: unknown): IANAZone {
  if (typeof tz !== "string") throw new InvalidArgumentError(`time zone must be a string, not ${typeof tz}`);
  let ok = tz.length <= MAX_ZONE_BYTES && ZONE.test(tz) && !NOT_IANA.has(tz) && !tz.startsWith("SystemV/") &&
    IANAZone.isValidZone(tz);
  if (ok) {
    // ICU folds case: refuse a case variant of its canonical name (a Link it maps elsewhere)
    const canonical = new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
    ok = canonical === tz || canonical.toLowerCase() !== tz.toLowerCase();
  }
  if (!ok) {
    throw new InvalidArgumentError(
      `time zone must be an IANA zone name (such as UTC or Europe/London) of at most ${MAX_ZONE_BYTES} bytes, ` +
        `got ${JSON.stringify(tz.slice(0, MAX_ZONE_BYTES + 1))} (RWQ-SCHED-001)`,
    );
  }
  return IANAZone.create(tz);
}

/** Field `index`'s set as flags by value: cron-parser's values of each item of `text` (one at a
 * time: cron-parser 5.10 refuses a list whose items overlap, such as `1-5,3`), united. */
function expand(text: string, index: number, f: Field, expr: string): boolean[] {
  const out = new Array<boolean>(f.greatest + 1).fill(false);
  for (const item of text.split(",")) {
    const probe = FIELDS.map((_, i) => (i === index ? item : "*")).join(" ");
    let parsed;
    try {
      parsed = CronExpressionParser.parse(probe).fields;
    } catch (err) { // the grammar check admits only what cron-parser reads
      throw new InvalidArgumentError(`cron expression ${JSON.stringify(expr)}: ${String(err)} (RWQ-SCHED-004)`);
    }
    const values = [parsed.minute, parsed.hour, parsed.dayOfMonth, parsed.month, parsed.dayOfWeek][index]!.values;
    for (const v of values) {
      const n = Number(v);
      out[n === 7 && index === 4 ? 0 : n] = true; // cron-parser lists Sunday as 0 and 7
    }
  }
  return out;
}

/** A parsed cron expression and zone: the slot set of SPEC §23. */
export class CronSchedule {
  private constructor(
    readonly expr: string,
    readonly tz: string,
    private readonly zone: IANAZone,
    private readonly sets: readonly boolean[][],
    /** the hour field's text is exactly `*` */
    readonly hourStar: boolean,
    /** neither day-of-month nor day-of-week is exactly `*` */
    readonly orDays: boolean,
  ) {}

  /** @internal use {@link parseCron} */
  static parse(expr: string, tz: string): CronSchedule {
    const texts = fieldTexts(expr);
    const zone = checkZone(tz);
    const sets = FIELDS.map((f, i) => expand(texts[i]!, i, f, expr));
    const s = new CronSchedule(expr, tz, zone, sets, texts[1] === "*", texts[2] !== "*" && texts[4] !== "*");
    const first = Date.UTC(2000, 0, 1);
    for (let n = 0; n < NEVER_DAYS; n++) if (s.matchesDay(first + n * DAY_MS)) return s;
    throw new InvalidArgumentError(
      `cron expression ${JSON.stringify(expr)} matches no day (such as 30 February) (RWQ-SCHED-007)`,
    );
  }

  /** Whether the local date whose midnight read as UTC is `midnight` (ms) has slots: its month
   * matches, and its day of month or of week (either when both are restricted, else both)
   * (RWQ-SCHED-005). */
  private matchesDay(midnight: number): boolean {
    const d = new Date(midnight);
    if (!this.sets[3]![d.getUTCMonth() + 1]) return false;
    const dom = this.sets[2]![d.getUTCDate()]!;
    const dow = this.sets[4]![d.getUTCDay()]!;
    return this.orDays ? dom || dow : dom && dow;
  }

  private offsetMs(instant: number): number {
    return this.zone.offset(instant) * 60_000;
  }

  /** The slots of wall time `w` (ms of the wall time read as UTC) (RWQ-SCHED-006): each offset in
   * force a day before or a day after `w` that reads `w` as an instant having that offset is an
   * occurrence; none is a gap, read with the offset of the day before (in force before the
   * transition). */
  private instants(w: number): number[] {
    const before = this.offsetMs(w - DAY_MS);
    const after = this.offsetMs(w + DAY_MS);
    const found: number[] = [];
    for (const offset of [before, after]) {
      const u = w - offset;
      if (this.offsetMs(u) === offset && !found.includes(u)) found.push(u);
    }
    found.sort((a, b) => a - b);
    if (found.length === 0) return this.hourStar ? [] : [w - before];
    return this.hourStar ? found : found.slice(0, 1);
  }

  /** The least slot greater than `afterMs` (ms since the epoch, in 0..MAX_CRON_AFTER_MS-1). */
  nextSlot(afterMs: number): number {
    if (!Number.isSafeInteger(afterMs) || afterMs < 0 || afterMs >= MAX_CRON_AFTER_MS) {
      throw new InvalidArgumentError(`afterMs must be an integer in 0..${MAX_CRON_AFTER_MS - 1}, got ${afterMs}`);
    }
    const local = new Date(afterMs + this.offsetMs(afterMs));
    // a gap can move a slot of the day before past midnight
    let midnight = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()) - DAY_MS;
    let best = -1;
    const [minutes, hours] = this.sets;
    for (let n = 0; n < NEVER_DAYS + 370; n++, midnight += DAY_MS) {
      if (best >= 0 && best <= midnight - DAY_MS) return best; // every slot of this date and later is after best
      if (!this.matchesDay(midnight)) continue;
      // No zone changes its offset twice within five days (since 1960, the closest two changes of
      // tzdata 2026.6 are 6.96 days apart): when the offsets a day before this date and a day after
      // it are equal, each wall time of the date occurs once, at the wall time minus that offset.
      const offset = this.offsetMs(midnight - DAY_MS);
      const plain = offset === this.offsetMs(midnight + 2 * DAY_MS);
      walls: for (let h = 0; h < 24; h++) {
        if (!hours![h]) continue;
        for (let m = 0; m < 60; m++) {
          const w = midnight + h * 3_600_000 + m * 60_000;
          if (!minutes![m]) continue;
          if (plain) {
            if (w - offset > afterMs) {
              if (best < 0 || w - offset < best) best = w - offset;
              break walls; // the later wall times of the date are later instants
            }
            continue;
          }
          if (w + DAY_MS <= afterMs) continue; // every instant of w is at or before afterMs
          for (const instant of this.instants(w)) {
            if (instant > afterMs && (best < 0 || instant < best)) best = instant;
          }
        }
      }
    }
    return best;
  }
}

/** Check and expand a cron expression in zone `tz` (an IANA name; "UTC" for UTC); throws
 * InvalidArgumentError (RWQ-SCHED-001, -004, -007) before any I/O. */
export function parseCron(expr: string, tz = "UTC"): CronSchedule {
  return CronSchedule.parse(expr, tz);
}
