package rwq

import "context"

// Profile stats (SPEC §22): while a queue's stats are on (the string <P>:stats exists), the
// canonical scripts count its events per minute in <P>:stats:series. These methods turn them on
// and off and read them; each is one script call per shard and takes no argument to check.

// StatWindows are the windows a QueueStats reports, in complete minutes before the current one
// (RWQ-STATS-006).
var StatWindows = [...]int{1, 5, 15, 60}

// statMinutes is how many minutes the stats read replies with: the current one and the 60 before.
const statMinutes = 61

// StatCounts holds one count per counter of SPEC §22.1.
type StatCounts struct {
	Added     int64 `json:"added"`     // items added
	Completed int64 `json:"completed"` // items completed (the first completer)
	Failed    int64 `json:"failed"`    // fails by the lease holder
	Dead      int64 `json:"dead"`      // items dead-lettered
	Recovered int64 `json:"recovered"` // items a clean requeued
}

// Add is c and o summed counter by counter (two windows, or two queues).
func (c StatCounts) Add(o StatCounts) StatCounts {
	return StatCounts{c.Added + o.Added, c.Completed + o.Completed, c.Failed + o.Failed, c.Dead + o.Dead, c.Recovered + o.Recovered}
}

// StatRates holds one rate per counter of SPEC §22.1, in events per second.
type StatRates struct {
	Added     float64 `json:"added"`
	Completed float64 `json:"completed"`
	Failed    float64 `json:"failed"`
	Dead      float64 `json:"dead"`
	Recovered float64 `json:"recovered"`
}

// QueueStats is a queue's statistics at the server's NowMs. Series holds the counts of minutes
// Minute-60 .. Minute, oldest first (Minute is NowMs / 60,000); its last element is the current
// minute's count so far.
type QueueStats struct {
	Enabled bool         // stats are on (on a sharded queue: on every shard)
	SinceMs int64        // when they were turned on, server ms (the latest shard's); 0 while off
	NowMs   int64        // the server's time of the read
	Minute  int64        // NowMs / 60,000
	Series  []StatCounts // minutes Minute-60 .. Minute, oldest first
}

// Current is the count of the current minute so far.
func (s QueueStats) Current() StatCounts {
	if len(s.Series) == 0 {
		return StatCounts{}
	}
	return s.Series[len(s.Series)-1]
}

// Window is the sum of the last minutes complete minutes (Minute-minutes .. Minute-1), never the
// current one; minutes is at most 60 (more counts the 60 the series holds; less than 1, none).
func (s QueueStats) Window(minutes int) StatCounts {
	var total StatCounts
	for i := max(0, len(s.Series)-1-minutes); i < len(s.Series)-1; i++ {
		total = total.Add(s.Series[i])
	}
	return total
}

// Windows is Window(w) for each w of StatWindows, by w.
func (s QueueStats) Windows() map[int]StatCounts {
	out := make(map[int]StatCounts, len(StatWindows))
	for _, w := range StatWindows {
		out[w] = s.Window(w)
	}
	return out
}

// Rates is Window(minutes) per second: each count over minutes · 60 s (minutes is at most 60;
// less than 1 gives zero rates).
func (s QueueStats) Rates(minutes int) StatRates {
	minutes = min(minutes, statMinutes-1)
	if minutes < 1 {
		return StatRates{}
	}
	w, secs := s.Window(minutes), float64(minutes*60)
	return StatRates{float64(w.Added) / secs, float64(w.Completed) / secs, float64(w.Failed) / secs,
		float64(w.Dead) / secs, float64(w.Recovered) / secs}
}

// EnableStats turns the queue's statistics on (profile stats, SPEC §22; an admin's job): from now
// on the scripts count its events per minute. False when they were on already (their "since" is
// kept).
func (q *Queue) EnableStats(ctx context.Context) (bool, error) {
	reply, err := q.eval(ctx, "stats", q.one(), "enable")
	return toInt(reply) == 1, err
}

