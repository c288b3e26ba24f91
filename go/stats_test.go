package rwq

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Profile stats (SPEC §22) against the real redis-server of TestMain.

// counted is what the queue counted this minute and the one before (a read may fall just after a
// minute's end).
func counted(s QueueStats) StatCounts { return s.Current().Add(s.Window(1)) }

// RWQ-STATS-001/003: enable once (since kept), the scripts count, disable deletes both keys.
func TestStatsEnableCountDisable(t *testing.T) {
	q, rdb := newQueue(t, nil)
	off := must[QueueStats](t)(q.Stats(ctx))
	if off.Enabled || off.SinceMs != 0 || len(off.Series) != 61 || off.Minute != off.NowMs/60_000 {
		t.Fatalf("stats while off: %+v", off)
	}
	if !must[bool](t)(q.EnableStats(ctx)) || must[bool](t)(q.EnableStats(ctx)) {
		t.Fatal("enable: want true then false")
	}
	since := must[int64](t)(rdb.Get(ctx, q.prefix+":stats").Int64())
	addItems(t, q, "a", "b", "c")
	must[bool](t)(q.Add(ctx, "a", nil)) // an existing id is not counted
	l := must[*Lease](t)(q.Lease(ctx, 30_000))
	must[bool](t)(q.CompleteOwned(ctx, *l))
	l = must[*Lease](t)(q.Lease(ctx, 30_000))
	must[FailResult](t)(q.FailWith(ctx, *l, "boom", FailOptions{Dead: true}))
	s := must[QueueStats](t)(q.Stats(ctx))
	if want := (StatCounts{Added: 3, Completed: 1, Failed: 1, Dead: 1}); !s.Enabled || s.SinceMs != since || counted(s) != want {
		t.Fatalf("stats %+v (counted %+v), since %d", s, counted(s), since)
	}
	if !must[bool](t)(q.DisableStats(ctx)) || must[bool](t)(q.DisableStats(ctx)) {
		t.Fatal("disable: want true then false")
	}
	if n := must[int64](t)(rdb.Exists(ctx, q.prefix+":stats", q.prefix+":stats:series").Result()); n != 0 {
		t.Fatalf("%d stats keys left after disable", n)
	}
}

// RWQ-STATS-006: windows sum exactly the complete minutes before the current one; rates per second.
func TestStatsWindowsAndRates(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[bool](t)(q.EnableStats(ctx))
	var s QueueStats
	for try := 0; ; try++ { // written and read within one minute of the server's clock
		m := must[QueueStats](t)(q.Stats(ctx)).Minute
		fields := map[string]any{}
		for back, n := range map[int64]int{0: 7, 1: 1, 5: 10, 15: 100, 60: 1000, 61: 10000} {
			fields[fmt.Sprintf("%d:completed", m-back)] = n
		}
		fields[fmt.Sprintf("%d:added", m-2)] = 3
		must[int64](t)(rdb.HSet(ctx, q.prefix+":stats:series", fields).Result())
		if s = must[QueueStats](t)(q.Stats(ctx)); s.Minute == m || try == 2 {
			break
		}
	}
	got := []int64{s.Current().Completed}
	for _, w := range StatWindows {
		got = append(got, s.Windows()[w].Completed)
	}
	if fmt.Sprint(got) != "[7 1 11 111 1111]" || s.Window(5).Added != 3 || s.Window(1).Added != 0 {
		t.Fatalf("current and windows %v, series %+v", got, s.Series)
	}
	if r := s.Rates(5); r.Completed != 11.0/300 || r.Added != 3.0/300 || r.Failed != 0 {
		t.Fatalf("rates over 5 minutes %+v", r)
	}
	if r1, r60 := s.Rates(1), s.Rates(60); r1.Completed != 1.0/60 || r60.Completed != 1111.0/3600 || s.Rates(61) != r60 {
		t.Fatalf("rates over 1, 60 and 61 minutes %+v %+v %+v", r1, r60, s.Rates(61))
	}
	if s.Window(1000) != s.Window(60) || s.Rates(1000) != s.Rates(60) || s.Window(0) != (StatCounts{}) || s.Rates(0) != (StatRates{}) {
		t.Fatal("windows past the series or under one minute")
	}
}

