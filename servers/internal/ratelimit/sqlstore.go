package ratelimit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/apistack/apistack/servers/internal/sqldb"
)

// Schema is the table an SQLStore needs in the API's schema; each API's
// migrations create it (PostgreSQL set), then make it unlogged: a bucket's
// spend then waits for no flush of the write-ahead log.
const Schema = `CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    tat BIGINT NOT NULL
);`

// SQLStore keeps TATs in the rate_limits table (Schema), as Unix
// microseconds, so every replica sharing the database shares each key's
// bucket. A take is one atomic statement: an insert of a missing key, or an
// update guarded by the GCRA test, returning the new TAT only when allowed.
//
// Concurrent takes of the same buckets are spent in one statement (see
// batches).
type SQLStore struct {
	db      *sqldb.DB
	takes   atomic.Int64
	batches batches
}

// NewSQLStore returns a store on db's rate_limits table.
func NewSQLStore(db *sqldb.DB) *SQLStore { return &SQLStore{db: db} }

// StoreFor returns the store a server's limiters use on db: an SQLStore
// when other replicas share db, a MemoryStore when this process owns it.
func StoreFor(db *sqldb.DB) Store {
	if db != nil && db.Shared() {
		return NewSQLStore(db)
	}
	return NewMemoryStore()
}

// The statement's parameters: key, the inserted TAT (now + interval), then
// now, now, interval (the new TAT), then now, now, interval, now, period
// (the guard).
const takeSQL = `INSERT INTO rate_limits (key, tat) VALUES (?, CAST(? AS BIGINT))
ON CONFLICT (key) DO UPDATE
SET tat = (CASE WHEN rate_limits.tat > CAST(? AS BIGINT) THEN rate_limits.tat ELSE CAST(? AS BIGINT) END) + CAST(? AS BIGINT)
WHERE (CASE WHEN rate_limits.tat > CAST(? AS BIGINT) THEN rate_limits.tat ELSE CAST(? AS BIGINT) END) + CAST(? AS BIGINT) - CAST(? AS BIGINT) <= CAST(? AS BIGINT)
RETURNING tat`

// Take implements Store.
func (s *SQLStore) Take(ctx context.Context, key string, now time.Time, interval, period time.Duration) (time.Time, bool, error) {
	tats, allowed, err := s.batches.take(ctx, now, []Take{{Key: key, Interval: interval, Period: period}}, s.spend, s.spendMany)
	if err != nil {
		return time.Time{}, false, err
	}
	return tats[0], allowed[0], nil
}

// take spends one request of key's bucket (interval may be several
// requests' intervals: a batch's) in one statement.
func (s *SQLStore) take(ctx context.Context, key string, now time.Time, interval, period time.Duration) (time.Time, bool, error) {
	n, iv, p := now.UnixMicro(), interval.Microseconds(), period.Microseconds()
	if err := s.sweep(ctx, now); err != nil {
		return time.Time{}, false, err
	}
	var tat int64
	err := s.db.QueryRowContext(ctx, takeSQL, key, n+iv, n, n, iv, n, n, iv, n, p).Scan(&tat)
	if err == nil {
		return time.UnixMicro(tat).UTC(), true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, fmt.Errorf("rate limit: %w", err)
	}
	tatNow, _, err := s.Peek(ctx, key)
	if err != nil {
		return time.Time{}, false, err
	}
	return tatNow, false, nil
}

// sweep deletes, once every 4096 takes, the rows whose bucket is full: the
// same as no row.
func (s *SQLStore) sweep(ctx context.Context, now time.Time) error {
	if s.takes.Add(1)%4096 != 0 {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM rate_limits WHERE tat <= ?`, now.UnixMicro()); err != nil {
		return fmt.Errorf("rate limit: sweep: %w", err)
	}
	return nil
}

// Peek implements Store.
func (s *SQLStore) Peek(ctx context.Context, key string) (time.Time, bool, error) {
	var tat int64
	err := s.db.QueryRowContext(ctx, `SELECT tat FROM rate_limits WHERE key = ?`, key).Scan(&tat)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("rate limit: %w", err)
	}
	return time.UnixMicro(tat).UTC(), true, nil
}
