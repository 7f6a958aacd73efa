package testdb

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// replicaPair is two pools on one fresh schema of notes, as two replicas
// (raw and wrapped), and a cache the second follows.
type replicaPair struct {
	rawA, rawB *sql.DB
	a, b       *sqldb.DB
	c          *cache.Cache[string]
}

// followingPair opens a replicaPair and returns once its second pool
// listens.
func followingPair(t testing.TB) replicaPair {
	t.Helper()
	var p replicaPair
	p.rawA, p.rawB = OpenSchemaTwice(t, Migrations{Schema: "notes", SQLite: notes, Postgres: notes})
	p.a, p.b = sqldb.New(p.rawA, sqldb.Options{}), sqldb.New(p.rawB, sqldb.Options{})
	p.c = cache.New[string](10, time.Minute)
	p.b.Follow(p.c)
	require.Eventually(t, p.b.Fresh, 10*time.Second, 10*time.Millisecond, "B listens")
	return p
}

// Two pools on one schema, as two replicas: a cache following one is
// dropped by the other's commit as soon as the commit is heard, never by its
// own pool's commits (those are the service's to act on), and answers
// nothing while its listening session is lost, until it listens again.
func TestFollow_ACacheIsDroppedByAnotherReplicasCommitAndBypassedWhileDeaf(t *testing.T) {
	p := followingPair(t)
	a, b, c := p.a, p.b, p.c
	ctx := context.Background()

	c.Put(c.Generation(), "k", "v")
	_, ok := c.Get("k")
	require.True(t, ok)

	// B's own commit: heard by nobody in B.
	heard := b.Heard()
	_, err := b.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('b', '', 0)`)
	require.NoError(t, err)
	require.NoError(t, b.Sync(ctx))
	assert.Equal(t, heard, b.Heard(), "a replica does not hear its own commits")
	_, ok = c.Get("k")
	assert.True(t, ok)

	// A's commit: B drops the cache once it heard it.
	_, err = a.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('a', '', 0)`)
	require.NoError(t, err)
	require.NoError(t, b.Sync(ctx))
	_, ok = c.Get("k")
	assert.False(t, ok, "dropped by another replica's commit")

	// B's listening session ends: B's cache answers nothing until B
	// listens again, and what it held before is gone then.
	c.Put(c.Generation(), "k", "v")
	_, ok = c.Get("k")
	require.True(t, ok)
	heard = b.Heard()
	var n int
	require.NoError(t, p.rawA.QueryRowContext(ctx,
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, pgdb.WatcherName(p.rawB)).Scan(&n))
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool { return b.Heard() > heard }, 10*time.Second, 5*time.Millisecond, "B listens again")
	assert.True(t, b.Fresh())
	_, ok = c.Get("k")
	assert.False(t, ok, "dropped on listening again")
}

// OpenWith's MaxConns bounds the pool; 0 keeps the default.
func TestOpenWith_MaxConnsBoundsThePool(t *testing.T) {
	url, schema := OpenShared(t, Migrations{Schema: "notes", SQLite: notes, Postgres: notes})
	for _, n := range []int{0, 3} {
		db, err := pgdb.OpenWith(context.Background(), url, schema, notes, pgdb.Options{MaxConns: n})
		require.NoError(t, err)
		want := n
		if n == 0 {
			want = pgdb.DefaultMaxConns
		}
		assert.Equal(t, want, db.Stats().MaxOpenConnections)
		require.NoError(t, db.Close())
	}
}

// BenchmarkCrossReplicaInvalidation measures the bound between a commit on
// one replica and the drop of a cache following the same schema on another:
// each iteration commits a write through pool A (one statement, as a
// revocation like a key delete is) and waits until B's watcher has dropped
// its cache. It reports the median and the 99th percentile of the time from
// the moment A's commit returned (after-commit) and from before A sent it
// (with-write, which includes the write's own round trip).
func BenchmarkCrossReplicaInvalidation(b *testing.B) {
	p := followingPair(b)
	a, rb, c := p.a, p.b, p.c
	dropped := make(chan time.Time, 1)
	rb.OnRemoteCommit(func() {
		select {
		case dropped <- time.Now():
		default:
		}
	})
	ctx := context.Background()
	// Drain the report of B's first listen.
	require.NoError(b, rb.Sync(ctx))
	select {
	case <-dropped:
	default:
	}
	_, err := a.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('k', '', 0)`)
	require.NoError(b, err)
	<-dropped
	after := make([]time.Duration, 0, b.N)
	with := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		c.Put(c.Generation(), "k", "v")
		start := time.Now()
		if _, err := a.ExecContext(ctx, `UPDATE notes SET n = ? WHERE id = 'k'`, i); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		at := <-dropped
		if _, ok := c.Get("k"); ok {
			b.Fatal("the cache was not dropped")
		}
		after = append(after, at.Sub(committed))
		with = append(with, at.Sub(start))
	}
	b.StopTimer()
	report := func(d []time.Duration, name string) {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds()), name+"-p50-us")
		b.ReportMetric(float64(d[min(len(d)-1, len(d)*99/100)].Microseconds()), name+"-p99-us")
	}
	report(after, "after-commit")
	report(with, "with-write")
}

// twoTables is a schema of two tables, one whose inserts are unannounced
// (pgdb.QuietInsertsComment).
var twoTables = fstest.MapFS{"00001_tables.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
CREATE TABLE issued (id TEXT PRIMARY KEY, revoked BOOLEAN NOT NULL DEFAULT FALSE);
COMMENT ON TABLE issued IS '` + pgdb.QuietInsertsComment + `: no cache holds an absence';
CREATE TABLE listed (id TEXT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0);
`)}}

