package rwq

import (
	"context"
	"fmt"
)

// Script replies as go-redis parses them: int64, string (bulk strings, also binary), []any.

func toInt(v any) int64 {
	n, _ := v.(int64)
	return n
}

func toStr(v any) string {
	s, _ := v.(string)
	return s
}

func toStrs(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, len(arr))
	for i, x := range arr {
		out[i] = toStr(x)
	}
	return out
}

func unexpected(what string, reply any) error {
	return redisFailure(fmt.Sprintf("unexpected %s reply: %.200v", what, reply), nil)
}

// ints runs a script whose reply is an array of n integers.
func (q *Queue) ints(ctx context.Context, name string, keys []string, n int, args ...any) ([]int64, error) {
	reply, err := q.eval(ctx, name, keys, args...)
	if err != nil {
		return nil, err
	}
	arr, ok := reply.([]any)
	if !ok || len(arr) != n {
		return nil, unexpected(name, reply)
	}
	out := make([]int64, n)
	for i, x := range arr {
		if out[i], ok = x.(int64); !ok {
			return nil, unexpected(name, reply)
		}
	}
	return out, nil
}

func firstBool(flags []bool, err error) (bool, error) {
	if err != nil || len(flags) == 0 {
		return false, err
	}
	return flags[0], nil
}

func firstLease(leases []Lease, err error) (*Lease, error) {
	if err != nil || len(leases) == 0 {
		return nil, err
	}
	return &leases[0], nil
}
