// Command rwq-adapter is the conformance adapter of the Go client: protocol 1 of
// conformance/PROTOCOL.md, NDJSON requests on stdin and replies on stdout. It only maps JSON to
// rwq calls and back; stdout carries nothing but replies (logs go to stderr).
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/rwq-protocol/rwq/conformance/adapters/go/rwq"
)

var ctx = context.Background()

// jbytes is a bytes value: {"utf8": "..."} or {"base64": "..."}.
type jbytes []byte

func (b *jbytes) UnmarshalJSON(raw []byte) error {
	var v map[string]string
	if err := json.Unmarshal(raw, &v); err != nil || len(v) != 1 {
		return fmt.Errorf(`not a bytes value ({"utf8": ...} or {"base64": ...}): %s`, raw)
	}
	if s, ok := v["utf8"]; ok {
		*b = []byte(s)
		return nil
	}
	s, ok := v["base64"]
	if !ok {
		return fmt.Errorf("not a bytes value: %s", raw)
	}
	d, err := base64.StdEncoding.Strict().DecodeString(s)
	*b = d
	return err
}

func (b jbytes) MarshalJSON() ([]byte, error) {
	if utf8.Valid(b) {
		return json.Marshal(map[string]string{"utf8": string(b)})
	}
	return json.Marshal(map[string]string{"base64": base64.StdEncoding.EncodeToString(b)})
}

// jlease is a lease as results carry it and as the runner passes it back (data ignored).
type jlease struct {
	ID      jbytes `json:"id"`
	Data    jbytes `json:"data"`
	Token   string `json:"token"`
	Attempt int64  `json:"attempt"`
}

func (l jlease) lease() rwq.Lease { return rwq.Lease{ID: string(l.ID), Token: l.Token} }

// params holds every method's parameters; absent ones stay zero and the library judges them.
type params struct {
	ID           *jbytes  `json:"id"`
	Data         jbytes   `json:"data"`
	Lease        *jlease  `json:"lease"`
	Items        []params `json:"items"` // add_many: {id, data}; complete_many, complete_and_lease: {id} or {lease}
	Leases       []jlease `json:"leases"`
	LeaseMs      int64    `json:"lease_ms"`
	Block        bool     `json:"block"`
	TimeoutMs    int64    `json:"timeout_ms"`
	Count        *int     `json:"count"`
	RequireLease bool     `json:"require_lease"`
	Chunk        *int     `json:"chunk"`
	PaceMs       *int64   `json:"pace_ms"`
	DelayMs      *int64   `json:"delay_ms"`
	Reason       string   `json:"reason"`
	Dead         bool     `json:"dead"`              // fail
	FallbackMs   int64    `json:"fallback_delay_ms"` // fail
	Detail       string   `json:"detail"`            // fail
	Refund       bool     `json:"refund_attempt"`    // release, release_many
	Policy       *jpolicy `json:"policy"`
	Offset       *int     `json:"offset"`
	IDs          []jbytes `json:"ids"`
}

// jpolicy is a policy object; fields it leaves out keep the library's default policy.
type jpolicy struct {
	MaxAttempts  int64  `json:"max_attempts"`
	Backoff      string `json:"backoff"`
	BaseMs       int64  `json:"base_ms"`
	CapMs        int64  `json:"cap_ms"`
	JitterPct    int64  `json:"jitter_pct"`
	DeadMaxCount int64  `json:"dead_max_count"`
	DeadMaxAgeMs int64  `json:"dead_max_age_ms"`
}

func (j *jpolicy) UnmarshalJSON(raw []byte) error {
	type plain jpolicy
	v := plain(jpolicy(rwq.DefaultRetryPolicy()))
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	*j = jpolicy(v)
	return nil
}

func (p params) id() string {
	if p.ID == nil {
		return ""
	}
	return string(*p.ID)
}

