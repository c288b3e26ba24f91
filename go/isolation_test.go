package rwq

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A prefix with a segment item, lease, leased_by_session or deep_clean after its first nests a
// queue in another queue's keys (RWQ-KEYS-008): New refuses it before any I/O (nothing listens on
// port 1); names that merely look alike are accepted.
func TestNestedPrefixRefusedBeforeIO(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	for _, prefix := range []string{"a:item", "a:lease", "a:leased_by_session", "a:deep_clean", "jobs:lease:eu", "x:item:y", "{t}:item"} {
		_, err := New(rdb, prefix, nil)
		var rerr *Error
		if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &rerr) || !strings.Contains(rerr.Error(), "RWQ-KEYS-008") {
			t.Errorf("%s: want INVALID_ARGUMENT citing RWQ-KEYS-008, got %v", prefix, err)
		}
	}
	for _, prefix := range []string{"item", "a:queue", "a:items", "a:dead", "jobs:high", "jobs:", "a:item_x"} {
		if _, err := New(rdb, prefix, nil); err != nil {
			t.Errorf("%s: refused: %v", prefix, err)
		}
	}
}

// A prefix {P#i}, i in 0..1023, is shard i of sharded queue P (RWQ-KEYS-010): New refuses it
// before any I/O, NewSharded opens its shards, and the forms no shard has are accepted.
func TestShardFormRefusedBeforeIO(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	for _, prefix := range []string{"{jobs#0}", "{jobs#1023}", "{a:b#7}", "{jobs#1#2}"} {
		_, err := New(rdb, prefix, nil)
		var rerr *Error
		if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &rerr) || !strings.Contains(rerr.Error(), "RWQ-KEYS-010") {
			t.Errorf("%s: want INVALID_ARGUMENT citing RWQ-KEYS-010, got %v", prefix, err)
		}
	}
	for _, prefix := range []string{"{jobs#01}", "{jobs#1024}", "{jobs#bell}", "{jobs#x}", "{#0}", "{{a#0}", "jobs#0", "{jobs#0}:x", "x{jobs#0}"} {
		if _, err := New(rdb, prefix, nil); err != nil {
			t.Errorf("%s: refused: %v", prefix, err)
		}
	}
	s, err := NewSharded(rdb, "jobs#1", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Shards()[2].Prefix(); got != "{jobs#1#2}" {
		t.Errorf("shard 2 is %s", got)
	}
}

// Queues a, a:queue, a:items, a:dead, jobs and jobs:high each hold ids that spell the others'
// keys; working and cleaning one leaves the others' keys as they were.
func TestNestedNamesStayApart(t *testing.T) {
	_, rdb := newQueue(t, nil)
	base := fmt.Sprintf("iso-%s:", t.Name())
	ids := []string{"queue", "x:queue", "high:queue", "item:queue", "processing", "dead:data"}
	var queues []*Queue
	for _, name := range []string{"a", "a:queue", "a:items", "a:dead", "jobs", "jobs:high"} {
		q := must[*Queue](t)(New(rdb, base+name, nil))
		for _, id := range ids {
			must[bool](t)(q.Add(ctx, id, []byte(q.prefix+"/"+id)))
		}
		queues = append(queues, q)
	}
	dump := func(skip *Queue) map[string]string {
		out := map[string]string{}
		for _, key := range must[[]string](t)(rdb.Keys(ctx, base+"*").Result()) {
			if owner := ownerOf(key, queues); owner == nil {
				t.Fatalf("key %s belongs to no queue", key)
			} else if owner != skip {
				out[key] = must[string](t)(rdb.Dump(ctx, key).Result())
			}
		}
		return out
	}
	for _, q := range queues {
		before := dump(q)
		must[string](t)(rdb.Set(ctx, q.prefix+":item:orphan", "O", 0).Result())
		leases := must[[]Lease](t)(q.LeaseMany(ctx, 3, 30000))
		must[bool](t)(q.Complete(ctx, leases[0].ID))
		must[bool](t)(q.Release(ctx, leases[1]))
		if rep := must[CleanReport](t)(q.DeepClean(ctx, 2)); !reflect.DeepEqual(rep.Requeued, []string{"orphan"}) {
			t.Fatalf("%s: deep clean requeued %v", q.prefix, rep.Requeued)
		}
		must[CleanReport](t)(q.LightClean(ctx, 2))
		if c := must[Counts](t)(q.Counts(ctx)); c.Queued != int64(len(ids)-1) || c.Processing != 1 {
			t.Fatalf("%s: counts %+v", q.prefix, c)
		}
		if after := dump(q); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s: another queue's keys changed", q.prefix)
		}
	}
}

// ownerOf is the queue whose layout has key (RWQ-KEYS-008 makes it at most one).
func ownerOf(key string, queues []*Queue) *Queue {
	var found *Queue
	for _, q := range queues {
		tail, ok := strings.CutPrefix(key, q.prefix+":")
		family, text, _ := strings.Cut(tail, ":")
		if ok && (tail == "queue" || tail == "processing" || (family == "item" || family == "lease") && text != "") {
			if found != nil {
				return nil
			}
			found = q
		}
	}
	return found
}

// A queue an older client nested under P:item: (P:item:x) has lists, hashes and sets that match
// P:item:*; deep_clean scans TYPE string and requeues only P's own items (RWQ-KEYS-009).
func TestDeepCleanSkipsNestedQueuesLists(t *testing.T) {
	q, rdb := newQueue(t, nil)
	must[int64](t)(rdb.RPush(ctx, q.prefix+":item:x:queue", "7").Result())
	must[int64](t)(rdb.HSet(ctx, q.prefix+":item:x:policy", "max_attempts", "3").Result())
	must[int64](t)(rdb.SAdd(ctx, q.prefix+":item:x:deep_clean:r", "7").Result())
	must[string](t)(rdb.Set(ctx, q.prefix+":item:orphan", "o", 0).Result())
	rep := must[CleanReport](t)(q.DeepClean(ctx, 1))
	if !reflect.DeepEqual(rep.Requeued, []string{"orphan"}) {
		t.Fatalf("deep clean: %+v", rep)
	}
}
