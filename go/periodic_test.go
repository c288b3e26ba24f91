package rwq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Profile periodic (SPEC §23) against the real redis-server of TestMain; each test is bounded.

var silentLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// serverNow is the Redis server's clock, ms.
func serverNow(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	return must[time.Time](t)(rdb.Time(ctx).Result()).UnixMilli()
}

func TestScheduleLifecycle(t *testing.T) {
	q, rdb := newQueue(t, nil)
	before := serverNow(t, rdb)
	if !must[bool](t)(q.PutSchedule(ctx, "s", Every(60_000), []byte("hello"))) {
		t.Fatal("put of a new name: want created")
	}
	list := must[ScheduleList](t)(q.Schedules(ctx))
	if len(list.Schedules) != 1 || list.NowMs < before {
		t.Fatalf("list %+v", list)
	}
	s := list.Schedules[0]
	// the same text as the Python and TypeScript clients write, so a put from any of them keeps the digest
	if string(s.Definition) != `{"v":1,"every_ms":60000,"offset_ms":0,"missed":"skip","grace_ms":60000}` ||
		string(s.Data) != "hello" || s.LastFiredMs == nil || *s.LastFiredMs < before || *s.LastFiredMs > list.NowMs || s.PausedMs != nil {
		t.Fatalf("stored %+v (%s)", s, s.Definition)
	}
	mark := *s.LastFiredMs
	cron := CronIn("30 2 * * *", "Europe/London")
	cron.Missed, cron.GraceMs = MissedOnce, 0
	if must[bool](t)(q.PutSchedule(ctx, "s", cron, []byte("two"))) {
		t.Fatal("put of a known name: want replaced")
	}
	s = must[ScheduleList](t)(q.Schedules(ctx)).Schedules[0]
	if string(s.Definition) != `{"v":1,"cron":"30 2 * * *","tz":"Europe/London","missed":"once","grace_ms":0}` ||
		*s.LastFiredMs != mark || must[Schedule](t)(s.Schedule()) != cron {
		t.Fatalf("replaced %+v (%s): the watermark must stay %d", s, s.Definition, mark)
	}
	if !must[bool](t)(q.PauseSchedule(ctx, "s")) || must[bool](t)(q.PauseSchedule(ctx, "s")) {
		t.Fatal("pause: want true then false")
	}
	if s = must[ScheduleList](t)(q.Schedules(ctx)).Schedules[0]; s.PausedMs == nil {
		t.Fatal("a paused schedule lists its pause")
	}
	if !must[bool](t)(q.ResumeSchedule(ctx, "s")) || must[bool](t)(q.ResumeSchedule(ctx, "s")) {
		t.Fatal("resume: want true then false")
	}
	if !must[bool](t)(q.RemoveSchedule(ctx, "s")) || must[bool](t)(q.RemoveSchedule(ctx, "s")) {
		t.Fatal("remove: want true then false")
	}
	if n := must[int64](t)(rdb.Exists(ctx, q.Prefix()+":schedules", q.Prefix()+":schedules:data",
		q.Prefix()+":schedules:fired", q.Prefix()+":schedules:paused").Result()); n != 0 {
		t.Fatalf("%d schedule keys left after remove", n)
	}
}

