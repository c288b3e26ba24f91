package rwq

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Backoff kinds of a RetryPolicy.
const (
	BackoffFixed       = "fixed"
	BackoffExponential = "exponential"
)

// RetryPolicy is a queue's retry policy (profile retry), stored in <prefix>:policy so that every
// client applies the same one. Failure n waits BaseMs (fixed) or min(CapMs, BaseMs*2^(n-1))
// (exponential), shortened by up to JitterPct percent at random. Zero MaxAttempts, CapMs,
// DeadMaxCount and DeadMaxAgeMs mean "no limit".
//
// Its JSON form is the policy object of SPEC §15 (max_attempts, backoff, base_ms, ...); decoding
// one fills the fields it leaves out from DefaultRetryPolicy.
type RetryPolicy struct {
	MaxAttempts  int64  `json:"max_attempts"`
	Backoff      string `json:"backoff"`
	BaseMs       int64  `json:"base_ms"`
	CapMs        int64  `json:"cap_ms"`
	JitterPct    int64  `json:"jitter_pct"`
	DeadMaxCount int64  `json:"dead_max_count"`
	DeadMaxAgeMs int64  `json:"dead_max_age_ms"`
}

// UnmarshalJSON decodes a policy object; fields it leaves out keep DefaultRetryPolicy's values.
func (p *RetryPolicy) UnmarshalJSON(raw []byte) error {
	type plain RetryPolicy // without this method
	v := plain(DefaultRetryPolicy())
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	*p = RetryPolicy(v)
	return nil
}

// String describes the policy in one line, for logs.
func (p RetryPolicy) String() string {
	return fmt.Sprintf("{max_attempts %d, %s backoff from %d ms (cap %d ms, jitter %d %%), dead kept: %d items, %d ms}",
		p.MaxAttempts, p.Backoff, p.BaseMs, p.CapMs, p.JitterPct, p.DeadMaxCount, p.DeadMaxAgeMs)
}

// DefaultRetryPolicy is the reference client's default policy.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, Backoff: BackoffExponential, BaseMs: 1000, CapMs: 300_000,
		DeadMaxCount: 10_000, DeadMaxAgeMs: 7 * 24 * 3600 * 1000}
}

func (p RetryPolicy) fields() []int64 {
	return []int64{p.MaxAttempts, p.BaseMs, p.CapMs, p.JitterPct, p.DeadMaxCount, p.DeadMaxAgeMs}
}

var policyNames = []string{"max_attempts", "base_ms", "cap_ms", "jitter_pct", "dead_max_count", "dead_max_age_ms"}
var policyLimits = []int64{1_000_000, MaxDurationMs, MaxDurationMs, 100, 100_000_000, MaxDurationMs}

// FailOutcome is what Fail did with the item.
type FailOutcome int

// Fail outcomes, as the fail script reports them.
const (
	FailGone  FailOutcome = 0 // the item no longer exists; the caller's lease was cleared
	FailRetry FailOutcome = 1 // retried: ready now (DelayMs 0) or delayed by DelayMs
	FailDead  FailOutcome = 2 // dead-lettered: its attempts were used up
)

func (o FailOutcome) String() string {
	switch o {
	case FailGone:
		return "gone"
	case FailRetry:
		return "retry"
	case FailDead:
		return "dead"
	}
	return "fail_outcome(" + strconv.Itoa(int(o)) + ")"
}