// target is what complete acts on: an id (a lease without a token) or a lease.
func (p params) target() (rwq.Lease, error) {
	if (p.ID == nil) == (p.Lease == nil) {
		return rwq.Lease{}, badRequest("complete takes exactly one of id and lease")
	}
	if p.Lease != nil {
		return p.Lease.lease(), nil
	}
	return rwq.Lease{ID: p.id()}, nil
}

// or returns *v, or def when the param is absent (the library's default).
func or[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

func (p params) ids() []string {
	out := make([]string, len(p.IDs))
	for i, id := range p.IDs {
		out[i] = string(id)
	}
	return out
}

func leaseJSON(l *rwq.Lease) any {
	if l == nil {
		return nil
	}
	return jlease{ID: jbytes(l.ID), Data: l.Data, Token: l.Token, Attempt: l.Attempt}
}

func leasesOf(in []jlease) []rwq.Lease {
	out := make([]rwq.Lease, len(in))
	for i, l := range in {
		out[i] = l.lease()
	}
	return out
}

func outcomes(out []rwq.Outcome, err error) (any, error) {
	names := make([]string, len(out))
	for i, o := range out {
		names[i] = o.String() // done, gone, lease_lost
	}
	return names, err
}

func cleanJSON(r rwq.CleanReport, err error) (any, error) {
	requeued := make([]jbytes, len(r.Requeued))
	for i, id := range r.Requeued {
		requeued[i] = jbytes(id)
	}
	dead := make([]jbytes, len(r.Dead))
	for i, id := range r.Dead {
		dead[i] = jbytes(id)
	}
	return map[string]any{"requeued": requeued, "dropped": r.Dropped, "dead": dead, "promoted": r.Promoted}, err
}

var failOutcomes = map[rwq.FailOutcome]string{rwq.FailRetry: "retry", rwq.FailDead: "dead", rwq.FailGone: "gone"}

// deadJSON is a dead item; withData for dead_get, whose result always carries the payload.
func deadJSON(d rwq.DeadItem, withData bool) map[string]any {
	v := map[string]any{"id": jbytes(d.ID), "dead_at_ms": d.DeadAtMs, "reason": d.Reason, "attempts": d.Attempts, "detail": d.Detail}
	if withData {
		v["data"] = jbytes(d.Data)
	}
	return v
}

// queue is what a session's methods call: a *rwq.Queue, or a *rwq.ShardedQueue when the session
// was opened with option "shards" (profile sharded); both offer the same methods.
type queue interface {
	Add(ctx context.Context, id string, data []byte) (bool, error)
	AddDelayed(ctx context.Context, id string, data []byte, delayMs int64) (bool, error)
	AddMany(ctx context.Context, items []rwq.Item) ([]bool, error)
	AddManyDelayed(ctx context.Context, items []rwq.Item, delayMs int64) ([]bool, error)
	Lease(ctx context.Context, leaseMs int64) (*rwq.Lease, error)
	LeaseBlocking(ctx context.Context, leaseMs, timeoutMs int64) (*rwq.Lease, error)
	LeaseMany(ctx context.Context, count int, leaseMs int64) ([]rwq.Lease, error)
	Renew(ctx context.Context, l rwq.Lease, leaseMs int64) (bool, error)
	RenewMany(ctx context.Context, leases []rwq.Lease, leaseMs int64) ([]bool, error)
	Complete(ctx context.Context, id string) (bool, error)
	CompleteOwned(ctx context.Context, l rwq.Lease) (bool, error)
	CompleteMany(ctx context.Context, ids []string) ([]rwq.Outcome, error)
	CompleteManyOwned(ctx context.Context, leases []rwq.Lease) ([]rwq.Outcome, error)
	CompleteAndLeaseMany(ctx context.Context, ids []string, count int, leaseMs int64) ([]rwq.Outcome, []rwq.Lease, error)
	CompleteOwnedAndLeaseMany(ctx context.Context, leases []rwq.Lease, count int, leaseMs int64) ([]rwq.Outcome, []rwq.Lease, error)
	ReleaseWith(ctx context.Context, l rwq.Lease, opts rwq.ReleaseOptions) (bool, error)
	ReleaseManyWith(ctx context.Context, leases []rwq.Lease, opts rwq.ReleaseOptions) ([]rwq.Outcome, error)
	FailWith(ctx context.Context, l rwq.Lease, reason string, opts rwq.FailOptions) (rwq.FailResult, error)
	Counts(ctx context.Context) (rwq.Counts, error)
	LightCleanPaced(ctx context.Context, chunk int, paceMs int64) (rwq.CleanReport, error)
	DeepClean(ctx context.Context, chunk int) (rwq.CleanReport, error)
	SetRetryPolicy(ctx context.Context, p *rwq.RetryPolicy) error
	SetRetryPolicyIfAbsent(ctx context.Context, p *rwq.RetryPolicy) (bool, error)
	RetryPolicy(ctx context.Context) (*rwq.RetryPolicy, error)
	DeadItems(ctx context.Context, offset, count int) ([]rwq.DeadItem, error)
	DeadItem(ctx context.Context, id string) (*rwq.DeadItem, error)
	RequeueDead(ctx context.Context, ids []string) ([]bool, error)
	PurgeDead(ctx context.Context, ids []string) ([]bool, error)
}

var (
	_ queue = (*rwq.Queue)(nil)
	_ queue = (*rwq.ShardedQueue)(nil)
)

var methods = map[string]func(q queue, p params) (any, error){
	"add": func(q queue, p params) (any, error) {
		if p.DelayMs != nil {
			return q.AddDelayed(ctx, p.id(), p.Data, *p.DelayMs)
		}
		return q.Add(ctx, p.id(), p.Data)
	},
	"add_many": func(q queue, p params) (any, error) {
		items := make([]rwq.Item, len(p.Items))
		for i, it := range p.Items {
			items[i] = rwq.Item{ID: it.id(), Data: it.Data}
		}
		if p.DelayMs != nil {
			return q.AddManyDelayed(ctx, items, *p.DelayMs)
		}
		return q.AddMany(ctx, items)
	},
	"lease": func(q queue, p params) (any, error) {
		if p.Block {
			l, err := q.LeaseBlocking(ctx, p.LeaseMs, p.TimeoutMs)
			return leaseJSON(l), err
		}
		if p.TimeoutMs != 0 {
			// The Go API cannot express it: a timeout without block (RWQ-LEASE-014).
			return nil, &rwq.Error{Code: rwq.CodeInvalidArgument, Message: "timeout_ms needs block"}
		}
		l, err := q.Lease(ctx, p.LeaseMs)
		return leaseJSON(l), err
	},
	"lease_many": func(q queue, p params) (any, error) {
		leases, err := q.LeaseMany(ctx, or(p.Count, 0), p.LeaseMs)
		out := make([]any, len(leases))
		for i := range leases {
			out[i] = leaseJSON(&leases[i])
		}
		return out, err
	},
	"renew": func(q queue, p params) (any, error) {
		if p.Lease == nil {
			return nil, badRequest("renew needs a lease")
		}
		return q.Renew(ctx, p.Lease.lease(), p.LeaseMs)
	},
	"renew_many": func(q queue, p params) (any, error) {
		return q.RenewMany(ctx, leasesOf(p.Leases), p.LeaseMs)
	},
	"complete": func(q queue, p params) (any, error) {
		t, err := p.target()
		if err != nil {
			return nil, err
		}
		if p.RequireLease {
			return q.CompleteOwned(ctx, t)
		}
		return q.Complete(ctx, t.ID)
	},
	"complete_many": func(q queue, p params) (any, error) {
		leases, ids := make([]rwq.Lease, len(p.Items)), make([]string, len(p.Items))
		for i, it := range p.Items {
			t, err := it.target()
			if err != nil {
				return nil, err
			}
			leases[i], ids[i] = t, t.ID
		}
		if p.RequireLease {
			return outcomes(q.CompleteManyOwned(ctx, leases))
		}
		return outcomes(q.CompleteMany(ctx, ids))
	},
	"complete_and_lease": func(q queue, p params) (any, error) {
		leases, ids := make([]rwq.Lease, len(p.Items)), make([]string, len(p.Items))
		for i, it := range p.Items {
			t, err := it.target()
			if err != nil {
				return nil, err
			}
			leases[i], ids[i] = t, t.ID
		}
		var out []rwq.Outcome
		var next []rwq.Lease
		var err error
		if p.RequireLease {
			out, next, err = q.CompleteOwnedAndLeaseMany(ctx, leases, or(p.Count, 1), p.LeaseMs)
		} else {
			out, next, err = q.CompleteAndLeaseMany(ctx, ids, or(p.Count, 1), p.LeaseMs)
		}
		if err != nil {
			return nil, err
		}
		names, _ := outcomes(out, nil)
		leased := make([]any, len(next))
		for i := range next {
			leased[i] = leaseJSON(&next[i])
		}
		return map[string]any{"outcomes": names, "leases": leased}, nil
	},
	"release": func(q queue, p params) (any, error) {
		if p.Lease == nil {
			return nil, badRequest("release needs a lease")
		}
		return q.ReleaseWith(ctx, p.Lease.lease(), rwq.ReleaseOptions{DelayMs: or(p.DelayMs, 0), RefundAttempt: p.Refund})
	},
	"release_many": func(q queue, p params) (any, error) {
		return outcomes(q.ReleaseManyWith(ctx, leasesOf(p.Leases), rwq.ReleaseOptions{DelayMs: or(p.DelayMs, 0), RefundAttempt: p.Refund}))
	},
	"counts": func(q queue, p params) (any, error) {
		c, err := q.Counts(ctx)
		return map[string]int64{"queued": c.Queued, "processing": c.Processing, "delayed": c.Delayed, "dead": c.Dead}, err
	},
	"light_clean": func(q queue, p params) (any, error) {
		return cleanJSON(q.LightCleanPaced(ctx, or(p.Chunk, rwq.DefaultLightCleanChunk), or(p.PaceMs, 0)))
	},
	"deep_clean": func(q queue, p params) (any, error) {
		return cleanJSON(q.DeepClean(ctx, or(p.Chunk, rwq.DefaultDeepCleanChunk)))
	},
	"fail": func(q queue, p params) (any, error) {
		if p.Lease == nil {
			return nil, badRequest("fail needs a lease")
		}
		opts := rwq.FailOptions{Dead: p.Dead, DelayMs: p.DelayMs, FallbackDelayMs: p.FallbackMs, Detail: p.Detail}
		r, err := q.FailWith(ctx, p.Lease.lease(), p.Reason, opts)
		if err != nil {
			return nil, err
		}
		return map[string]any{"outcome": failOutcomes[r.Outcome], "delay_ms": r.DelayMs}, nil
	},
	"set_policy": func(q queue, p params) (any, error) {
		return struct{}{}, q.SetRetryPolicy(ctx, (*rwq.RetryPolicy)(p.Policy))
	},
	"set_policy_if_absent": func(q queue, p params) (any, error) {
		return q.SetRetryPolicyIfAbsent(ctx, (*rwq.RetryPolicy)(p.Policy))
	},
	"get_policy": func(q queue, p params) (any, error) {
		policy, err := q.RetryPolicy(ctx)
		return (*jpolicy)(policy), err
	},
	"dead_list": func(q queue, p params) (any, error) {
		items, err := q.DeadItems(ctx, or(p.Offset, 0), or(p.Count, 100)) // the Python client's defaults
		out := make([]any, len(items))
		for i, d := range items {
			out[i] = deadJSON(d, false)
		}
		return out, err
	},
	"dead_get": func(q queue, p params) (any, error) {
		d, err := q.DeadItem(ctx, p.id())
		if d == nil || err != nil {
			return nil, err
		}
		return deadJSON(*d, true), nil
	},
	"dead_requeue": func(q queue, p params) (any, error) { return q.RequeueDead(ctx, p.ids()) },
	"dead_purge":   func(q queue, p params) (any, error) { return q.PurgeDead(ctx, p.ids()) },
}

// badRequest is a request the adapter cannot understand (error kind "protocol").
type badRequest string

func (e badRequest) Error() string { return string(e) }

type unsupported string

func (e unsupported) Error() string { return "no method " + string(e) }

type session struct {
	client redis.UniversalClient
	queue  queue
}

type adapter struct {
	redisURL string
	cluster  bool // redisURL is one node of a Redis Cluster: sessions open cluster clients
	sessions map[string]session
	done     bool
}

type request struct {
	ID   *int64          `json:"id"`
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args"`
}

func (a *adapter) hello(args json.RawMessage) (any, error) {
	var h struct {
		Protocols []int
		Redis     struct {
			URL     string
			Cluster *bool
		}
	}
	if err := json.Unmarshal(args, &h); err != nil {
		return nil, badRequest("hello: " + err.Error())
	}
	if !slices.Contains(h.Protocols, 1) {
		return nil, badRequest("this adapter speaks protocol 1 only")
	}
	if h.Redis.URL != "" {
		a.redisURL = h.Redis.URL
	}
	if h.Redis.Cluster != nil {
		a.cluster = *h.Redis.Cluster
	}
	names := make([]string, 0, len(methods))
	for name := range methods {
		names = append(names, name)
	}
	slices.Sort(names)
	return map[string]any{
		"protocol":       1,
		"implementation": map[string]string{"name": "rwq-go", "language": "go", "version": rwq.Version},
		"profiles":       []string{"core", "retry", "delay", "ack", "flat", "sharded", "legacy-lease", "declared-keys"},
		"methods":        names,
		"scripts":        rwq.ScriptSHA1s(),
		"capabilities":   map[string]bool{"cluster": true},
	}, nil
}

func (a *adapter) open(args json.RawMessage) (any, error) {
	var o struct {
		Session, Queue string
		ClientName     string `json:"client_name"`
		Options        struct {
			LegacyLeaseKey bool   `json:"legacy_lease_key"`
			FlatInFlight   bool   `json:"flat_in_flight"`
			WaitReplicas   *int   `json:"wait_replicas"`
			WaitTimeoutMs  *int64 `json:"wait_timeout_ms"`
			Shards         *int   `json:"shards"`        // profile sharded: queue is the logical name P
			DeclaredKeys   bool   `json:"declared_keys"` // profile declared-keys
		}
	}
	if err := json.Unmarshal(args, &o); err != nil {
		return nil, badRequest("open: " + err.Error())
	}
	a.close(o.Session)
	opts, err := redis.ParseURL(a.redisURL)
	if err != nil {
		return nil, badRequest(fmt.Sprintf("redis url %q: %v", a.redisURL, err))
	}
	opts.ClientName = o.ClientName // CLIENT SETNAME on every connection of the session
	// A script whose reply was lost must surface as REDIS_ERROR, never be re-run (RWQ-FAIL-004).
	opts.MaxRetries = -1
	var client redis.UniversalClient
	if a.cluster {
		client = redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: []string{opts.Addr}, Username: opts.Username, Password: opts.Password,
			ClientName: opts.ClientName, MaxRetries: -1,
		})
	} else {
		client = redis.NewClient(opts)
	}
	qopts := &rwq.Options{LegacyLeaseKey: o.Options.LegacyLeaseKey, FlatInFlight: o.Options.FlatInFlight,
		DeclaredKeys: o.Options.DeclaredKeys}
	if w := o.Options; w.WaitReplicas != nil || w.WaitTimeoutMs != nil {
		qopts.Ack = &rwq.Ack{TimeoutMs: 1000}
		if w.WaitReplicas != nil {
			qopts.Ack.Replicas = *w.WaitReplicas
		}
		if w.WaitTimeoutMs != nil {
			qopts.Ack.TimeoutMs = *w.WaitTimeoutMs
		}
	}
	var q queue
	if o.Options.Shards != nil {
		q, err = rwq.NewSharded(client, o.Queue, *o.Options.Shards, qopts)
	} else {
		q, err = rwq.New(client, o.Queue, qopts)
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	a.sessions[o.Session] = session{client, q}
	return struct{}{}, nil
}

