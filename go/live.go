package rwq

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
)

// Profile workers (SPEC §21): live workers register with a heartbeat under the queue's prefix,
// leave when they stop, and are listed while their deadline is after the server's now.

// Limits and defaults of profile workers (RWQ-LIVE-002, RWQ-LIVE-001).
const (
	MinWorkerTTLMs       = 1000
	MaxWorkerTTLMs       = 3_600_000
	MaxWorkerRecordBytes = 4096
	DefaultHeartbeatMs   = 5000
	DefaultHeartbeatTTL  = 30_000
	maxWorkersOffset     = 1_000_000
	maxRecordItems       = 10
)

var workerIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// Beat is what a heartbeat did: the server's time, and the expired entries it removed.
type Beat struct {
	NowMs   int64 `json:"now_ms"`
	Removed int64 `json:"removed"`
}

// LiveWorker is a registered worker whose deadline is after the server's now: its id, the record
// of its last beat, and that deadline (server ms).
type LiveWorker struct {
	ID         string         `json:"id"`
	Record     map[string]any `json:"record"`
	DeadlineMs int64          `json:"deadline_ms"`
}

// NewWorkerID draws a worker id: 16 lower-case hex digits from a secure random source.
func NewWorkerID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("rwq: no secure randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

func checkWorkerID(id string) error {
	if !workerIDPattern.MatchString(id) {
		return invalid("worker id must be 1..64 characters of A-Z a-z 0-9 _ . : - (RWQ-LIVE-002)")
	}
	return nil
}

// encodeRecord is a record as compact JSON (no HTML escaping): a JSON object of at most 4096 bytes.
func encodeRecord(record map[string]any) ([]byte, error) {
	if record == nil {
		return nil, invalid("record must be a JSON object, not null")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(record); err != nil {
		return nil, invalid("record must be JSON: " + err.Error())
	}
	raw := unescapeLineSeparators(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	if len(raw) > MaxWorkerRecordBytes {
		return nil, invalid(fmt.Sprintf("record must be at most %d bytes of JSON, got %d", MaxWorkerRecordBytes, len(raw)))
	}
	return raw, nil
}

// unescapeLineSeparators writes U+2028 and U+2029 as themselves, as the other clients do:
// encoding/json escapes them even without HTML escaping, which made a record 3 bytes longer per
// character than its compact JSON, so a record the other clients accept could be refused.
func unescapeLineSeparators(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`\u202`)) {
		return raw
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 == len(raw) {
			out = append(out, raw[i])
			continue
		}
		if e := raw[i+1:]; len(e) >= 5 && e[0] == 'u' && string(e[1:4]) == "202" && (e[4] == '8' || e[4] == '9') {
			out = append(out, 0xe2, 0x80, 0xa0+e[4]-'0')
			i += 5
			continue
		}
		out = append(out, raw[i], raw[i+1]) // an escape pair: \\ never starts another
		i++
	}
	return out
}

func checkBeat(id string, ttlMs int64, record map[string]any) ([]byte, error) {
	if err := checkWorkerID(id); err != nil {
		return nil, err
	}
	if err := checkRange("ttl_ms", ttlMs, MinWorkerTTLMs, MaxWorkerTTLMs); err != nil {
		return nil, err
	}
	return encodeRecord(record)
}

func checkListing(offset, count int) error {
	if err := checkRange("offset", int64(offset), 0, maxWorkersOffset); err != nil {
		return err
	}
	return checkBatch("count", count)
}

// WorkerBeat registers or refreshes worker id until the server's now plus ttlMs (1000..3600000),
// with its record (a JSON object of at most 4096 bytes), in one script call (RWQ-LIVE-002).
func (q *Queue) WorkerBeat(ctx context.Context, id string, ttlMs int64, record map[string]any) (Beat, error) {
	raw, err := checkBeat(id, ttlMs, record)
	if err != nil {
		return Beat{}, err
	}
	reply, err := q.eval(ctx, "heartbeat", q.one(), "beat", id, ttlMs, raw)
	if err != nil {
		return Beat{}, err
	}
	arr, _ := reply.([]any)
	if len(arr) != 2 {
		return Beat{}, fmt.Errorf("rwq: unexpected heartbeat reply %v", reply)
	}
	return Beat{toInt(arr[0]), toInt(arr[1])}, nil
}

// WorkerLeave removes worker id's entry (a graceful stop); false when it had none.
func (q *Queue) WorkerLeave(ctx context.Context, id string) (bool, error) {
	if err := checkWorkerID(id); err != nil {
		return false, err
	}
	reply, err := q.eval(ctx, "heartbeat", q.one(), "leave", id)
	if err != nil {
		return false, err
	}
	return toInt(reply) == 1, nil
}

// Workers lists the live workers, earliest deadline first, from offset (0..1000000), at most
// count (1..1000) (RWQ-LIVE-003). A stored record that is not a JSON object reads as empty.
func (q *Queue) Workers(ctx context.Context, offset, count int) ([]LiveWorker, error) {
	if err := checkListing(offset, count); err != nil {
		return nil, err
	}
	reply, err := q.eval(ctx, "heartbeat", q.one(), "list", offset, count)
	if err != nil {
		return nil, err
	}
	arr, _ := reply.([]any)
	if len(arr) != 2 {
		return nil, fmt.Errorf("rwq: unexpected heartbeat reply %v", reply)
	}
	entries, _ := arr[1].([]any)
	out := make([]LiveWorker, 0, len(entries))
	for _, e := range entries {
		entry, _ := e.([]any)
		if len(entry) != 3 {
			return nil, fmt.Errorf("rwq: unexpected heartbeat entry %v", e)
		}
		id, _ := entry[0].(string)
		data, _ := entry[1].(string)
		record := map[string]any{}
		if json.Unmarshal([]byte(data), &record) != nil || record == nil {
			record = map[string]any{}
		}
		out = append(out, LiveWorker{ID: id, Record: record, DeadlineMs: toInt(entry[2])})
	}
	return out, nil
}

// WorkerBeat registers a sharded queue's worker on shard 0 (SPEC §21), arguments checked first.
func (s *ShardedQueue) WorkerBeat(ctx context.Context, id string, ttlMs int64, record map[string]any) (Beat, error) {
	if _, err := checkBeat(id, ttlMs, record); err != nil {
		return Beat{}, err
	}
	if err := s.ready(ctx); err != nil {
		return Beat{}, err
	}
	return s.shards[0].WorkerBeat(ctx, id, ttlMs, record)
}

// WorkerLeave removes a worker's entry from shard 0.
func (s *ShardedQueue) WorkerLeave(ctx context.Context, id string) (bool, error) {
	if err := checkWorkerID(id); err != nil {
		return false, err
	}
	if err := s.ready(ctx); err != nil {
		return false, err
	}
	return s.shards[0].WorkerLeave(ctx, id)
}

// Workers lists the live workers of a sharded queue, as shard 0 holds them.
func (s *ShardedQueue) Workers(ctx context.Context, offset, count int) ([]LiveWorker, error) {
	if err := checkListing(offset, count); err != nil {
		return nil, err
	}
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	return s.shards[0].Workers(ctx, offset, count)
}