// MarshalText gives the outcome's name (String), so that it encodes as a JSON string.
func (o FailOutcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// FailResult is the outcome of Fail and, for a retry, the backoff the policy chose.
type FailResult struct {
	Outcome FailOutcome `json:"outcome"`
	DelayMs int64       `json:"delay_ms"`
}

// DeadItem is a dead-lettered item. Data is nil from DeadItems, which reads no payloads, and
// never nil from DeadItem. Detail is what the failure kept apart from its reason (a traceback,
// say), or "" (RWQ-RETRY-018).
type DeadItem struct {
	ID       string `json:"id"`
	DeadAtMs int64  `json:"dead_at_ms"`
	Reason   string `json:"reason"`
	Attempts int64  `json:"attempts"`
	Data     []byte `json:"data,omitempty"`
	Detail   string `json:"detail"`
}

// SetRetryPolicy stores the queue's retry policy, replacing any previous one; nil removes it,
// which stops attempt counting.
func (q *Queue) SetRetryPolicy(ctx context.Context, p *RetryPolicy) error {
	args := []any{"clear"}
	if p != nil {
		fields, err := p.args()
		if err != nil {
			return err
		}
		args = fields
	}
	_, err := q.eval(ctx, "set_policy", q.one(), args...)
	return err
}

// SetRetryPolicyIfAbsent stores p only if the queue has no retry policy, in one script call, and
// reports whether it did: a worker's default never replaces an operator's policy (RWQ-RETRY-015).
func (q *Queue) SetRetryPolicyIfAbsent(ctx context.Context, p *RetryPolicy) (bool, error) {
	if p == nil {
		return false, invalid("SetRetryPolicyIfAbsent needs a policy")
	}
	fields, err := p.args()
	if err != nil {
		return false, err
	}
	reply, err := q.eval(ctx, "set_policy", q.one(), append([]any{"default"}, fields...)...)
	if err != nil {
		return false, err
	}
	return toInt(reply) == 1, nil
}

// args validates the policy and returns its seven script arguments.
func (p *RetryPolicy) args() ([]any, error) {
	if p.Backoff != BackoffFixed && p.Backoff != BackoffExponential {
		return nil, invalid("backoff must be fixed or exponential, got " + quote(p.Backoff))
	}
	for i, v := range p.fields() {
		if err := checkRange(policyNames[i], v, 0, policyLimits[i]); err != nil {
			return nil, err
		}
	}
	return []any{p.MaxAttempts, p.Backoff, p.BaseMs, p.CapMs, p.JitterPct, p.DeadMaxCount, p.DeadMaxAgeMs}, nil
}

// RetryPolicy reads the queue's retry policy; nil when it has none.
func (q *Queue) RetryPolicy(ctx context.Context) (*RetryPolicy, error) {
	if err := q.check(ctx); err != nil {
		return nil, err
	}
	raw, err := q.rdb.HGetAll(ctx, q.prefix+":policy").Result()
	err = nodeFailed(ctx, q.cluster, err)
	if err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") {
		return nil, &Error{Code: CodeWrongType, Message: q.prefix + ":policy holds another Redis type than SPEC 3 gives it"}
	}
	if err != nil {
		return nil, translate(err)
	}
	if len(raw) == 0 {
		return nil, nil
	}
	// Read as the scripts read it (RWQ-RETRY-014), whoever wrote it: a malformed number is 0.
	p := &RetryPolicy{Backoff: BackoffFixed}
	if raw["backoff"] == BackoffExponential {
		p.Backoff = BackoffExponential
	}
	for i, dst := range []*int64{&p.MaxAttempts, &p.BaseMs, &p.CapMs, &p.JitterPct, &p.DeadMaxCount, &p.DeadMaxAgeMs} {
		*dst = storedInt(raw[policyNames[i]])
	}
	return p, nil
}

// storedInt reads a number as the scripts do: ASCII decimal digits (^%d+$) up to 10^15, else 0.
func storedInt(s string) int64 {
	digits := strings.TrimLeft(s, "0")
	if s == "" || len(digits) > 16 || strings.Trim(s, "0123456789") != "" {
		return 0
	}
	n, err := strconv.ParseInt("0"+digits, 10, 64)
	if err != nil || n > 1_000_000_000_000_000 {
		return 0
	}
	return n
}

// Fail records a failed attempt by the lease holder: the item is retried after the policy's
// backoff or dead-lettered when its attempts are used up (without a policy: released at once).
// reason (at most 1024 bytes) is kept with a dead item. ErrLeaseLost when the lease is not held.
func (q *Queue) Fail(ctx context.Context, l Lease, reason string) (FailResult, error) {
	return q.FailWith(ctx, l, reason, FailOptions{})
}

// FailOptions steer a failure; the zero value is Fail's.
type FailOptions struct {
	Dead            bool   // a failure no retry can fix: dead-letter now, whatever attempts are left (RWQ-RETRY-016)
	DelayMs         *int64 // retry after exactly this many ms, not the policy's backoff; attempts still count (RWQ-RETRY-017)
	FallbackDelayMs int64  // the delay when the queue has no retry policy; 0: at once, like release (RWQ-RETRY-019)
	Detail          string // kept with a dead item apart from its reason, at most 8192 bytes (RWQ-RETRY-018)
}

// MaxDetailBytes bounds FailOptions.Detail.
const MaxDetailBytes = 8192

// args validates reason and the options and returns the fail script's ARGV 5..7.
func (o FailOptions) args(reason string) ([]any, error) {
	if len(reason) > 1024 {
		return nil, invalid("reason must be at most 1024 bytes")
	}
	if len(o.Detail) > MaxDetailBytes {
		return nil, invalid(fmt.Sprintf("detail must be at most %d bytes, got %d", MaxDetailBytes, len(o.Detail)))
	}
	if err := checkDuration("fallback_delay_ms", o.FallbackDelayMs, 0); err != nil {
		return nil, err
	}
	switch {
	case o.Dead && o.DelayMs != nil:
		return nil, invalid("Dead and DelayMs exclude each other: a dead item is not retried")
	case o.Dead:
		return []any{"dead", 0, o.Detail}, nil
	case o.DelayMs != nil:
		if err := checkDuration("delay_ms", *o.DelayMs, 0); err != nil {
			return nil, err
		}
		return []any{"delay", *o.DelayMs, o.Detail}, nil
	}
	return []any{"backoff", o.FallbackDelayMs, o.Detail}, nil
}