// openPair opens two replicas' pools on one fresh schema of migrations, the
// second wrapped, and returns once it listens.
func openPair(t *testing.T, migrations fstest.MapFS) (a, b *sqldb.DB) {
	t.Helper()
	rawA, rawB := OpenSchemaTwice(t, Migrations{Schema: "follow", SQLite: migrations, Postgres: migrations})
	a, b = sqldb.New(rawA, sqldb.Options{}), sqldb.New(rawB, sqldb.Options{})
	require.Eventually(t, b.Fresh, 10*time.Second, 10*time.Millisecond, "B listens")
	require.NoError(t, b.Sync(context.Background()))
	return a, b
}

// An insert into a table whose inserts are unannounced is heard by no
// replica; its updates and deletes are, as every write to another table.
func TestOpen_ATableWithUnannouncedInsertsAnnouncesItsUpdatesAndDeletes(t *testing.T) {
	a, b := openPair(t, twoTables)
	ctx := context.Background()
	for _, c := range []struct {
		stmt  string
		heard bool
	}{
		{`INSERT INTO issued (id) VALUES ('x')`, false},
		{`INSERT INTO issued (id) VALUES ('y'), ('z')`, false},
		{`UPDATE issued SET revoked = TRUE WHERE id = 'x'`, true},
		{`UPDATE issued SET revoked = TRUE WHERE id = 'nobody'`, false},
		{`DELETE FROM issued WHERE id = 'y'`, true},
		{`INSERT INTO listed (id) VALUES ('x')`, true},
		{`UPDATE listed SET n = 1`, true},
		{`DELETE FROM listed`, true},
	} {
		t.Run(c.stmt, func(t *testing.T) {
			heard := b.Heard()
			_, err := a.ExecContext(ctx, c.stmt)
			require.NoError(t, err)
			require.NoError(t, b.Sync(ctx))
			if c.heard {
				assert.Equal(t, heard+1, b.Heard())
			} else {
				assert.Equal(t, heard, b.Heard())
			}
		})
	}
}

