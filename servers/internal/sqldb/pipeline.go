package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Statement is one statement of a Pipeline: SQL with ? placeholders, its
// arguments and, for a statement that returns one row, where to scan it.
type Statement struct {
	// SQL is the statement's text, with ? placeholders.
	SQL string
	// Args are its arguments.
	Args []any
	// Scan, when set, receives the columns of the statement's first row.
	// A statement that returns none fails the Pipeline with sql.ErrNoRows
	// but, unlike an error PostgreSQL raises, does not roll it back (the
	// whole batch is on its way): give such statements a row always
	// (an aggregate, or a SELECT of a CTE's verdict).
	Scan []any
}

// ErrNoPipeline is Pipeline's answer on SQLite, whose transactions run
// in-process (BeginTx), with no round trips to save.
var ErrNoPipeline = errors.New("sqldb: pipelines are for PostgreSQL")

// Pipeline runs stmts on PostgreSQL as one transaction, sent in one round
// trip (pgx's batch: the statements, then one Sync): the transaction
// commits when every statement succeeded and rolls back at the first that
// failed. Each statement runs, in order, with a snapshot taken when it
// starts (READ COMMITTED), so a statement after one that waited for a row
// lock sees what the lock's previous holder committed: a lock, then a check
// and a write that must not race, cost one round trip instead of four
// (BEGIN, the lock, the write, COMMIT). A transaction refused for a conflict
// (Retryable) is run again, as InTx does. After a commit the OnCommit hooks
// run. On SQLite it returns ErrNoPipeline.
func (d *DB) Pipeline(ctx context.Context, stmts ...Statement) error {
	if err := d.QuietPipeline(ctx, stmts...); err != nil {
		return err
	}
	d.committed()
	return nil
}

// QuietPipeline is Pipeline without the OnCommit hooks: for writes no cache
// depends on (the rate limits), which must not drop the caches.
func (d *DB) QuietPipeline(ctx context.Context, stmts ...Statement) error {
	if d.dialect != Postgres {
		return ErrNoPipeline
	}
	return d.retry(ctx, func() error { return d.pipeline(ctx, stmts) })
}

func (d *DB) pipeline(ctx context.Context, stmts []Statement) error {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	defer func() { _ = conn.Close() }()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("pipeline: driver connection %T is not pgx's", dc)
		}
		var b pgx.Batch
		for _, s := range stmts {
			b.Queue(d.Rebind(s.SQL), s.Args...)
		}
		br := c.Conn().SendBatch(ctx, &b)
		for _, s := range stmts {
			var err error
			if s.Scan != nil {
				err = br.QueryRow().Scan(s.Scan...)
				if errors.Is(err, pgx.ErrNoRows) {
					err = sql.ErrNoRows
				}
			} else {
				_, err = br.Exec()
			}
			if err != nil {
				// Close reads the rest of the batch's results: the
				// transaction has ended by the time it returns.
				_ = br.Close()
				return err
			}
		}
		return br.Close()
	})
}
