package rwq

import (
	"context"
	"errors"
)

// Default chunk sizes of the cleaners (entries or ids per script call).
const (
	DefaultLightCleanChunk = 100
	DefaultDeepCleanChunk  = 1000
)

// LightClean requeues abandoned items (in flight, lease expired) and drops ghost entries,
// examining chunk (1..1000) processing entries per script call until the whole list was seen;
// then it applies the dead-letter retention. Run it about once per shortest lease time.
func (q *Queue) LightClean(ctx context.Context, chunk int) (CleanReport, error) {
	return q.LightCleanPaced(ctx, chunk, 0)
}

// LightCleanPaced is LightClean that does nothing when another paced clean started within
// paceMs (SPEC RWQ-CLEAN-007): cleaners in every worker then walk the list once per paceMs
// between them, however many they are. paceMs 0 is LightClean.
func (q *Queue) LightCleanPaced(ctx context.Context, chunk int, paceMs int64) (CleanReport, error) {
	var report CleanReport
	if err := checkBatch("chunk", chunk); err != nil {
		return report, err
	}
	if err := checkDuration("pace_ms", paceMs, 0); err != nil {
		return report, err
	}
	for cursor, first := int64(0), true; ; first = false {
		args := []any{cursor, chunk}
		if paceMs > 0 && first {
			// Only the pass's first call is paced: a later one may come back to cursor 0.
			args = append(args, paceMs)
		}
		reply, err := q.eval(ctx, "light_clean", q.both(), args...)
		if err != nil {
			return CleanReport{}, err
		}
		arr, ok := reply.([]any)
		if !ok || len(arr) != 5 {
			return CleanReport{}, unexpected("light_clean", reply)
		}
		cursor = toInt(arr[0])
		report.Requeued = append(report.Requeued, toStrs(arr[1])...)
		report.Dropped += toInt(arr[2])
		report.Dead = append(report.Dead, toStrs(arr[3])...)
		report.Promoted += toInt(arr[4])
		if cursor < 0 {
			break
		}
	}
	if _, err := q.TrimDead(ctx); err != nil {
		return CleanReport{}, err
	}
	return report, nil
}

// DeepClean requeues orphans (items in neither list and without a lease, left by older clients
// or manual edits) found with SCAN, and drops ghost ids from both lists; chunk (1..1000) is the
// number of entries per script call and the SCAN COUNT. Rare maintenance, run by one process.
func (q *Queue) DeepClean(ctx context.Context, chunk int) (CleanReport, error) {
	if err := checkBatch("chunk", chunk); err != nil {
		return CleanReport{}, err
	}
	keys := append(q.both(), q.prefix+":deep_clean:"+newToken()[:16])
	report, err := q.deepCleanRun(ctx, keys, chunk)
	if err != nil && !errors.Is(err, ErrWrongType) {
		return CleanReport{}, err
	}
	// A refused run still ends with finish, which checks only the index's type (RWQ-DEEP-005).
	if _, ferr := q.eval(ctx, "deep_clean", keys, "finish"); err == nil && ferr != nil {
		return CleanReport{}, ferr
	}
	if err != nil {
		return CleanReport{}, err
	}
	return report, nil
}

// deepCleanRun is a deep clean's index and requeue calls, without the finish call.
func (q *Queue) deepCleanRun(ctx context.Context, keys []string, chunk int) (CleanReport, error) {
	var report CleanReport
	node, err := q.node(ctx) // SCAN must go to the node of the queue's slot (RWQ-CLUSTER-002)
	if err != nil {
		return CleanReport{}, err
	}
	itemPrefix := q.prefix + ":item:"
	scan := func(cursor uint64) ([]string, uint64, error) {
		// Only strings are items: a nested queue's lists and hashes are not (RWQ-KEYS-009).
		found, next, err := node.ScanType(ctx, cursor, itemPrefix+"*", int64(chunk), "string").Result()
		if err = nodeFailed(ctx, q.cluster, err); err != nil {
			return nil, 0, translate(err)
		}
		return found, next, nil
	}
	// The first SCAN page comes before the index: SCAN is the command a role may lack, so a
	// refused deep clean writes nothing (RWQ-SEC-006). Its ids are judged against the index
	// built after it, as every later page's are.
	found, next, err := scan(0)
	if err != nil {
		return CleanReport{}, err
	}
	for _, list := range []string{"queue", "processing"} {
		for start := int64(0); start >= 0; {
			reply, err := q.eval(ctx, "deep_clean", keys, "index", list, start, chunk)
			if err != nil {
				return CleanReport{}, err
			}
			arr, ok := reply.([]any)
			if !ok || len(arr) != 2 {
				return CleanReport{}, unexpected("deep_clean", reply)
			}
			start = toInt(arr[0])
			report.Dropped += toInt(arr[1])
		}
	}
	for {
		ids := make([]any, 0, len(found))
		for _, key := range found {
			// Ids longer than RWQ/1 allows (older clients have no limit) are left alone: the
			// requeue script would refuse the whole call.
			if n := len(key) - len(itemPrefix); n > 0 && n <= MaxIDBytes {
				ids = append(ids, key[len(itemPrefix):])
			}
		}
		err = chunks(ids, chunk, func(part []any) error {
			reply, err := q.eval(ctx, "deep_clean", keys, append([]any{"requeue"}, part...)...)
			report.Requeued = append(report.Requeued, toStrs(reply)...)
			return err
		})
		if err != nil {
			return CleanReport{}, err
		}
		if next == 0 {
			break
		}
		if found, next, err = scan(next); err != nil {
			return CleanReport{}, err
		}
	}
	return report, nil
}