func TestFireAddsTheSlotItemOnce(t *testing.T) {
	q, rdb := newQueue(t, &Options{DeclaredKeys: true})
	must[bool](t)(q.PutSchedule(ctx, "s", Every(1000), []byte("P")))
	s := must[ScheduleList](t)(q.Schedules(ctx)).Schedules[0]
	slot := (*s.LastFiredMs/1000 + 1) * 1000
	for serverNow(t, rdb) < slot+1000 {
		time.Sleep(50 * time.Millisecond)
	}
	f := must[Fired](t)(q.Fire(ctx, "s", s.Digest(), []int64{slot, slot + 1000, slot + 60_000}))
	if f.Status != "ok" || !reflect.DeepEqual(f.Outcomes, []SlotOutcome{SlotAdded, SlotAdded, SlotEarly}) ||
		*f.LastFiredMs != slot+1000 || !reflect.DeepEqual(f.Added, []string{fmt.Sprintf("s@%d", slot), fmt.Sprintf("s@%d", slot+1000)}) {
		t.Fatalf("fire %+v", f)
	}
	if data := must[string](t)(rdb.Get(ctx, q.Prefix()+":item:s@"+strconv.FormatInt(slot, 10)).Result()); data != "P" {
		t.Fatalf("payload %q", data)
	}
	again := must[Fired](t)(q.Fire(ctx, "s", s.Digest(), []int64{slot}))
	if !reflect.DeepEqual(again.Outcomes, []SlotOutcome{SlotOld}) || len(again.Added) != 0 {
		t.Fatalf("a fired slot again: %+v", again)
	}
	for name, digest := range map[string]string{"gone": s.Digest(), "s": strings.Repeat("0", 40)} {
		f := must[Fired](t)(q.Fire(ctx, name, digest, []int64{slot + 2000}))
		if want := map[string]string{"gone": "gone", "s": "stale"}[name]; f.Status != want || len(f.Outcomes) != 0 {
			t.Fatalf("%s: %+v, want %s", name, f, want)
		}
	}
	if _, err := q.Fire(ctx, "s", s.Digest(), []int64{slot + 1}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a slot off the grid: %v (RWQ-SCHED-003)", err)
	}
	if n := must[int64](t)(rdb.LLen(ctx, q.Prefix()+":queue").Result()); n != 2 {
		t.Fatalf("queue holds %d items, want 2", n)
	}
}

