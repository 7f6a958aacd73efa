package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apistack/apistack/servers/internal/sqldb"
)

// Take is one limiter's part of a TakeAll.
type Take struct {
	Key      string
	Interval time.Duration
	Period   time.Duration
}

// MultiStore is a Store that spends from several buckets in one call, as
// TakeAll needs: in order, stopping at the first that refuses (the buckets
// after it are left untouched).
type MultiStore interface {
	Store
	// TakeAll spends one request of each take's bucket in turn, as Take
	// would, until one refuses. It returns the TAT after the call and
	// whether it was allowed, for the takes up to and including the first
	// refused one.
	TakeAll(ctx context.Context, now time.Time, takes []Take) (tats []time.Time, allowed []bool, err error)
}

// TakeAll spends one request of key's bucket in each limiter, in order, and
// stops at the first that refuses: the decisions returned are those of the
// limiters up to and including that one (all of them when every one
// allowed the request). Limiters sharing one MultiStore and one clock (a
// request's several limits) are spent in one call of the store: on
// PostgreSQL, one statement.
func TakeAll(ctx context.Context, key string, limiters ...*Limiter) ([]Decision, error) {
	if len(limiters) == 0 {
		return nil, nil
	}
	ms, ok := limiters[0].store.(MultiStore)
	for _, l := range limiters[1:] {
		if l.store != limiters[0].store || l.clock != limiters[0].clock {
			ok = false
		}
	}
	if !ok {
		out := make([]Decision, 0, len(limiters))
		for _, l := range limiters {
			d, err := l.Take(ctx, key)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
			if !d.Allowed {
				break
			}
		}
		return out, nil
	}
	now := limiters[0].now(ctx)
	takes := make([]Take, len(limiters))
	for i, l := range limiters {
		takes[i] = Take{Key: l.prefix + key, Interval: l.interval, Period: l.period}
	}
	tats, allowed, err := ms.TakeAll(ctx, now, takes)
	if err != nil {
		return nil, err
	}
	out := make([]Decision, len(tats))
	for i := range tats {
		out[i] = limiters[i].decision(allowed[i], tats[i], now)
	}
	return out, nil
}

// TakeAll implements MultiStore.
func (m *MemoryStore) TakeAll(ctx context.Context, now time.Time, takes []Take) ([]time.Time, []bool, error) {
	return takeInTurn(ctx, now, takes, m.Take)
}

// takeInTurn makes the takes one after the other with take, up to the
// first refused one: what TakeAll answers where the takes are not one
// statement.
func takeInTurn(ctx context.Context, now time.Time, takes []Take,
	take func(ctx context.Context, key string, now time.Time, interval, period time.Duration) (time.Time, bool, error),
) ([]time.Time, []bool, error) {
	var tats []time.Time
	var allowed []bool
	for _, t := range takes {
		tat, ok, err := take(ctx, t.Key, now, t.Interval, t.Period)
		if err != nil {
			return nil, nil, err
		}
		tats, allowed = append(tats, tat), append(allowed, ok)
		if !ok {
			break
		}
	}
	return tats, allowed, nil
}

// TakeAll implements MultiStore; concurrent TakeAlls of the same buckets
// are spent together (see batches).
func (s *SQLStore) TakeAll(ctx context.Context, now time.Time, takes []Take) ([]time.Time, []bool, error) {
	return s.batches.take(ctx, now, takes, s.spend, s.spendMany)
}

