package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

// readyProbe is what /readyz checks of the databases once the stack has
// started: each answers a ping, and each SQLite file takes a write (a full
// disk fails the write, never the ping). A shared PostgreSQL database is
// pinged only: its disk is its operator's to watch.
func readyProbe(dbs func() []*sql.DB, shared bool) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, db := range dbs() {
			if err := db.PingContext(ctx); err != nil {
				return fmt.Errorf("database unreachable: %w", err)
			}
			if !shared {
				if err := sqlitedb.WriteProbe(ctx, db); err != nil {
					return err
				}
			}
		}
		return nil
	}
}