func TestPeriodicRefusesBadInputBeforeIO(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer dead.Close()
	q := must[*Queue](t)(New(dead, "jobs", nil))
	sq := must[*ShardedQueue](t)(NewSharded(dead, "jobs", 2, nil))
	with := func(s Schedule, f func(*Schedule)) Schedule { f(&s); return s }
	bad := map[string]Schedule{
		"no kind":           {GraceMs: 1},
		"both kinds":        with(Every(1000), func(s *Schedule) { s.Cron = "* * * * *" }),
		"every 999":         Every(999),
		"every over a year": Every(MaxEveryMs + 1),
		"offset = every":    with(Every(1000), func(s *Schedule) { s.OffsetMs = 1000 }),
		"offset -1":         with(Every(1000), func(s *Schedule) { s.OffsetMs = -1 }),
		"tz on every":       with(Every(1000), func(s *Schedule) { s.TZ = "Europe/London" }),
		"missed never":      with(Every(1000), func(s *Schedule) { s.Missed = "never" }),
		"grace -1":          with(Every(1000), func(s *Schedule) { s.GraceMs = -1 }),
		"grace over a day":  with(Every(1000), func(s *Schedule) { s.GraceMs = MaxGraceMs + 1 }),
		"cron of 201":       CronIn(strings.Repeat("*", 201), "UTC"),
		"six fields":        CronIn("0 * * * * *", "UTC"),
		"30 February":       CronIn("0 0 30 2 *", "UTC"),
		"zone with a space": CronIn("0 0 * * *", "Europe/Lon don"),
		"unknown zone":      CronIn("0 0 * * *", "Mars/Olympus"),
		"offset on cron":    with(CronIn("0 0 * * *", "UTC"), func(s *Schedule) { s.OffsetMs = 5 }),
		"cron, no zone":     with(CronIn("0 0 * * *", "UTC"), func(s *Schedule) { s.TZ = "" }),
		"missed unset":      {EveryMs: 1000, GraceMs: 1000},
	}
	calls := map[string]func() error{}
	for name, s := range bad {
		calls["put "+name] = func() error { _, err := q.PutSchedule(ctx, "s", s, nil); return err }
		calls["next "+name] = func() error { _, err := NextSlots(s, 0, 1); return err }
	}
	for _, name := range []string{"", ".a", "a@1", "a b", "é", strings.Repeat("n", 201)} {
		calls["put name "+name] = func() error { _, err := q.PutSchedule(ctx, name, Every(1000), nil); return err }
		calls["pause name "+name] = func() error { _, err := q.PauseSchedule(ctx, name); return err }
		calls["fire name "+name] = func() error { _, err := q.Fire(ctx, name, strings.Repeat("a", 40), []int64{1000}); return err }
	}
	digest := strings.Repeat("a", 40)
	many := make([]int64, MaxFireSlots+1)
	for i := range many {
		many[i] = int64(i+1) * 1000
	}
	for name, slots := range map[string][]int64{"no slot": nil, "101 slots": many, "descending": {2000, 1000},
		"repeated": {1000, 1000}, "negative": {-1000}, "over 10^15": {MaxSlotMs + 1}} {
		calls["fire "+name] = func() error { _, err := q.Fire(ctx, "s", digest, slots); return err }
	}
	calls["fire digest"] = func() error { _, err := q.Fire(ctx, "s", "NOT-A-DIGEST", []int64{1000}); return err }
	calls["next count 0"] = func() error { _, err := NextSlots(Every(1000), 0, 0); return err }
	calls["next count 101"] = func() error { _, err := NextSlots(Every(1000), 0, 101); return err }
	calls["next after -1"] = func() error { _, err := NextSlots(Every(1000), -1, 1); return err }
	calls["next cron from 9000-01-01"] = func() error { _, err := NextSlots(CronIn("0 0 1 1 *", "UTC"), MaxCronAfterMs, 1); return err }
	calls["next cron walking into 9000-01-01"] = func() error {
		_, err := NextSlots(CronIn("0 0 1 1 *", "UTC"), MaxCronAfterMs-1, 2) // the first slot is 9000-01-01T00:00Z itself
		return err
	}
	calls["sharded put"] = func() error { _, err := sq.PutSchedule(ctx, "s", Every(1000), nil); return err }
	calls["nil queue"] = func() error { return NewScheduler(nil, nil).Run(ctx) }
	calls["heartbeat over ttl/3"] = func() error {
		return NewScheduler(q, &SchedulerOptions{HeartbeatMs: 10_001, HeartbeatTTLMs: 30_000}).Run(ctx)
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: want INVALID_ARGUMENT, got %v", name, err)
		}
	}
}

func TestSlotWalks(t *testing.T) {
	offset := Every(60_000)
	offset.OffsetMs = 1000
	if got := must[[]int64](t)(NextSlots(offset, 0, 3)); !reflect.DeepEqual(got, []int64{1000, 61_000, 121_000}) {
		t.Fatalf("interval walk %v", got)
	}
	if got := must[[]int64](t)(NextSlots(CronIn("30 1 * * *", "Europe/London"), 1_711_846_800_000, 2)); !reflect.DeepEqual(
		got, []int64{1_711_848_600_000, 1_711_931_400_000}) { // 2024-03-31: 01:30 falls in the gap, read with +00:00
		t.Fatalf("cron walk %v", got)
	}
	w := must[walk](t)(Every(1000).walk())
	// skip: the slots at most grace_ms late, oldest first, at most 100
	if got := w.due(-1, 100_500); !reflect.DeepEqual(got, slotsFrom(41_000, 60)) {
		t.Fatalf("skip after a stall: %v", got)
	}
	wide := Every(1000)
	wide.GraceMs = 200_000
	if got := must[walk](t)(wide.walk()).due(0, 1_000_000); !reflect.DeepEqual(got, slotsFrom(800_000, MaxFireSlots)) {
		t.Fatalf("at most 100 slots, oldest first: %d from %d", len(got), got[0])
	}
	once := Every(60_000)
	once.Missed, once.GraceMs = MissedOnce, 1000
	w = must[walk](t)(once.walk())
	if got := w.due(60_000, 10*60_000+30_000); !reflect.DeepEqual(got, []int64{600_000}) {
		t.Fatalf("once, none on time: the latest late slot, got %v", got)
	}
	if got := w.due(600_000, 10*60_000+30_000); len(got) != 0 {
		t.Fatalf("once after it fired: %v", got)
	}
	w = must[walk](t)(func() Schedule { s := CronIn("0 0 * * *", "UTC"); s.Missed = MissedOnce; return s }().walk())
	if got := w.due(0, 10*86_400_000+5); !reflect.DeepEqual(got, []int64{10 * 86_400_000}) {
		t.Fatalf("cron once after ten days: %v", got)
	}
}