func (a *adapter) call(args json.RawMessage) (any, error) {
	var c struct {
		Session, Method string
		Params          params
	}
	if err := json.Unmarshal(args, &c); err != nil {
		return nil, badRequest("call: " + err.Error())
	}
	s, ok := a.sessions[c.Session]
	if !ok {
		return nil, badRequest("unknown session " + c.Session)
	}
	m, ok := methods[c.Method]
	if !ok {
		return nil, unsupported(c.Method)
	}
	return m(s.queue, c.Params)
}

func (a *adapter) close(name string) {
	if s, ok := a.sessions[name]; ok {
		s.client.Close()
		delete(a.sessions, name)
	}
}

func (a *adapter) dispatch(r request) (any, error) {
	switch r.Op {
	case "hello":
		return a.hello(r.Args)
	case "open":
		return a.open(r.Args)
	case "call":
		return a.call(r.Args)
	case "close":
		var c struct{ Session string }
		if err := json.Unmarshal(r.Args, &c); err != nil {
			return nil, badRequest("close: " + err.Error())
		}
		a.close(c.Session)
	case "reset", "shutdown":
		for name := range a.sessions {
			a.close(name)
		}
		a.done = r.Op == "shutdown"
	default:
		return nil, badRequest("unknown op " + r.Op)
	}
	return struct{}{}, nil
}

