package benchproc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// What PostgreSQL itself says about a round of load: the statements its
// clients ran (pg_stat_statements, when the server has it loaded) and what
// its backends waited on (pg_stat_activity, sampled). The queries of these
// helpers read only the pg_stat views, and the statements they count leave
// those out.

// Statement is what pg_stat_statements holds of one statement since its
// last reset.
type Statement struct {
	// Query is the statement's normalized text.
	Query string
	// Calls is how many times it ran.
	Calls int64
	// Millis is the time it took, all calls together.
	Millis float64
}

// ErrNoStatStatements is returned when the server has no pg_stat_statements
// (the library is not in shared_preload_libraries, or the extension is not
// installed and cannot be).
var ErrNoStatStatements = errors.New("pg_stat_statements is not available on this server")

// ResetStatements creates the pg_stat_statements extension in db's database
// when missing and empties its counts.
func ResetStatements(ctx context.Context, db *sql.DB) error {
	var loaded bool
	if err := db.QueryRowContext(ctx,
		`SELECT 'pg_stat_statements' = ANY(string_to_array(replace(current_setting('shared_preload_libraries'), ' ', ''), ','))`).Scan(&loaded); err != nil {
		return fmt.Errorf("pg_stat_statements: %w", err)
	}
	if !loaded {
		return ErrNoStatStatements
	}
	if _, err := db.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return fmt.Errorf("%w: %w", ErrNoStatStatements, err)
	}
	if _, err := db.ExecContext(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		return fmt.Errorf("pg_stat_statements reset: %w", err)
	}
	return nil
}

// Statements returns the statements run in db's database since the last
// ResetStatements, the most called first, leaving out those reading the
// pg_stat views (the benchmark's own).
func Statements(ctx context.Context, db *sql.DB) ([]Statement, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT s.query, s.calls, s.total_exec_time
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = current_database() AND s.toplevel AND s.query NOT LIKE '%pg_stat%'
		ORDER BY s.calls DESC, s.query`)
	if err != nil {
		return nil, fmt.Errorf("pg_stat_statements: %w", err)
	}
	defer rows.Close()
	var out []Statement
	for rows.Next() {
		var s Statement
		if err := rows.Scan(&s.Query, &s.Calls, &s.Millis); err != nil {
			return nil, fmt.Errorf("pg_stat_statements: %w", err)
		}
		s.Query = strings.Join(strings.Fields(s.Query), " ")
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pg_stat_statements: %w", err)
	}
	return out, nil
}

// Waits is what a WaitSampler saw: how many client backends of the
// database were, on average over the samples, running a statement and
// waiting on each kind of wait event.
type Waits struct {
	// Samples is how many times pg_stat_activity was read.
	Samples int
	// Active is the mean count of backends running a statement.
	Active float64
	// Events is the mean count of backends waiting on each event, keyed
	// "type:event" as pg_stat_activity names them (Lock:object is a
	// heavyweight lock on a database object: the notification queue's lock
	// at commit is one; LWLock:NotifyQueue its queue's lightweight lock).
	Events map[string]float64
}

// WaitSampler reads pg_stat_activity at a fixed interval until stopped.
type WaitSampler struct {
	db     *sql.DB
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	counts map[string]int
	active int
	n      int
	err    error
}

// SampleWaits starts sampling, every interval, what the client backends of
// db's database wait on; db should have a connection to spare for it.
func SampleWaits(db *sql.DB, interval time.Duration) *WaitSampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &WaitSampler{db: db, cancel: cancel, done: make(chan struct{}), counts: map[string]int{}}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if err := s.sample(ctx); err != nil {
				if ctx.Err() == nil {
					s.mu.Lock()
					s.err = err
					s.mu.Unlock()
				}
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *WaitSampler) sample(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `
		SELECT coalesce(wait_event_type || ':' || wait_event, ''), coalesce(state = 'active', false)
		FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		return err
	}
	defer rows.Close()
	counts := map[string]int{}
	active := 0
	for rows.Next() {
		var event string
		var isActive bool
		if err := rows.Scan(&event, &isActive); err != nil {
			return err
		}
		if !isActive {
			continue
		}
		active++
		if event != "" {
			counts[event]++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.active += active
	for k, v := range counts {
		s.counts[k] += v
	}
	return nil
}

// Stop ends the sampling and returns what it saw.
func (s *WaitSampler) Stop() (Waits, error) {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	w := Waits{Samples: s.n, Events: map[string]float64{}}
	if s.n == 0 {
		return w, s.err
	}
	w.Active = float64(s.active) / float64(s.n)
	for k, v := range s.counts {
		w.Events[k] = float64(v) / float64(s.n)
	}
	return w, s.err
}

// MultiXacts returns the cluster's next multixact id after a checkpoint
// (the control file has it exactly only then; the checkpoint needs a
// superuser or pg_checkpoint). The difference over a round of load is how
// many multixacts it created: one each time a transaction locks a row
// other transactions hold a lock on, as concurrent foreign-key checks of
// one parent row do (FOR KEY SHARE).
func MultiXacts(ctx context.Context, db *sql.DB) (uint64, error) {
	if _, err := db.ExecContext(ctx, `CHECKPOINT`); err != nil {
		return 0, fmt.Errorf("multixacts: checkpoint: %w", err)
	}
	var next uint64
	if err := db.QueryRowContext(ctx, `SELECT next_multixact_id::text::bigint FROM pg_control_checkpoint()`).Scan(&next); err != nil {
		return 0, fmt.Errorf("multixacts: %w", err)
	}
	return next, nil
}
