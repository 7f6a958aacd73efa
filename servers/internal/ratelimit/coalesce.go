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

// batchQueue is the takes of one chain of buckets waiting for a statement,
// and whether one is on its way.
type batchQueue struct {
	takes   []Take
	running bool
	waiting []*batchMember
}

// batches coalesces an SQLStore's concurrent takes.
type batches struct {
	mu     sync.Mutex
	queues map[string]*batchQueue
}

// take spends one request of each of takes' buckets, in a batch with the
// concurrent takes of the same buckets, with spend (the store's statement
// for n requests of each bucket).
func (b *batches) take(ctx context.Context, now time.Time, takes []Take,
	spend func(ctx context.Context, now time.Time, takes []Take) ([]time.Time, []bool, error)) ([]time.Time, []bool, error) {
	m := &batchMember{ctx: ctx, now: now, done: make(chan struct{})}
	key := batchKey(takes)
	b.mu.Lock()
	if b.queues == nil {
		b.queues = map[string]*batchQueue{}
	}
	q := b.queues[key]
	if q == nil {
		q = &batchQueue{takes: takes}
		b.queues[key] = q
	}
	q.waiting = append(q.waiting, m)
	if !q.running {
		q.running = true
		go b.run(key, q, spend)
	}
	b.mu.Unlock()
	select {
	case <-m.done:
		return m.tats, m.allowed, m.err
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// run spends the batches of q until no take waits.
func (b *batches) run(key string, q *batchQueue, spend func(ctx context.Context, now time.Time, takes []Take) ([]time.Time, []bool, error)) {
	// n requests of a bucket fit in it only while n intervals fit in its
	// period: the upsert of a missing row admits them unchecked.
	most := 1 << 10
	for _, t := range q.takes {
		most = min(most, max(1, int(t.Period/t.Interval)))
	}
	for {
		b.mu.Lock()
		n := min(len(q.waiting), most)
		if n == 0 {
			q.running = false
			delete(b.queues, key)
			b.mu.Unlock()
			return
		}
		batch := q.waiting[:n:n]
		q.waiting = q.waiting[n:]
		b.mu.Unlock()
		spendBatch(q.takes, batch, spend)
		for _, m := range batch {
			close(m.done)
		}
	}
}

// spendBatch spends the requests of batch's members and gives each its
// outcome.
func spendBatch(takes []Take, batch []*batchMember, spend func(ctx context.Context, now time.Time, takes []Take) ([]time.Time, []bool, error)) {
	// The batch is spent when its statement runs, after every member's
	// now: the latest of them (they come from one clock).
	now := batch[0].now
	for _, m := range batch[1:] {
		if m.now.After(now) {
			now = m.now
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), batchTimeout)
	defer cancel()
	n := len(batch)
	scaled := make([]Take, len(takes))
	for i, t := range takes {
		scaled[i] = Take{Key: t.Key, Interval: time.Duration(n) * t.Interval, Period: t.Period}
	}
	tats, allowed, err := spend(ctx, now, scaled)
	if err != nil {
		for _, m := range batch {
			m.err = err
		}
		return
	}
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
		t, a, err := spend(ctx, now, takes[spent:])
		if err != nil {
			m.err = err
			continue
		}
		m.tats, m.allowed = append(m.tats, t...), append(m.allowed, a...)
	}
}
