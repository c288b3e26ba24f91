package rwq

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// A MOVED or ASK reply is the only error after which a script may be sent again: the node did
// not run it. Anything else (a lost connection above all) must surface, never be retried.
func TestRedirectedOnlyForMovedAndAsk(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{replyError("MOVED 3999 127.0.0.1:6381"), true},
		{replyError("ASK 3999 127.0.0.1:6381"), true},
		{replyError("ERR MOVED"), false},
		{replyError("CLUSTERDOWN The cluster is down"), false},
		{errors.New("MOVED 3999 127.0.0.1:6381"), false}, // not a server reply
		{errors.New("read tcp: connection reset by peer"), false},
		{nil, false},
	} {
		if got := redirected(c.err); got != c.want {
			t.Errorf("redirected(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// scriptCounter counts the scripts and BLMOVEs that go through the client it is added to.
type scriptCounter struct{ n *int64 }

func (h scriptCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h scriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h scriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch cmd.Name() {
		case "evalsha", "eval", "blmove":
			atomic.AddInt64(h.n, 1)
		}
		return next(ctx, cmd)
	}
}

// A ClusterClient retries a command whose connection failed whatever MaxRetries says, so a script
// or a BLMOVE whose reply was lost would run again (RWQ-FAIL-004): on a cluster they must go to the
// slot's node client, which honours MaxRetries: -1, never through the cluster client's own loop.
func TestClusterScriptsBypassTheRetryingClusterClient(t *testing.T) {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{clusterAddr}, MaxRetries: -1})
	defer rdb.Close()
	var through int64
	rdb.AddHook(scriptCounter{&through})
	q := must[*Queue](t)(New(rdb, "{bypass}", nil))
	must[bool](t)(q.Add(ctx, "a", []byte("x")))
	l := must[*Lease](t)(q.LeaseBlocking(ctx, 10_000, 100))
	if l == nil || l.ID != "a" {
		t.Fatalf("cluster lease %+v", l)
	}
	if !must[bool](t)(q.Complete(ctx, "a")) {
		t.Fatal("complete: false")
	}
	if through != 0 {
		t.Fatalf("%d script calls or BLMOVEs went through the retrying cluster client", through)
	}
}