// A table a later migration gives unannounced inserts has its trigger
// changed on the next open (and back when the comment goes).
func TestOpen_ALaterMigrationMakesATablesInsertsUnannounced(t *testing.T) {
	first := fstest.MapFS{"00001_tables.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
CREATE TABLE issued (id TEXT PRIMARY KEY);
`)}}
	url, schema := OpenShared(t, Migrations{Schema: "follow", SQLite: first, Postgres: first})
	ctx := context.Background()
	events := func(migrations fstest.MapFS) string {
		raw, err := pgdb.Open(ctx, url, schema, migrations)
		require.NoError(t, err)
		defer raw.Close()
		var inserts, updates, deletes bool
		require.NoError(t, raw.QueryRowContext(ctx, `SELECT tgtype & 4 <> 0, tgtype & 16 <> 0, tgtype & 8 <> 0
			FROM pg_trigger WHERE tgname = 'apistack_notify' AND tgrelid = to_regclass($1)`, schema+".issued").Scan(&inserts, &updates, &deletes))
		return map[bool]string{true: "I", false: "-"}[inserts] + map[bool]string{true: "U", false: "-"}[updates] + map[bool]string{true: "D", false: "-"}[deletes]
	}
	assert.Equal(t, "IUD", events(first))
	second := fstest.MapFS{"00001_tables.sql": first["00001_tables.sql"], "00002_unannounced.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
COMMENT ON TABLE issued IS '` + pgdb.QuietInsertsComment + `';
`)}}
	assert.Equal(t, "-UD", events(second))
	third := fstest.MapFS{"00001_tables.sql": first["00001_tables.sql"], "00002_unannounced.sql": second["00002_unannounced.sql"],
		"00003_announced.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
COMMENT ON TABLE issued IS NULL;
`)}}
	assert.Equal(t, "IUD", events(third))
}

// A cache following some tables (FollowTables) is dropped by another
// replica's commit only when it changed one of them as the dependency
// says (an insert only where inserts matter), always when the replica
// listens again, and answers nothing while it is deaf.
func TestFollowTables_ACacheIsDroppedOnlyByChangesToWhatItReads(t *testing.T) {
	a, b := openPair(t, twoTables)
	ctx := context.Background()
	byKey := cache.New[string](10, time.Minute) // rows found by key: inserts do not matter
	list := cache.New[string](10, time.Minute)  // a list: inserts do
	b.FollowTables(byKey, sqldb.Dependency{Table: "listed"}, sqldb.Dependency{Table: "issued"})
	b.FollowTables(list, sqldb.Dependency{Table: "listed", Inserts: true})
	_, err := a.ExecContext(ctx, `INSERT INTO issued (id) VALUES ('k')`)
	require.NoError(t, err)
	for _, c := range []struct {
		stmt          string
		byKey, listed bool // dropped
	}{
		{`INSERT INTO listed (id) VALUES ('a')`, false, true},
		{`UPDATE listed SET n = n + 1 WHERE id = 'a'`, true, true},
		{`UPDATE issued SET revoked = TRUE WHERE id = 'k'`, true, false},
		{`DELETE FROM issued WHERE id = 'k'`, true, false},
		{`DELETE FROM listed WHERE id = 'a'`, true, true},
	} {
		t.Run(c.stmt, func(t *testing.T) {
			byKey.Put(byKey.Generation(), "k", "v")
			list.Put(list.Generation(), "k", "v")
			_, err := a.ExecContext(ctx, c.stmt)
			require.NoError(t, err)
			require.NoError(t, b.Sync(ctx))
			_, kept := byKey.Get("k")
			assert.Equal(t, !c.byKey, kept, "the cache of rows by key")
			_, kept = list.Get("k")
			assert.Equal(t, !c.listed, kept, "the list")
		})
	}

	// B's listening session ends: every cache is dropped once B listens
	// again, whatever it follows.
	byKey.Put(byKey.Generation(), "k", "v")
	list.Put(list.Generation(), "k", "v")
	heard := b.Heard()
	var n int
	require.NoError(t, a.QueryRowContext(ctx,
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?`, pgdb.WatcherName(b.SQL())).Scan(&n))
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool { return b.Heard() > heard }, 10*time.Second, 5*time.Millisecond, "B listens again")
	_, ok := byKey.Get("k")
	assert.False(t, ok)
	_, ok = list.Get("k")
	assert.False(t, ok)
}

// A table whose comment starts with pgdb.QuietComment notifies no replica:
// it gets no trigger, and a table a later migration makes quiet loses the
// one it had when a replica next opens the schema.
func TestOpen_AQuietTableNotifiesNoReplica(t *testing.T) {
	first := fstest.MapFS{"00001_tables.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
CREATE TABLE loud (id TEXT PRIMARY KEY);
CREATE TABLE hushed (id TEXT PRIMARY KEY);
COMMENT ON TABLE hushed IS '` + pgdb.QuietComment + `: no cache reads it';
`)}}
	m := Migrations{Schema: "quiet", SQLite: first, Postgres: first}
	url, schema := OpenShared(t, m)
	ctx := context.Background()
	open := func(migrations fstest.MapFS) *sqldb.DB {
		raw, err := pgdb.Open(ctx, url, schema, migrations)
		require.NoError(t, err)
		db := sqldb.New(raw, sqldb.Options{})
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	a, b := open(first), open(first)
	require.Eventually(t, b.Fresh, 10*time.Second, 10*time.Millisecond, "B listens")
	require.NoError(t, b.Sync(ctx))
	notifying := func() []string {
		rows, err := a.QueryContext(ctx, `SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			WHERE t.tgname = 'apistack_notify' AND c.relnamespace = to_regnamespace(?) ORDER BY c.relname`, schema)
		require.NoError(t, err)
		return Strings(t, rows)
	}
	assert.Equal(t, []string{"loud"}, notifying())

	heard := b.Heard()
	_, err := a.ExecContext(ctx, `INSERT INTO hushed (id) VALUES ('x')`)
	require.NoError(t, err)
	require.NoError(t, b.Sync(ctx))
	assert.Equal(t, heard, b.Heard(), "a write to a quiet table is not heard")
	_, err = a.ExecContext(ctx, `INSERT INTO loud (id) VALUES ('x')`)
	require.NoError(t, err)
	require.NoError(t, b.Sync(ctx))
	assert.Equal(t, heard+1, b.Heard(), "a write to another table is")

	// A later migration makes loud quiet too: the next open takes its
	// trigger off.
	second := fstest.MapFS{"00001_tables.sql": first["00001_tables.sql"], "00002_quiet.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
COMMENT ON TABLE loud IS '` + pgdb.QuietComment + `';
`)}}
	open(second)
	assert.Empty(t, notifying())
}