func slotsFrom(first int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)*1000
	}
	return out
}

func TestParseSchedule(t *testing.T) {
	if s := must[Schedule](t)(ParseSchedule([]byte(`{"v":1,"every_ms":5000,"later":"ignored"}`))); s != Every(5000) {
		t.Fatalf("defaults and unknown members: %+v", s)
	}
	if s := must[Schedule](t)(ParseSchedule([]byte(`{"v":1,"cron":"@daily"}`))); s != CronIn("@daily", "UTC") {
		t.Fatalf("a cron definition's default zone: %+v", s)
	}
	for _, text := range []string{`{"v":2,"every_ms":5000}`, `{`, `[1]`, `null`, `{"v":1}`, `{"v":true,"every_ms":5000}`,
		`{"v":1,"every_ms":5000.5}`, `{"v":1,"every_ms":"5000"}`, `{"v":1,"every_ms":0,"cron":"* * * * *"}`,
		`{"v":1,"cron":"* * * * *","tz":""}`, `{"v":1,"every_ms":5000,"missed":""}`, `{"v":1,"every_ms":5000} x`} {
		if _, err := ParseSchedule([]byte(text)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: want INVALID_ARGUMENT, got %v", text, err)
		}
	}
	if b, _ := SlotLate.MarshalJSON(); string(b) != `"late"` {
		t.Fatalf("outcome JSON %s", b)
	}
	if b, _ := SlotExisted.MarshalJSON(); string(b) != `0` {
		t.Fatalf("outcome JSON %s", b)
	}
}

