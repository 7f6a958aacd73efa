package ratelimit

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Concurrent takes of the same buckets (one client's requests arriving
// together: the same key, the same limits) are spent together on an
// SQLStore: while a statement for those buckets is on its way, the takes
// arriving queue, and the next statement spends all of them at once, n
// requests of each bucket in one upsert (the TAT moved n intervals), so a
// busy client's requests cost a round trip per batch, not per request.
//
// The outcome is the one the takes would have had one after the other: a
// batch is spent only when all n fit (n is at most what a full bucket
// holds), and member i of the batch gets the TAT as it stood after the
// i+1-th of the n requests. When a bucket of the chain refuses the batch,
// the buckets before it have spent n (as n requests one after the other
// would have), and each member then spends, one after the other, from that
// bucket and the ones after it.

// batchTimeout bounds a batch's statements. A batch runs on its own
// goroutine, not in one member's context: the other members wait for it.
// A member whose context ends stops waiting (its request may still have
// been spent, as a request that gives up after its take).
const batchTimeout = 10 * time.Second

// batchKey names the buckets of a chain of takes: the takes that may be
// spent together.
func batchKey(takes []Take) string {
	var b strings.Builder
	for _, t := range takes {
		b.WriteString(t.Key)
		b.WriteByte(0)
		b.WriteString(strconv.FormatInt(int64(t.Interval), 10))
		b.WriteByte(0)
		b.WriteString(strconv.FormatInt(int64(t.Period), 10))
		b.WriteByte(0)
	}
	return b.String()
}

// batchMember is one take waiting in a batch.
type batchMember struct {
	ctx     context.Context
	now     time.Time
	done    chan struct{}
	tats    []time.Time
	allowed []bool
	err     error
}

// batchQueue is the takes of one chain of buckets waiting for a statement.
type batchQueue struct {
	takes   []Take
	most    int
	waiting []*batchMember
}

// Different clients' batches waiting at the same moment are spent together
// too, each its own statement but all in one round trip and one commit
// (spendMany; on PostgreSQL a pipeline): one batch of statements is on its
// way at a time per store, and the batches that queued meanwhile, of every
// chain of buckets, go in the next.

// spendFunc spends takes at now in one statement (a store's).
type spendFunc func(ctx context.Context, now time.Time, takes []Take) ([]time.Time, []bool, error)

// chainSpend is one chain's batch in a spendMany: its takes (n requests
// each) at now, and the outcome.
type chainSpend struct {
	now     time.Time
	takes   []Take
	tats    []time.Time
	allowed []bool
	err     error
}

// spendManyFunc spends each chain's takes, as spendFunc would one after
// the other, filling in each chain's outcome.
type spendManyFunc func(ctx context.Context, chains []*chainSpend)

// batches coalesces an SQLStore's concurrent takes.
type batches struct {
	mu      sync.Mutex
	queues  map[string]*batchQueue
	running bool
}

// take spends one request of each of takes' buckets, in a batch with the
// concurrent takes of the same buckets, with spendMany (the store's
// statements for n requests of each bucket of several chains) and spend
// (one chain's).
func (b *batches) take(ctx context.Context, now time.Time, takes []Take, spend spendFunc, spendMany spendManyFunc) ([]time.Time, []bool, error) {
	m := &batchMember{ctx: ctx, now: now, done: make(chan struct{})}
	key := batchKey(takes)
	b.mu.Lock()
	if b.queues == nil {
		b.queues = map[string]*batchQueue{}
	}
	q := b.queues[key]
	if q == nil {
		// n requests of a bucket fit in it only while n intervals fit in
		// its period: the upsert of a missing row admits them unchecked.
		most := 1 << 10
		for _, t := range takes {
			most = min(most, max(1, int(t.Period/t.Interval)))
		}
		q = &batchQueue{takes: takes, most: most}
		b.queues[key] = q
	}
	q.waiting = append(q.waiting, m)
	if !b.running {
		b.running = true
		go b.run(spend, spendMany)
	}
	b.mu.Unlock()
	select {
	case <-m.done:
		return m.tats, m.allowed, m.err
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// readyBatch is one chain's members spent in a round.
type readyBatch struct {
	takes   []Take
	members []*batchMember
}

// run spends rounds of batches, one batch per chain of buckets waiting,
// until no take waits.
func (b *batches) run(spend spendFunc, spendMany spendManyFunc) {
	for {
		b.mu.Lock()
		var ready []readyBatch
		for key, q := range b.queues {
			n := min(len(q.waiting), q.most)
			if n == 0 {
				delete(b.queues, key)
				continue
			}
			ready = append(ready, readyBatch{takes: q.takes, members: q.waiting[:n:n]})
			q.waiting = q.waiting[n:]
		}
		if len(ready) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		spendBatches(ready, spend, spendMany)
		for _, r := range ready {
			for _, m := range r.members {
				close(m.done)
			}
		}
	}
}

// spendBatches spends the requests of each ready batch's members, the
// batches' first statements together (spendMany), and gives each member
// its outcome.
func spendBatches(ready []readyBatch, spend spendFunc, spendMany spendManyFunc) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ready[0].members[0].ctx), batchTimeout)
	defer cancel()
	chains := make([]*chainSpend, len(ready))
	for i, r := range ready {
		// A batch is spent when its statement runs, after every member's
		// now: the latest of them (they come from one clock).
		now := r.members[0].now
		for _, m := range r.members[1:] {
			if m.now.After(now) {
				now = m.now
			}
		}
		n := len(r.members)
		scaled := make([]Take, len(r.takes))
		for j, t := range r.takes {
			scaled[j] = Take{Key: t.Key, Interval: time.Duration(n) * t.Interval, Period: t.Period}
		}
		chains[i] = &chainSpend{now: now, takes: scaled}
	}
	spendMany(ctx, chains)
	for i, r := range ready {
		finishBatch(ctx, r.takes, r.members, chains[i], spend)
	}
}

// finishBatch gives each member of batch its outcome once the batch's
// statement returned c's; a bucket that refused the batch is then spent
// from by each member, one after the other.
func finishBatch(ctx context.Context, takes []Take, batch []*batchMember, c *chainSpend, spend spendFunc) {
	if c.err != nil {
		for _, m := range batch {
			m.err = c.err
		}
		return
	}
	tats, allowed, n := c.tats, c.allowed, len(batch)
	// The buckets that allowed the batch: member i sees the TAT after its
	// own request, n-1-i intervals before the batch's last.
	spent := len(tats)
	if !allowed[spent-1] && n > 1 {
		spent--
	}
	for i, m := range batch {
		for j := range spent {
			m.tats = append(m.tats, tats[j].Add(-time.Duration(n-1-i)*takes[j].Interval))
			m.allowed = append(m.allowed, allowed[j])
		}
	}
	if spent == len(tats) {
		return
	}
	// A bucket refused the batch: from it on, one member after the other.
	for _, m := range batch {
		t, a, err := spend(ctx, c.now, takes[spent:])
		if err != nil {
			m.err = err
			continue
		}
		m.tats, m.allowed = append(m.tats, t...), append(m.allowed, a...)
	}
}
