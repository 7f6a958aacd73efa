package sqldb

import (
	"context"
	"database/sql"
)

// Execer runs a statement: a *DB, a *Tx (or a *sql.DB, *sql.Tx).
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// ExecOne runs a statement that is to change at least one row (an update or
// delete of a row by its key, an insert that may find its key taken): it
// returns none, the store's error for that case (storeerr.ErrNotFound,
// storeerr.ErrAlreadyExists), when the statement changed nothing.
func ExecOne(ctx context.Context, db Execer, none error, query string, args ...any) error {
	res, err := db.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return none
	}
	return nil
}
