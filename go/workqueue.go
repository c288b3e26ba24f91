package rwq

import "context"

// WorkQueue is what a *Queue and a *ShardedQueue both offer: code that takes a WorkQueue (a
// Worker, say) runs on either. Every method takes a context; cancelling it abandons the call,
// and a script call abandoned after it was sent may or may not have run (REDIS_ERROR).
type WorkQueue interface {
	// Prefix is the queue's key prefix (a sharded queue's logical name).
	Prefix() string

	Add(ctx context.Context, id string, data []byte) (bool, error)
	AddDelayed(ctx context.Context, id string, data []byte, delayMs int64) (bool, error)
	AddMany(ctx context.Context, items []Item) ([]bool, error)
	AddManyDelayed(ctx context.Context, items []Item, delayMs int64) ([]bool, error)

	Lease(ctx context.Context, leaseMs int64) (*Lease, error)
	LeaseBlocking(ctx context.Context, leaseMs, timeoutMs int64) (*Lease, error)
	LeaseMany(ctx context.Context, count int, leaseMs int64) ([]Lease, error)
	Renew(ctx context.Context, l Lease, leaseMs int64) (bool, error)
	RenewMany(ctx context.Context, leases []Lease, leaseMs int64) ([]bool, error)

	Complete(ctx context.Context, id string) (bool, error)
	CompleteOwned(ctx context.Context, l Lease) (bool, error)
	CompleteMany(ctx context.Context, ids []string) ([]Outcome, error)
	CompleteManyOwned(ctx context.Context, leases []Lease) ([]Outcome, error)
	CompleteAndLease(ctx context.Context, id string, leaseMs int64) (Outcome, *Lease, error)
	CompleteOwnedAndLease(ctx context.Context, l Lease, leaseMs int64) (Outcome, *Lease, error)
	CompleteAndLeaseMany(ctx context.Context, ids []string, count int, leaseMs int64) ([]Outcome, []Lease, error)
	CompleteOwnedAndLeaseMany(ctx context.Context, leases []Lease, count int, leaseMs int64) ([]Outcome, []Lease, error)

	Release(ctx context.Context, l Lease) (bool, error)
	ReleaseMany(ctx context.Context, leases []Lease) ([]Outcome, error)
	ReleaseDelayed(ctx context.Context, l Lease, delayMs int64) (bool, error)
	ReleaseManyDelayed(ctx context.Context, leases []Lease, delayMs int64) ([]Outcome, error)
	ReleaseWith(ctx context.Context, l Lease, opts ReleaseOptions) (bool, error)
	ReleaseManyWith(ctx context.Context, leases []Lease, opts ReleaseOptions) ([]Outcome, error)

	Fail(ctx context.Context, l Lease, reason string) (FailResult, error)
	FailWith(ctx context.Context, l Lease, reason string, opts FailOptions) (FailResult, error)

	Counts(ctx context.Context) (Counts, error)
	LightClean(ctx context.Context, chunk int) (CleanReport, error)
	LightCleanPaced(ctx context.Context, chunk int, paceMs int64) (CleanReport, error)
	DeepClean(ctx context.Context, chunk int) (CleanReport, error)

	SetRetryPolicy(ctx context.Context, p *RetryPolicy) error
	SetRetryPolicyIfAbsent(ctx context.Context, p *RetryPolicy) (bool, error)
	RetryPolicy(ctx context.Context) (*RetryPolicy, error)
	DeadItems(ctx context.Context, offset, count int) ([]DeadItem, error)
	DeadItem(ctx context.Context, id string) (*DeadItem, error)
	RequeueDead(ctx context.Context, ids []string) ([]bool, error)
	PurgeDead(ctx context.Context, ids []string) ([]bool, error)
	TrimDead(ctx context.Context) (int64, error)

	// Profile workers (SPEC §21): live workers.
	WorkerBeat(ctx context.Context, id string, ttlMs int64, record map[string]any) (Beat, error)
	WorkerLeave(ctx context.Context, id string) (bool, error)
	Workers(ctx context.Context, offset, count int) ([]LiveWorker, error)

	// Profile stats (SPEC §22): queue statistics.
	EnableStats(ctx context.Context) (bool, error)
	DisableStats(ctx context.Context) (bool, error)
	Stats(ctx context.Context) (QueueStats, error)
}

var (
	_ WorkQueue = (*Queue)(nil)
	_ WorkQueue = (*ShardedQueue)(nil)
)