// FailWith is Fail with options.
func (q *Queue) FailWith(ctx context.Context, l Lease, reason string, opts FailOptions) (FailResult, error) {
	if err := checkLease(l); err != nil {
		return FailResult{}, err
	}
	options, err := opts.args(reason)
	if err != nil {
		return FailResult{}, err
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic("rwq: no secure randomness: " + err.Error())
	}
	random := binary.BigEndian.Uint64(r[:]) % 1_000_000
	n, err := q.ints(ctx, "fail", q.both(), 2, append([]any{l.ID, l.Token, reason, random}, options...)...)
	if err != nil {
		return FailResult{}, err
	}
	switch FailOutcome(n[0]) {
	case FailGone, FailRetry:
	case FailDead:
		if _, err := q.TrimDead(ctx); err != nil {
			return FailResult{}, err
		}
	default:
		return FailResult{}, leaseLost(l.ID)
	}
	return FailResult{FailOutcome(n[0]), n[1]}, nil
}

// DeadItems lists dead-lettered items, newest first, without payloads; offset 0..100000000,
// count 1..1000.
func (q *Queue) DeadItems(ctx context.Context, offset, count int) ([]DeadItem, error) {
	if err := checkRange("offset", int64(offset), 0, 100_000_000); err != nil {
		return nil, err
	}
	if err := checkBatch("count", count); err != nil {
		return nil, err
	}
	reply, err := q.eval(ctx, "dead", q.one(), "list", offset, count)
	if err != nil {
		return nil, err
	}
	arr, _ := reply.([]any)
	items := make([]DeadItem, 0, len(arr))
	for _, raw := range arr {
		item, err := deadItem(raw)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

// DeadItem reads one dead-lettered item with its payload; nil when the id is not dead.
func (q *Queue) DeadItem(ctx context.Context, id string) (*DeadItem, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	reply, err := q.eval(ctx, "dead", q.one(), "get", id)
	if err != nil || reply == nil {
		return nil, err
	}
	item, err := deadItem(reply)
	if err != nil {
		return nil, err
	}
	return &item, nil
}

func deadItem(raw any) (DeadItem, error) {
	e, ok := raw.([]any)
	if !ok || len(e) < 3 {
		return DeadItem{}, unexpected("dead", raw)
	}
	// Info written by any client is read field by field (RWQ-RETRY-009): a field of another JSON
	// type, attempts that are not a whole number from 0, or info that is not a JSON object read as
	// empty, never as an error that would hide every other dead item.
	var info map[string]any
	if json.Unmarshal([]byte(toStr(e[2])), &info) != nil {
		info = nil
	}
	reason, _ := info["reason"].(string)
	detail, _ := info["detail"].(string)
	attempts, _ := info["attempts"].(float64)
	if attempts < 0 || attempts != float64(int64(attempts)) {
		attempts = 0
	}
	item := DeadItem{ID: toStr(e[0]), DeadAtMs: toInt(e[1]), Reason: reason, Attempts: int64(attempts), Detail: detail}
	if len(e) > 3 {
		item.Data = append([]byte{}, toStr(e[3])...) // never nil, even when empty
	}
	return item, nil
}

// RequeueDead turns dead items back into ready items with their attempts reset; false where the
// id is not dead, or an item with that id is live or delayed again.
func (q *Queue) RequeueDead(ctx context.Context, ids []string) ([]bool, error) {
	return q.deadAction(ctx, "requeue", ids)
}

// PurgeDead deletes dead items for good; false where the id is not dead.
func (q *Queue) PurgeDead(ctx context.Context, ids []string) ([]bool, error) {
	return q.deadAction(ctx, "purge", ids)
}

func (q *Queue) deadAction(ctx context.Context, action string, ids []string) ([]bool, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		if err := checkID(id); err != nil {
			return nil, err
		}
		args[i] = id
	}
	done := make([]bool, 0, len(ids))
	err := chunks(args, MaxBatch, func(part []any) error {
		flags, err := q.ints(ctx, "dead", q.one(), len(part), append([]any{action}, part...)...)
		for _, f := range flags {
			done = append(done, f == 1)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return done, nil
}

// TrimDead applies the policy's dead-letter retention (age, then count), 1000 removals per
// script call until done; it returns how many dead items it removed. LightClean and a Fail that
// dead-letters run it.
func (q *Queue) TrimDead(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := q.ints(ctx, "dead", q.one(), 2, "trim")
		if err != nil {
			return total, err
		}
		total += n[0]
		if n[0] < 1000 {
			return total, nil
		}
	}
}
