package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// On SQLite with SerializeWrites, the writes that arrive together commit
// together (group commit): while one batch holds the database's single
// writer, the writes arriving queue (a GroupCommit), and the next batch runs
// each of them in turn inside one transaction, each in a savepoint of its
// own, then commits once. A commit writes every page the transaction
// changed to the write-ahead log and updates its index, so n writes to one
// table's last pages then cost one commit and one write of those pages
// instead of n of each, and the writer is held once per batch, not once
// per write.
//
// Each write still gets its own outcome: a write whose function fails is
// rolled back to its savepoint, alone, and the others commit; every write
// of a batch returns only once the batch committed (or failed: an error
// always means the write was not committed). Within a batch the writes run
// one after the other, each seeing the ones before it, as they would have
// one transaction after the other. A batch that fails as a whole (its
// commit refused, or SQLite rolling back the whole transaction on an error
// such as a statement interrupted by its caller's context) commits none of
// its writes; ExecContext and InTx run each of theirs again alone, InTxOnce
// reports the error.

// batchedWrite is one write waiting in a batch: fn runs it in the batch's
// transaction.
type batchedWrite struct {
	fn func(tx *Tx) error
	// quiet: no cache depends on the write (QuietExecContext); a batch of
	// quiet writes alone runs no OnCommit hooks.
	quiet bool
	// panicked holds what fn panicked with: the write's caller panics with
	// it, as if fn had run on its goroutine.
	panicked any
}

// batchSavepoint is the savepoint each write of a batch runs in.
const batchSavepoint = "apistack_write"

// batchFailure is the error of a write whose batch failed as a whole: the
// write itself was not at fault, and committed nothing.
type batchFailure struct{ err error }

func (e *batchFailure) Error() string { return fmt.Sprintf("group commit: %v", e.err) }
func (e *batchFailure) Unwrap() error { return e.err }

// batched reports whether the DB's writes go through group commit.
func (d *DB) batched() bool { return d.group != nil }

// writeInBatch runs w in the transaction of the next batch and returns once
// it committed, with w's error, or the batch's (a *batchFailure).
func (d *DB) writeInBatch(ctx context.Context, w *batchedWrite) error {
	d.pending.Add(1)
	err := d.group.Do(ctx, w)
	d.pending.Add(-1)
	if w.panicked != nil {
		panic(w.panicked)
	}
	return err
}

// commitBatch runs batch's writes in one transaction, each in its savepoint,
// and commits it; it returns each write's outcome.
func (d *DB) commitBatch(ctx context.Context, batch []*batchedWrite) []error {
	errs := make([]error, len(batch))
	fail := func(err error) []error {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = &batchFailure{err: err}
			}
		}
		return errs
	}
	if err := d.writer.lock(ctx); err != nil {
		return fail(err)
	}
	defer d.writer.unlock()
	raw, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(fmt.Errorf("begin: %w", err))
	}
	tx := &Tx{tx: raw, db: d, batch: true}
	defer func() { _ = raw.Rollback() }()
	if len(batch) == 1 {
		// A write alone needs no savepoint: its failure rolls the whole
		// transaction back.
		if errs[0] = runWrite(tx, batch[0]); errs[0] != nil {
			return errs
		}
		if err := raw.Commit(); err != nil {
			return fail(fmt.Errorf("commit: %w", err))
		}
		if !batch[0].quiet {
			d.committed()
		}
		return errs
	}
	committed := 0
	for i, w := range batch {
		if _, err := tx.ExecContext(ctx, `SAVEPOINT `+batchSavepoint); err != nil {
			return fail(fmt.Errorf("savepoint: %w", err))
		}
		if errs[i] = runWrite(tx, w); errs[i] != nil {
			// Undo this write alone. Where SQLite ended the whole
			// transaction (an interrupt, a full disk), the savepoint is
			// gone and so is every write before this one: the batch fails.
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO `+batchSavepoint); err != nil {
				return fail(fmt.Errorf("roll back to the savepoint: %w", err))
			}
		} else if !w.quiet {
			committed++
		}
		if _, err := tx.ExecContext(ctx, `RELEASE `+batchSavepoint); err != nil {
			return fail(fmt.Errorf("release the savepoint: %w", err))
		}
	}
	if err := raw.Commit(); err != nil {
		return fail(fmt.Errorf("commit: %w", err))
	}
	if committed > 0 {
		d.committed()
	}
	return errs
}

// runWrite runs w's function on tx, turning a panic into an error (and
// keeping it for w's caller).
func runWrite(tx *Tx, w *batchedWrite) (err error) {
	defer func() {
		if p := recover(); p != nil {
			w.panicked = p
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return w.fn(tx)
}

// execBatched runs one statement as a write of the next batch; a quiet one
// (QuietExecContext) runs no OnCommit hooks of its own.
func (d *DB) execBatched(ctx context.Context, quiet bool, query string, args []any) (sql.Result, error) {
	var res sql.Result
	err := d.writeInBatch(ctx, &batchedWrite{quiet: quiet, fn: func(tx *Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		// The counts are read now: the transaction's connection serves
		// other statements once the batch ends.
		res, err = readResult(res)
		return err
	}})
	if _, failed := errors.AsType[*batchFailure](err); failed {
		// Not this statement's doing, and nothing committed: alone.
		return d.execAlone(ctx, quiet, query, args)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// unwrapBatch returns a batch's failure as its cause.
func unwrapBatch(err error) error {
	if bf, ok := errors.AsType[*batchFailure](err); ok {
		return bf.err
	}
	return err
}

// readResult reads res's counts into a result of its own.
func readResult(res sql.Result) (sql.Result, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return nil, err
	}
	id, idErr := res.LastInsertId()
	return result{rows: n, id: id, idErr: idErr}, nil
}

// result is a statement's outcome read at once.
type result struct {
	rows  int64
	id    int64
	idErr error
}

func (r result) LastInsertId() (int64, error) { return r.id, r.idErr }
func (r result) RowsAffected() (int64, error) { return r.rows, nil }

// errBatchedTx is what Commit and Rollback answer on a write's transaction
// in a batch: the batch ends it.
var errBatchedTx = errors.New("sqldb: this transaction is part of a group commit; return from the function instead of ending it")
