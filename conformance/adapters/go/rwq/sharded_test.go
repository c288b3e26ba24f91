package rwq

import (
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const testShards = 4

func newSharded(t *testing.T, shards int) (*ShardedQueue, *redis.Client, string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: standaloneAddr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	queueSeq++
	name := fmt.Sprintf("sh%d-%s", queueSeq, t.Name())
	return must[*ShardedQueue](t)(NewSharded(rdb, name, shards, nil)), rdb, name
}

// idsOn returns n ids that the routing rule, computed here on its own, puts on shard.
func idsOn(shard, n int, tag string) []string {
	var ids []string
	for k := 0; len(ids) < n; k++ {
		id := fmt.Sprintf("%s%d", tag, k)
		if int(crc32.ChecksumIEEE([]byte(id))%testShards) == shard {
			ids = append(ids, id)
		}
	}
	return ids
}

func TestShardedRoutingRotationAndCounts(t *testing.T) {
	s, rdb, name := newSharded(t, testShards)
	for shard := 0; shard < testShards; shard++ {
		var items []Item
		for _, id := range idsOn(shard, 3, fmt.Sprintf("s%d-", shard)) {
			items = append(items, Item{ID: id, Data: []byte(id)})
		}
		must[[]bool](t)(s.AddMany(ctx, items))
		for _, it := range items {
			key := fmt.Sprintf("{%s#%d}:item:%s", name, shard, it.ID)
			if n := must[int64](t)(rdb.Exists(ctx, key).Result()); n != 1 {
				t.Fatalf("%s is not on shard %d", it.ID, shard)
			}
		}
	}
	if added := must[bool](t)(s.Add(ctx, idsOn(2, 1, "s2-")[0], []byte("again"))); added {
		t.Fatal("a known id was added again on its shard")
	}
	var seen []int
	for i := 0; i < testShards; i++ {
		l := must[*Lease](t)(s.Lease(ctx, 30_000))
		seen = append(seen, s.ShardOf(l.ID))
		must[bool](t)(s.CompleteOwned(ctx, *l))
	}
	sort.Ints(seen)
	if fmt.Sprint(seen) != "[0 1 2 3]" {
		t.Fatalf("one consumer must take from each shard in turn: %v", seen)
	}
	if c := must[Counts](t)(s.Counts(ctx)); c.Queued != 2*testShards || c.Processing != 0 {
		t.Fatalf("counts must sum the shards: %+v", c)
	}
	leases := must[[]Lease](t)(s.LeaseMany(ctx, 100, 1))
	if len(leases) != 2*testShards {
		t.Fatalf("LeaseMany took %d of %d", len(leases), 2*testShards)
	}
	time.Sleep(5 * time.Millisecond)
	if r := must[CleanReport](t)(s.LightCleanPaced(ctx, 1, 0)); len(r.Requeued) != 2*testShards {
		t.Fatalf("a clean must cover every shard: %+v", r)
	}
}

func TestShardedCountMismatchAndBadInput(t *testing.T) {
	s, rdb, name := newSharded(t, testShards)
	before := must[int64](t)(rdb.DBSize(ctx).Result())
	if _, err := s.AddMany(ctx, []Item{{ID: "a", Data: nil}, {ID: "", Data: nil}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a bad id must be refused before any shard is called: %v", err)
	}
	if after := must[int64](t)(rdb.DBSize(ctx).Result()); after != before {
		t.Fatal("a refused AddMany wrote")
	}
	must[bool](t)(s.Add(ctx, "a", []byte("A")))
	other := must[*ShardedQueue](t)(NewSharded(rdb, name, testShards+1, nil))
	if _, err := other.Add(ctx, "b", nil); !errors.Is(err, ErrShardMismatch) {
		t.Fatalf("another shard count must be refused: %v", err)
	}
	if n := must[int64](t)(rdb.Exists(ctx, fmt.Sprintf("{%s#%d}:item:b", name, other.ShardOf("b"))).Result()); n != 0 {
		t.Fatal("the refused client wrote")
	}
	for _, bad := range []int{0, MaxShards + 1} {
		if _, err := NewSharded(rdb, name, bad, nil); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("shards=%d must be refused: %v", bad, err)
		}
	}
	if _, err := NewSharded(rdb, "{jobs}", 2, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a hash-tagged prefix must be refused: %v", err)
	}
}

func TestShardedBlockingLeaseWakes(t *testing.T) {
	s, rdb, name := newSharded(t, testShards)
	producer := must[*ShardedQueue](t)(NewSharded(rdb, name, testShards, nil))
	got := make(chan *Lease, 1)
	go func() {
		l, err := s.LeaseBlocking(ctx, 30_000, 10_000)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	time.Sleep(300 * time.Millisecond)
	started := time.Now()
	must[bool](t)(producer.Add(ctx, idsOn(3, 1, "late-")[0], []byte("L")))
	select {
	case l := <-got:
		if l == nil {
			t.Fatal("the blocking lease timed out")
		}
		if waited := time.Since(started); waited > 3*time.Second {
			t.Fatalf("woke after %v: at most a second per empty sweep", waited)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the blocking lease never returned")
	}
}