// DisableStats turns the queue's statistics off and deletes its counts; false when they were off.
func (q *Queue) DisableStats(ctx context.Context) (bool, error) {
	reply, err := q.eval(ctx, "stats", q.one(), "disable")
	return toInt(reply) == 1, err
}

// Stats reads the queue's statistics from one script call (RWQ-STATS-006): per counter, the
// current minute's count and, through Window and Rates, the last 1 to 60 complete minutes'.
// ErrWrongType when either stats key holds another Redis type.
func (q *Queue) Stats(ctx context.Context) (QueueStats, error) {
	reply, err := q.eval(ctx, "stats", q.one(), "read")
	if err != nil {
		return QueueStats{}, err
	}
	arr, _ := reply.([]any)
	if len(arr) != 4 {
		return QueueStats{}, unexpected("stats", reply)
	}
	minutes, _ := arr[3].([]any)
	if len(minutes) != statMinutes {
		return QueueStats{}, unexpected("stats", reply)
	}
	since := toInt(arr[1]) // -1: off
	s := QueueStats{Enabled: since >= 0, NowMs: toInt(arr[0]), Minute: toInt(arr[2])}
	if s.Enabled {
		s.SinceMs = since
	}
	for _, m := range minutes {
		c, _ := m.([]any)
		if len(c) != 5 {
			return QueueStats{}, unexpected("stats", reply)
		}
		s.Series = append(s.Series, StatCounts{toInt(c[0]), toInt(c[1]), toInt(c[2]), toInt(c[3]), toInt(c[4])})
	}
	return s, nil
}

// EnableStats turns stats on for every shard, shard 0 first (RWQ-STATS-007); true when this call
// turned them on for any shard.
func (s *ShardedQueue) EnableStats(ctx context.Context) (bool, error) {
	return s.everyShard(ctx, (*Queue).EnableStats)
}

// DisableStats turns stats off for every shard, shard 0 first; true when any shard had them on.
func (s *ShardedQueue) DisableStats(ctx context.Context) (bool, error) {
	return s.everyShard(ctx, (*Queue).DisableStats)
}

func (s *ShardedQueue) everyShard(ctx context.Context, fn func(*Queue, context.Context) (bool, error)) (bool, error) {
	if err := s.ready(ctx); err != nil {
		return false, err
	}
	changed := false
	for _, q := range s.shards {
		done, err := fn(q, ctx)
		if err != nil {
			return false, err
		}
		changed = changed || done
	}
	return changed, nil
}

// Stats reads every shard's statistics and sums them minute by minute, aligned on the minute of
// the shard read last (RWQ-STATS-007): Enabled only when on for every shard, SinceMs the latest.
func (s *ShardedQueue) Stats(ctx context.Context) (QueueStats, error) {
	if err := s.ready(ctx); err != nil {
		return QueueStats{}, err
	}
	reads := make([]QueueStats, len(s.shards))
	for i, q := range s.shards {
		var err error
		if reads[i], err = q.Stats(ctx); err != nil {
			return QueueStats{}, err
		}
	}
	return summed(reads), nil
}

// summed sums shards' statistics minute by minute, aligned on the latest shard's minute (a shard
// read in the minute before contributes one step older).
func summed(reads []QueueStats) QueueStats {
	out := QueueStats{Enabled: true, Series: make([]StatCounts, statMinutes)}
	for _, r := range reads {
		if r.NowMs > out.NowMs {
			out.NowMs, out.Minute = r.NowMs, r.Minute
		}
	}
	for _, r := range reads {
		out.Enabled = out.Enabled && r.Enabled
		out.SinceMs = max(out.SinceMs, r.SinceMs)
		shift := int(out.Minute - r.Minute)
		for i, c := range r.Series {
			if j := i - shift; j >= 0 && j < statMinutes {
				out.Series[j] = out.Series[j].Add(c)
			}
		}
	}
	if !out.Enabled {
		out.SinceMs = 0
	}
	return out
}
