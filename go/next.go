package rwq

import "context"

// The consumer's fast path (SPEC §6.13, RWQ-NEXT-*): settle the items just processed and lease
// the next ones in one script call, so that a worker handling items one after another pays one
// round trip per item. Each method has exactly the effects of the Complete method it is named
// after followed by a non-blocking LeaseMany under a fresh token, with no other client's command
// in between. A lost lease is the outcome NotHolder, never an error: the leases the call took
// come back with it (RWQ-NEXT-003). When no item is ready, the lease part is empty; a consumer
// then falls back to LeaseBlocking (RWQ-NEXT-005).

// CompleteAndLease completes an item by id, whoever holds it (as Complete), then leases the
// oldest ready item for leaseMs: Done for the item's first completer, Gone otherwise, and the
// next lease or nil when no item is ready.
func (q *Queue) CompleteAndLease(ctx context.Context, id string, leaseMs int64) (Outcome, *Lease, error) {
	return single(q.CompleteAndLeaseMany(ctx, []string{id}, 1, leaseMs))
}

// CompleteOwnedAndLease completes an item only while the caller holds its lease (as
// CompleteOwned), then leases the oldest ready item for leaseMs: Done, Gone or NotHolder (the
// item is left unchanged), and the next lease or nil when no item is ready.
func (q *Queue) CompleteOwnedAndLease(ctx context.Context, l Lease, leaseMs int64) (Outcome, *Lease, error) {
	return single(q.CompleteOwnedAndLeaseMany(ctx, []Lease{l}, 1, leaseMs))
}

// CompleteAndLeaseMany completes 1..1000 items by id (as CompleteMany: Done or Gone per id, in
// order), then leases up to count (1..1000) ready items for leaseMs under one new token.
//
// The leases come from the same script call unless its lease part had to stop early (after
// skipping 1000 stale entries, or, with Options.DeclaredKeys, at an id outside its window); the
// client then leases the rest with lease calls under the same token (RWQ-NEXT-004). An error of
// such a call comes back with the outcomes of the first, which did take effect, and the leases
// it took.
func (q *Queue) CompleteAndLeaseMany(ctx context.Context, ids []string, count int, leaseMs int64) ([]Outcome, []Lease, error) {
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return nil, nil, err
		}
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return q.completeAndLease(ctx, "any", 1, args, count, leaseMs)
}

// CompleteOwnedAndLeaseMany is CompleteAndLeaseMany with owner checks (as CompleteManyOwned):
// Done, Gone or NotHolder per lease, in order; the leases of the call are returned either way.
func (q *Queue) CompleteOwnedAndLeaseMany(ctx context.Context, leases []Lease, count int, leaseMs int64) ([]Outcome, []Lease, error) {
	if err := checkLeases(leases); err != nil {
		return nil, nil, err
	}
	return q.completeAndLease(ctx, "owner", 2, leasePairs(leases), count, leaseMs)
}

// completeAndLease validates both parts, then runs the script once (no chunking: one call is the
// point) with args, step arguments per item to complete.
func (q *Queue) completeAndLease(ctx context.Context, mode string, step int, args []any, count int, leaseMs int64) ([]Outcome, []Lease, error) {
	n := len(args) / step
	if err := checkBatch("items", n); err != nil {
		return nil, nil, err
	}
	if err := checkBatch("count", count); err != nil {
		return nil, nil, err
	}
	if err := checkDuration("lease_ms", leaseMs, 1); err != nil {
		return nil, nil, err
	}
	token := newToken()
	argv := append(make([]any, 0, 6+len(args)), leaseMs, token, count, q.legacy, q.flat, mode)
	reply, err := q.eval(ctx, "complete_and_lease", q.both(), append(argv, args...)...)
	if err != nil {
		return nil, nil, err
	}
	parts, ok := reply.([]any)
	if !ok || len(parts) != 2 {
		return nil, nil, unexpected("complete_and_lease", reply)
	}
	codes, ok := parts[0].([]any)
	if !ok || len(codes) != n {
		return nil, nil, unexpected("complete_and_lease", reply)
	}
	outcomes := make([]Outcome, n)
	for i, c := range codes {
		v, ok := c.(int64)
		if !ok {
			return nil, nil, unexpected("complete_and_lease", reply)
		}
		outcomes[i] = Outcome(v)
	}
	r, err := parseLease("complete_and_lease", parts[1], token)
	if err != nil {
		return outcomes, nil, err
	}
	if len(r.leases) < count && r.again == 1 {
		// The lease part stopped early (after 1000 skipped entries, RWQ-LEASE-007, or at an id
		// outside its window, RWQ-DECL-004): the queue is not known to be empty, so lease what
		// is still missing with ordinary lease calls under the same token (RWQ-NEXT-004).
		more, _, _, err := q.leaseCalls(ctx, token, leaseMs, count-len(r.leases))
		return outcomes, append(r.leases, more...), err
	}
	return outcomes, r.leases, nil
}

// single turns the reply of a one-item, count-1 call into (outcome, next lease or nil).
func single(outcomes []Outcome, leases []Lease, err error) (Outcome, *Lease, error) {
	if len(outcomes) != 1 {
		if err == nil {
			err = redisFailure("expected one outcome", nil)
		}
		return Gone, nil, err
	}
	next, err := firstLease(leases, err)
	return outcomes[0], next, err
}
