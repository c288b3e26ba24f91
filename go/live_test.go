package rwq

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Profile workers (SPEC §21) against the real redis-server of TestMain; each test is bounded.

func TestLiveWorkersRoundTrip(t *testing.T) {
	q, rdb := newQueue(t, nil)
	rec := map[string]any{"host": "h", "items": []any{"a", "é"}}
	b := must[Beat](t)(q.WorkerBeat(ctx, "w1", 30_000, rec))
	live := must[[]LiveWorker](t)(q.Workers(ctx, 0, 100))
	if len(live) != 1 || live[0].ID != "w1" || live[0].DeadlineMs != b.NowMs+30_000 || live[0].Record["host"] != "h" {
		t.Fatalf("workers %+v after beat %+v", live, b)
	}
	if pttl := must[time.Duration](t)(rdb.PTTL(ctx, q.Prefix()+":workers:seen").Result()); pttl <= 29*time.Second {
		t.Fatalf("pttl %v", pttl)
	}
	if !must[bool](t)(q.WorkerLeave(ctx, "w1")) || must[bool](t)(q.WorkerLeave(ctx, "w1")) {
		t.Fatal("leave: want true then false")
	}
	if n := must[int64](t)(rdb.Exists(ctx, q.Prefix()+":workers", q.Prefix()+":workers:seen").Result()); n != 0 {
		t.Fatalf("%d keys left", n)
	}
}

func TestLiveWorkersRefuseBadInputBeforeIO(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer dead.Close()
	q := must[*Queue](t)(New(dead, "jobs", nil))
	big := map[string]any{"a": strings.Repeat("x", 4089)} // 4097 bytes
	for name, call := range map[string]func() error{
		"ttl 999":     func() error { _, err := q.WorkerBeat(ctx, "w", 999, map[string]any{}); return err },
		"ttl 3600001": func() error { _, err := q.WorkerBeat(ctx, "w", 3_600_001, map[string]any{}); return err },
		"empty id":    func() error { _, err := q.WorkerBeat(ctx, "", 30_000, map[string]any{}); return err },
		"id of 65": func() error {
			_, err := q.WorkerBeat(ctx, strings.Repeat("w", 65), 30_000, map[string]any{})
			return err
		},
		"id, a space":  func() error { _, err := q.WorkerBeat(ctx, "w 1", 30_000, map[string]any{}); return err },
		"nil record":   func() error { _, err := q.WorkerBeat(ctx, "w", 30_000, nil); return err },
		"4097 bytes":   func() error { _, err := q.WorkerBeat(ctx, "w", 30_000, big); return err },
		"leave bad id": func() error { _, err := q.WorkerLeave(ctx, "w/1"); return err },
		"count 0":      func() error { _, err := q.Workers(ctx, 0, 0); return err },
		"offset -1":    func() error { _, err := q.Workers(ctx, -1, 10); return err },
	} {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: want INVALID_ARGUMENT, got %v", name, err)
		}
	}
}

// A worker registers within one interval, with its counts and items in hand (never a token) and
// server-time started_ms, and leaves when it stops (RWQ-LIVE-001, 005..007).
func TestWorkerBeatsAndLeaves(t *testing.T) {
	q, rdb := newQueue(t, nil)
	addItems(t, q, "a", "b")
	release := make(chan struct{})
	log, _ := quietLog()
	w := must[*Worker](t)(NewWorker(q, func(ctx context.Context, job *Job) error {
		if job.ID == "b" {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		return nil
	}, &WorkerOptions{HeartbeatMs: 300, HeartbeatTTLMs: 1000, PollTimeoutMs: 100, Logger: log}))
	stop := started(t, w)
	defer stop()
	deadline := time.Now().Add(5 * time.Second)
	var seen LiveWorker
	for {
		live := must[[]LiveWorker](t)(q.Workers(ctx, 0, 10))
		if len(live) == 1 && live[0].Record["in_hand"] == float64(1) && live[0].Record["completed"] == float64(1) {
			seen = live[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker never showed up as expected: %+v", live)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if seen.ID != w.ID() || len(seen.ID) != 16 || seen.Record["language"] != "go" {
		t.Fatalf("record %+v", seen)
	}
	token := must[string](t)(rdb.Get(ctx, q.Prefix()+":lease:b").Result())
	raw, _ := json.Marshal(seen.Record)
	if strings.Contains(string(raw), token) || !strings.Contains(string(raw), `"items":["b"]`) {
		t.Fatalf("record %s", raw)
	}
	server := must[time.Time](t)(rdb.Time(ctx).Result()).UnixMilli()
	if started, _ := seen.Record["started_ms"].(float64); int64(started) > server || int64(started) < server-10_000 {
		t.Fatalf("started_ms %v, server now %d", seen.Record["started_ms"], server)
	}
	close(release)
	stop()
	if live := must[[]LiveWorker](t)(q.Workers(ctx, 0, 10)); len(live) != 0 {
		t.Fatalf("still listed after the stop: %+v", live)
	}
}

func TestWorkerHeartbeatSettingsAreChecked(t *testing.T) {
	q, _ := newQueue(t, nil)
	h := func(context.Context, *Job) error { return nil }
	for _, o := range []WorkerOptions{{HeartbeatTTLMs: 999}, {HeartbeatMs: 10_001, HeartbeatTTLMs: 30_000}} {
		if _, err := NewWorker(q, h, &o); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%+v: want INVALID_ARGUMENT, got %v", o, err)
		}
	}
}

func TestRecordsWriteLineSeparatorsAsThemselves(t *testing.T) {
	// 1362 U+2028 and "xx": 4096 bytes of compact JSON, as Python and TypeScript write it.
	long := map[string]any{"a": strings.Repeat("\u2028", 1362) + "xx"}
	raw, err := encodeRecord(long)
	if err != nil || len(raw) != MaxWorkerRecordBytes {
		t.Fatalf("a record of 4096 bytes with U+2028: %d bytes, %v", len(raw), err)
	}
	// A backslash followed by the text u2028 stays an escaped backslash; U+2029 is raw too.
	raw, err = encodeRecord(map[string]any{"a": `\u2028` + "\u2029"})
	if err != nil || string(raw) != `{"a":"\\u2028`+"\u2029"+`"}` {
		t.Fatalf("got %s, %v", raw, err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil || back["a"] != `\u2028`+"\u2029" {
		t.Fatalf("round trip: %v, %v", back, err)
	}
}
