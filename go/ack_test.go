package rwq

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A primary and its replica of our own: profile ack's WAIT is answered by a real replica.
func startPair(t *testing.T) (primary, replica string) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server is needed on PATH")
	}
	dir := t.TempDir()
	stopP, primary, err := startRedis(bin, dir, "primary", "--repl-diskless-sync-delay", "0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopP)
	var port string
	fmt.Sscanf(primary, "127.0.0.1:%s", &port)
	stopR, replica, err := startRedis(bin, dir, "replica", "--replicaof", "127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopR)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: primary})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		conn := c.Conn()
		conn.Set(ctx, "warm-up", 1, 0)
		n, _ := conn.Wait(ctx, 1, 100*time.Millisecond).Result()
		conn.Close()
		if n == 1 {
			return primary, replica
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica never caught up with its primary")
		}
	}
}

func TestAckWaitsForTheReplica(t *testing.T) {
	primary, replica := startPair(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: primary, MaxRetries: -1})
	defer rdb.Close()
	rep := redis.NewClient(&redis.Options{Addr: replica})
	defer rep.Close()

	q, err := New(rdb, "jobs", &Options{Ack: &Ack{Replicas: 1, TimeoutMs: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	if added, err := q.Add(ctx, "a", []byte("x")); err != nil || !added {
		t.Fatalf("Add = %v, %v", added, err)
	}
	if n := rep.Exists(ctx, "jobs:item:a").Val(); n != 1 {
		t.Fatal("an acknowledged add is not on the replica")
	}

	tooMany, err := New(rdb, "jobs", &Options{Ack: &Ack{Replicas: 2, TimeoutMs: 100}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tooMany.Add(ctx, "b", []byte("x"))
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("Add with 2 replicas asked of 1 = %v, want ErrNotReplicated", err)
	}
	if n := rdb.Exists(ctx, "jobs:item:b").Val(); n != 1 {
		t.Fatal("the add should have taken effect on the primary")
	}
	l, err := q.Lease(ctx, 10000)
	if err != nil || l == nil {
		t.Fatalf("Lease = %v, %v", l, err)
	}
	if _, err := tooMany.Complete(ctx, l.ID); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("Complete = %v, want ErrNotReplicated", err)
	}
}

func TestAckSettingsAreChecked(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	for _, a := range []Ack{{1, 0}, {0, 0}, {-1, 100}, {1001, 100}, {1, -5}} {
		if _, err := New(rdb, "jobs", &Options{Ack: &a}); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("New with %+v = %v, want ErrInvalidArgument", a, err)
		}
	}
	if _, err := New(rdb, "jobs", &Options{Ack: &Ack{Replicas: 0, TimeoutMs: 1000}}); err != nil {
		t.Errorf("Ack with 0 replicas is off, not an error: %v", err)
	}
}