// spendMany spends each chain's takes as spend does. On PostgreSQL the
// chains' statements (spend's, one per chain) go in one round trip and
// commit together (a pipeline: the concurrent requests of different
// clients cost one round trip and one commit), in the order of the chains'
// first keys; when PostgreSQL refuses the pipeline, nothing of it was
// spent, and each chain is spent alone.
func (s *SQLStore) spendMany(ctx context.Context, chains []*chainSpend) {
	alone := func() {
		for _, c := range chains {
			c.tats, c.allowed, c.err = s.spend(ctx, c.now, c.takes)
		}
	}
	if s.db.Dialect() != sqldb.Postgres || len(chains) == 1 {
		alone()
		return
	}
	if err := s.sweep(ctx, chains[0].now); err != nil {
		for _, c := range chains {
			c.err = err
		}
		return
	}
	byKey := slices.Clone(chains)
	slices.SortFunc(byKey, func(a, b *chainSpend) int { return strings.Compare(a.takes[0].Key, b.takes[0].Key) })
	took := make(map[*chainSpend][]*int64, len(chains))
	stmts := make([]sqldb.Statement, 0, len(chains))
	for _, c := range byKey {
		query, args := takeAllSQL(c.takes, c.now.UnixMicro())
		t := make([]*int64, len(c.takes))
		dest := make([]any, len(c.takes))
		for i := range dest {
			dest[i] = &t[i]
		}
		took[c] = t
		stmts = append(stmts, sqldb.Statement{SQL: query, Args: args, Scan: dest})
	}
	if err := s.db.QuietPipeline(ctx, stmts...); err != nil {
		alone()
		return
	}
	for _, c := range chains {
		c.tats, c.allowed, c.err = s.outcomes(ctx, c.takes, took[c])
	}
}

// outcomes are the TATs and decisions of takes whose statement returned
// took (nil: refused), up to the first refused, whose bucket is read.
func (s *SQLStore) outcomes(ctx context.Context, takes []Take, took []*int64) ([]time.Time, []bool, error) {
	var tats []time.Time
	var allowed []bool
	for i := range takes {
		if took[i] != nil {
			tats, allowed = append(tats, time.UnixMicro(*took[i]).UTC()), append(allowed, true)
			continue
		}
		tat, ok, err := s.Peek(ctx, takes[i].Key)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, errors.New("rate limit: a refused take has no stored bucket")
		}
		tats, allowed = append(tats, tat), append(allowed, false)
		break
	}
	return tats, allowed, nil
}

// spend is TakeAll's statement. On PostgreSQL the takes are one statement:
// a chain of data-modifying CTEs, each take's upsert (takeSQL's) running
// only when the one before it returned a row (was allowed). A refused take
// returns nothing, and its bucket is read by a second statement, as Take
// does (the statement's own snapshot may predate the concurrent takes its
// upsert waited for). On SQLite the takes run one after the other.
func (s *SQLStore) spend(ctx context.Context, now time.Time, takes []Take) ([]time.Time, []bool, error) {
	if s.db.Dialect() != sqldb.Postgres || len(takes) == 1 {
		return takeInTurn(ctx, now, takes, s.take)
	}
	if err := s.sweep(ctx, now); err != nil {
		return nil, nil, err
	}
	n := now.UnixMicro()
	query, args := takeAllSQL(takes, n)
	dest := make([]any, len(takes))
	took := make([]*int64, len(takes))
	for i := range takes {
		dest[i] = &took[i]
	}
	if err := s.db.QueryRowContext(ctx, query, args...).Scan(dest...); err != nil {
		return nil, nil, fmt.Errorf("rate limit: %w", err)
	}
	return s.outcomes(ctx, takes, took)
}

// takeAllSQL is TakeAll's statement for takes at now (Unix microseconds),
// with its arguments.
func takeAllSQL(takes []Take, n int64) (string, []any) {
	var b strings.Builder
	var args []any
	b.WriteString("WITH ")
	for i, t := range takes {
		iv, p := t.Interval.Microseconds(), t.Period.Microseconds()
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "t%d AS (INSERT INTO rate_limits (key, tat) SELECT CAST(? AS TEXT), CAST(? AS BIGINT)", i)
		args = append(args, t.Key, n+iv)
		if i > 0 {
			fmt.Fprintf(&b, " WHERE EXISTS (SELECT 1 FROM t%d)", i-1)
		}
		b.WriteString(` ON CONFLICT (key) DO UPDATE
SET tat = (CASE WHEN rate_limits.tat > CAST(? AS BIGINT) THEN rate_limits.tat ELSE CAST(? AS BIGINT) END) + CAST(? AS BIGINT)
WHERE (CASE WHEN rate_limits.tat > CAST(? AS BIGINT) THEN rate_limits.tat ELSE CAST(? AS BIGINT) END) + CAST(? AS BIGINT) - CAST(? AS BIGINT) <= CAST(? AS BIGINT)
RETURNING tat)`)
		args = append(args, n, n, iv, n, n, iv, n, p)
	}
	b.WriteString("\nSELECT ")
	for i := range takes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(SELECT tat FROM t%d)", i)
	}
	return b.String(), args
}