func TestSchedulerTickFiresAndSkipsUnreadable(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[bool](t)(q.PutSchedule(ctx, "s", Every(1000), []byte("P")))
	rdb.HSet(ctx, q.Prefix()+":schedules", "future", `{"v":2,"every_ms":1000}`, "broken", "{")
	rdb.HSet(ctx, q.Prefix()+":schedules:fired", "future", "0", "broken", "0")
	must[bool](t)(q.PutSchedule(ctx, "paused", Every(1000), nil))
	must[bool](t)(q.PauseSchedule(ctx, "paused"))
	var logged strings.Builder
	s := NewScheduler(q, &SchedulerOptions{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	first := serverNow(t, rdb)
	for serverNow(t, rdb) < (first/1000+2)*1000 {
		time.Sleep(50 * time.Millisecond)
	}
	tick := must[Tick](t)(s.Tick(ctx))
	if len(tick.Fired) < 1 || len(tick.Fired) > 2 || !strings.HasPrefix(tick.Fired[0], "s@") ||
		tick.NextMs <= tick.NowMs || tick.NextMs > tick.NowMs+1000 || tick.NextMs%1000 != 0 {
		t.Fatalf("tick %+v", tick)
	}
	if again := must[Tick](t)(s.Tick(ctx)); again.NowMs < tick.NextMs && len(again.Fired) != 0 {
		t.Fatalf("a second tick before the next slot fired %v", again.Fired)
	}
	if n := strings.Count(logged.String(), "schedule is skipped"); n != 2 {
		t.Fatalf("each unreadable definition is logged once, got %d lines:\n%s", n, logged.String())
	}
	for _, id := range tick.Fired {
		if strings.HasPrefix(id, "paused@") || strings.HasPrefix(id, "future@") || strings.HasPrefix(id, "broken@") {
			t.Fatalf("fired %s", id)
		}
	}
}

// TestSchedulerRunRegistersFiresAndLeaves runs a scheduler for about 2.5 s: it fires each second
// slot once, is listed as a live worker of kind scheduler, and leaves when its context ends.
func TestSchedulerRunRegistersFiresAndLeaves(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[bool](t)(q.PutSchedule(ctx, "tick", Every(1000), nil))
	s := NewScheduler(q, &SchedulerOptions{Logger: silentLog})
	run, stop := context.WithTimeout(ctx, 2500*time.Millisecond)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- s.Run(run) }()
	time.Sleep(500 * time.Millisecond)
	live := must[[]LiveWorker](t)(q.Workers(ctx, 0, 10))
	if len(live) != 1 || live[0].ID != s.ID() || live[0].Record["kind"] != "scheduler" || live[0].Record["language"] != "go" ||
		live[0].Record["started_ms"] == nil {
		t.Fatalf("live workers %+v", live)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	ids := must[[]string](t)(rdb.LRange(ctx, q.Prefix()+":queue", 0, -1).Result())
	if len(ids) < 2 || len(ids) > 3 {
		t.Fatalf("about 2.5 s of a 1 s schedule fired %v", ids)
	}
	if live := must[[]LiveWorker](t)(q.Workers(ctx, 0, 10)); len(live) != 0 {
		t.Fatalf("the scheduler did not leave: %+v", live)
	}
}

// TestConcurrentSchedulersFireEachSlotOnce runs eight schedulers (four each on two connections)
// for about 4 s on three 1 s schedules: every slot from each schedule's first item to its
// watermark is one item, none twice, none missing.
func TestConcurrentSchedulersFireEachSlotOnce(t *testing.T) {
	q, rdb := newQueue(t, nil)
	q2 := must[*Queue](t)(New(rdb, q.Prefix(), &Options{DeclaredKeys: true}))
	names := []string{"a", "b", "c"}
	starts := map[string]int64{}
	for _, name := range names {
		must[bool](t)(q.PutSchedule(ctx, name, Every(1000), nil))
	}
	for _, s := range must[ScheduleList](t)(q.Schedules(ctx)).Schedules {
		starts[s.Name] = *s.LastFiredMs
	}
	run, stop := context.WithTimeout(ctx, 4*time.Second)
	defer stop()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		queue := map[bool]*Queue{true: q, false: q2}[i%2 == 0]
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = NewScheduler(queue, &SchedulerOptions{Logger: silentLog, HeartbeatMs: -1}).Run(run)
		}()
	}
	wg.Wait()
	ids := must[[]string](t)(rdb.LRange(ctx, q.Prefix()+":queue", 0, -1).Result())
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("%s fired twice", id)
		}
		seen[id] = true
	}
	total := 0
	for _, s := range must[ScheduleList](t)(q.Schedules(ctx)).Schedules {
		// from the first slot after the put to the watermark, each slot is one item
		for slot := (starts[s.Name]/1000 + 1) * 1000; slot <= *s.LastFiredMs; slot += 1000 {
			if !seen[fmt.Sprintf("%s@%d", s.Name, slot)] {
				t.Fatalf("%s@%d was lost (watermark %d)", s.Name, slot, *s.LastFiredMs)
			}
			total++
		}
	}
	if total != len(ids) || total < 9 || total > 15 {
		t.Fatalf("%d slots fired in about 4 s of three 1 s schedules, %d items", total, len(ids))
	}
	t.Logf("8 schedulers, 3 schedules, 4 s: %d slots fired, each once", total)
}
