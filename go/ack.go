package rwq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

const maxAckReplicas = 1000

// acknowledged are the scripts a WAIT follows when the queue has an Ack setting (SPEC §17).
var acknowledged = map[string]bool{"add": true, "complete": true, "complete_and_lease": true}

// evalAcked runs a script, then WAIT on the same connection (RWQ-ACK-001): WAIT counts the
// replicas that have this connection's writes, so both go through one pinned connection.
func (q *Queue) evalAcked(ctx context.Context, node conn, name string, keys []string, args []any) (any, error) {
	client, ok := node.(*redis.Client)
	if !ok {
		return nil, redisFailure(fmt.Sprintf("profile ack needs a *redis.Client per node, not %T", node), nil)
	}
	reply, err := q.runAcked(ctx, client, name, keys, args)
	if q.cluster != nil && redirected(err) {
		// The slot moved and the script did not run: find its new master and run there, once.
		q.cluster.ReloadState(ctx)
		if moved, nerr := q.node(ctx); nerr == nil {
			if c, ok := moved.(*redis.Client); ok {
				reply, err = q.runAcked(ctx, c, name, keys, args)
			}
		}
	}
	err = nodeFailed(ctx, q.cluster, err)
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		var rwqErr *Error
		if errors.As(err, &rwqErr) {
			return nil, err
		}
		return nil, translate(err)
	}
	return reply, nil
}

func (q *Queue) runAcked(ctx context.Context, client *redis.Client, name string, keys []string, args []any) (any, error) {
	pinned := client.Conn()
	defer pinned.Close()
	reply, err := scripts[name].Run(ctx, pinned, keys, args...).Result()
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(q.ack.TimeoutMs) * time.Millisecond
	got, err := pinned.Wait(ctx, q.ack.Replicas, timeout).Result()
	if err != nil {
		return nil, err
	}
	if got < int64(q.ack.Replicas) {
		return nil, &Error{Code: CodeNotReplicated, Message: fmt.Sprintf(
			"%s: %d of %d replicas acknowledged the write within %d ms; it took effect on the primary, "+
				"and a failover may lose it", name, got, q.ack.Replicas, q.ack.TimeoutMs)}
	}
	return reply, nil
}