// handle answers one request line with one reply object.
func (a *adapter) handle(line []byte) (reply map[string]any) {
	var r request
	reply = map[string]any{"v": 1, "id": 0}
	defer func() {
		if p := recover(); p != nil {
			reply["err"] = map[string]any{"kind": "internal", "code": "INTERNAL",
				"message": fmt.Sprint("panic: ", p), "detail": map[string]string{"traceback": string(debug.Stack())}}
		}
	}()
	err := json.Unmarshal(line, &r)
	if err == nil && r.ID == nil {
		err = badRequest("request without id")
	}
	if r.ID != nil {
		reply["id"] = *r.ID
	}
	var result any
	if err == nil {
		result, err = a.dispatch(r)
	}
	var rerr *rwq.Error
	var unsup unsupported
	switch {
	case err == nil:
		reply["ok"] = result
	case errors.As(err, &rerr):
		reply["err"] = map[string]string{"kind": "domain", "code": string(rerr.Code), "message": err.Error()}
	case errors.As(err, &unsup):
		reply["err"] = map[string]string{"kind": "unsupported", "code": "UNSUPPORTED", "message": err.Error()}
	default: // badRequest, and JSON that does not fit the request
		reply["err"] = map[string]string{"kind": "protocol", "code": "BAD_REQUEST", "message": err.Error()}
	}
	return reply
}

func main() {
	a := &adapter{redisURL: os.Getenv("RWQ_REDIS_URL"), cluster: os.Getenv("RWQ_REDIS_CLUSTER") == "1",
		sessions: map[string]session{}}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for !a.done {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			resp, merr := json.Marshal(a.handle(line))
			if merr != nil {
				resp = []byte(`{"v":1,"id":0,"err":{"kind":"internal","code":"INTERNAL","message":"unencodable reply"}}`)
			}
			out.Write(append(resp, '\n'))
			out.Flush()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "rwq-adapter: reading stdin:", err)
			os.Exit(1)
		}
	}
	for name := range a.sessions {
		a.close(name)
	}
}