// RWQ-STATS-005: a broken series counts nothing and fails no operation; the read says WRONG_TYPE.
// A flag of another type is WRONG_TYPE like any key of the queue.
func TestStatsWrongTypes(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[bool](t)(q.EnableStats(ctx))
	must[string](t)(rdb.Set(ctx, q.prefix+":stats:series", "x", 0).Result())
	addItems(t, q, "a")
	if _, err := q.Stats(ctx); !errors.Is(err, ErrWrongType) {
		t.Fatalf("stats with a string series: want WRONG_TYPE, got %v", err)
	}
	must[int64](t)(rdb.Del(ctx, q.prefix+":stats").Result())
	must[int64](t)(rdb.HSet(ctx, q.prefix+":stats", "f", "v").Result())
	for name, call := range map[string]func() error{
		"enable": func() error { _, err := q.EnableStats(ctx); return err },
		"stats":  func() error { _, err := q.Stats(ctx); return err },
		"add":    func() error { _, err := q.Add(ctx, "b", nil); return err },
	} {
		if err := call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("%s with a hash flag: want WRONG_TYPE, got %v", name, err)
		}
	}
}

// Profile declared-keys: the stats calls declare P:stats and P:stats:series (the script checks).
func TestStatsDeclaredKeys(t *testing.T) {
	q, rdb := newQueue(t, &Options{DeclaredKeys: true})
	log := &commands{}
	rdb.AddHook(log)
	must[bool](t)(q.EnableStats(ctx))
	addItems(t, q, "a")
	if s := must[QueueStats](t)(q.Stats(ctx)); counted(s).Added != 1 {
		t.Fatalf("declared stats %+v", s)
	}
	cmds := log.take()
	for _, c := range cmds {
		if scriptRuns([]string{c}, "stats") == 1 && !strings.Contains(c, " 3 "+q.queue+" "+q.prefix+":stats "+q.prefix+":stats:series ") {
			t.Fatalf("stats call %q does not declare its keys", c)
		}
	}
	if scriptRuns(cmds, "stats") < 2 {
		t.Fatalf("stats calls not seen in %v", cmds)
	}
}

// RWQ-STATS-007: every shard on and off, shard 0 first; the read sums the shards.
func TestShardedStats(t *testing.T) {
	s, rdb, name := newSharded(t, testShards)
	log := &commands{}
	rdb.AddHook(log)
	if !must[bool](t)(s.EnableStats(ctx)) || must[bool](t)(s.EnableStats(ctx)) {
		t.Fatal("enable: want true then false")
	}
	var order []string
	for _, c := range log.take() {
		if scriptRuns([]string{c}, "stats") == 1 {
			order = append(order, strings.Fields(c)[3])
		}
	}
	for i, key := range append(order, make([]string, 2*testShards-len(order))...) {
		if len(order) != 2*testShards || key != fmt.Sprintf("{%s#%d}:queue", name, i%testShards) {
			t.Fatalf("enable order %v", order)
		}
	}
	addItems(t, s, append(idsOn(0, 2, "x"), idsOn(3, 1, "y")...)...)
	st := must[QueueStats](t)(s.Stats(ctx))
	if !st.Enabled || st.SinceMs == 0 || counted(st).Added != 3 {
		t.Fatalf("sharded stats %+v", st)
	}
	must[int64](t)(rdb.Del(ctx, "{"+name+"#2}:stats").Result())
	if st = must[QueueStats](t)(s.Stats(ctx)); st.Enabled || st.SinceMs != 0 {
		t.Fatalf("one shard off: %+v", st)
	}
	if !must[bool](t)(s.DisableStats(ctx)) {
		t.Fatal("disable: want true")
	}
	for i := 0; i < testShards; i++ {
		if n := must[int64](t)(rdb.Exists(ctx, fmt.Sprintf("{%s#%d}:stats", name, i)).Result()); n != 0 {
			t.Fatalf("shard %d still on", i)
		}
	}
}

// A shard read in the minute before the latest adds its counts one step older.
func TestStatsSummedAlignsMinutes(t *testing.T) {
	series := func(last int64) []StatCounts {
		out := make([]StatCounts, 61)
		out[0].Added, out[59].Added, out[60].Added = 1000, 10, last
		return out
	}
	now := time.Now().UnixMilli()
	m := now / 60_000
	s := summed([]QueueStats{
		{true, 5, m*60_000 - 1, m - 1, series(1)},
		{true, 7, m * 60_000, m, series(2)},
	})
	if s.NowMs != m*60_000 || s.Minute != m || s.SinceMs != 7 || s.Current().Added != 2 || s.Series[59].Added != 11 ||
		s.Series[58].Added != 10 || s.Series[0].Added != 1000 || s.Window(60).Added != 1021 {
		t.Fatalf("summed %+v", s)
	}
}
