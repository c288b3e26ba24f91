/** Profile stats (SPEC §22): while a queue's stats are on (the string <P>:stats exists), the
 * canonical scripts count its events per minute in <P>:stats:series; a read turns the `stats`
 * script's reply into counts per window and rates. */

/** The counters of SPEC §22.1, in the order the `stats` script replies with them. */
export const STAT_COUNTERS = ["added", "completed", "failed", "dead", "recovered"] as const;
export type StatCounter = (typeof STAT_COUNTERS)[number];
/** One count per counter. */
export type StatCounts = Record<StatCounter, number>;
/** One rate per counter, in events per second. */
export type StatRates = Record<StatCounter, number>;

/** The windows a read reports, in complete minutes before the current one (RWQ-STATS-006). */
export const STAT_WINDOWS = [1, 5, 15, 60] as const;
export type StatWindow = (typeof STAT_WINDOWS)[number];
/** The minutes a read replies with: the current one and the 60 before it. */
const MINUTES = 61;

/** A queue's statistics at the server's `nowMs`. */
export interface QueueStats {
  /** Stats are on (on a sharded queue: on every shard). */
  enabled: boolean;
  /** When they were turned on (server ms; a sharded queue's latest shard); null while off. */
  sinceMs: number | null;
  nowMs: number;
  /** `nowMs` / 60,000, floored. */
  minute: number;
  /** The current minute's counts so far. */
  current: StatCounts;
  /** The sums of the last 1, 5, 15 and 60 complete minutes (never the current one). */
  windows: Record<StatWindow, StatCounts>;
  /** Each window's sums per second (count / (minutes · 60)). */
  rates: Record<StatWindow, StatRates>;
  /** The counts of minutes `minute - 60` .. `minute`, oldest first. */
  series: StatCounts[];
}

type Reply = Buffer | number | null | Reply[];

function zero(): StatCounts {
  return { added: 0, completed: 0, failed: 0, dead: 0, recovered: 0 };
}

function plus(a: StatCounts, b: StatCounts): StatCounts {
  return { added: a.added + b.added, completed: a.completed + b.completed, failed: a.failed + b.failed, dead: a.dead + b.dead, recovered: a.recovered + b.recovered };
}

/** QueueStats from the read's parts: windows and rates computed from the series. */
function queueStats(sinceMs: number | null, nowMs: number, minute: number, series: StatCounts[]): QueueStats {
  const windows = {} as Record<StatWindow, StatCounts>;
  const rates = {} as Record<StatWindow, StatRates>;
  for (const w of STAT_WINDOWS) {
    const sum = series.slice(-1 - w, -1).reduce(plus, zero());
    windows[w] = sum;
    rates[w] = Object.fromEntries(STAT_COUNTERS.map((c) => [c, sum[c] / (w * 60)])) as StatRates;
  }
  return { enabled: sinceMs !== null, sinceMs, nowMs, minute, current: series[series.length - 1]!, windows, rates, series };
}

/** The `stats` script's read reply: [now_ms, since_ms (-1: off), minute, 61 × [5 counts]]. */
export function statsReply(reply: Reply): QueueStats {
  const [now, since, minute, minutes] = Array.isArray(reply) ? reply : [];
  const counts = Array.isArray(minutes) ? minutes : [];
  if (typeof now !== "number" || typeof since !== "number" || typeof minute !== "number" || counts.length !== MINUTES
      || counts.some((c) => !Array.isArray(c) || c.length !== 5 || c.some((n) => typeof n !== "number"))) {
    throw new Error(`rwq: unexpected stats reply ${JSON.stringify(reply)}`);
  }
  const series = counts.map((c) => Object.fromEntries(STAT_COUNTERS.map((name, i) => [name, (c as number[])[i]])) as StatCounts);
  return queueStats(since >= 0 ? since : null, now, minute, series);
}

/** Shards' statistics summed minute by minute, aligned on the minute of the shard read last (a
 * shard read in the minute before contributes one step older): on only when on for every shard,
 * since the latest shard's (RWQ-STATS-007). */
export function summed(reads: QueueStats[]): QueueStats {
  const latest = reads.reduce((a, b) => (b.nowMs > a.nowMs ? b : a));
  const series = Array.from({ length: MINUTES }, zero);
  for (const r of reads) {
    const shift = latest.minute - r.minute;
    r.series.forEach((c, i) => {
      if (i - shift >= 0 && i - shift < MINUTES) series[i - shift] = plus(series[i - shift]!, c);
    });
  }
  const on = reads.every((r) => r.enabled);
  return queueStats(on ? Math.max(...reads.map((r) => r.sinceMs!)) : null, latest.nowMs, latest.minute, series);
}
