package sandbox_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/internal/testkit"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
)

// fillJournal sends n fax requests of about 15 KiB of random (so
// incompressible) text with b's credentials: each is journaled, body and
// all.
func fillJournal(t *testing.T, b *box, n int) {
	t.Helper()
	random := make([]byte, 11<<10)
	for range n {
		_, _ = rand.Read(random)
		testkit.Request{Method: http.MethodPost, URL: b.Credentials.Fax.BaseUrl + "/v2/faxes", Token: b.Credentials.Fax.ApiKey}.
			JSON(map[string]string{"to": "+13125550800", "media_url": "https://example.com/" + base64.RawURLEncoding.EncodeToString(random)}).Do(t)
	}
}

// fileSize is the size of db's SQLite file and its write-ahead log.
func fileSize(t *testing.T, e *env) int64 {
	t.Helper()
	var seq int
	var name, path string
	require.NoError(t, e.st.DB(stack.Sandbox).QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &path))
	var total int64
	for _, p := range []string{path, path + "-wal"} {
		if info, err := os.Stat(p); err == nil {
			total += info.Size()
		}
	}
	return total
}

func TestSandboxes_DeletingASandboxGivesItsSpaceBack(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	keep := e.create(t, frozenClock)
	gone := e.create(t, frozenClock)
	fillJournal(t, keep, 10)
	fillJournal(t, gone, 300)
	e.st.Sandboxes.Journal().Flush(ctx)
	require.Len(t, journal(t, gone, nil), 100, "the journal holds the requests (one page)")

	if testdb.Current() == testdb.Postgres {
		before := e.tableCounts(t)["sandbox.journal_batches"]
		del, err := e.admin.DeleteSandboxWithResponse(ctx, gone.Id)
		require.NoError(t, err)
		require.Less(t, del.StatusCode(), 300, string(del.Body))
		after := e.tableCounts(t)["sandbox.journal_batches"]
		assert.Less(t, after, before, "the deleted sandbox's journal rows are removed")
		return
	}

	// SQLite: the file shrinks by the deleted journal.
	_, err := e.st.DB(stack.Sandbox).Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	require.NoError(t, err)
	full := fileSize(t, e)
	require.Greater(t, full, int64(3<<20), "300 requests of 15 KiB of random text fill megabytes")
	del, err := e.admin.DeleteSandboxWithResponse(ctx, gone.Id)
	require.NoError(t, err)
	require.Less(t, del.StatusCode(), 300, string(del.Body))
	after := fileSize(t, e)
	t.Logf("sandbox.db: %d bytes with the journal, %d after the delete", full, after)
	assert.Less(t, after, full/3, "the deleted journal's space went back to the file system")
	assert.Len(t, journal(t, keep, nil), 10, "the other sandbox's journal is whole")
}

func TestSandboxes_AJournalKeepsItsBudgetDroppingTheOldestFirst(t *testing.T) {
	ctx := context.Background()
	t.Run("entries", func(t *testing.T) {
		e := start(t, envOptions{journal: sandbox.JournalBudget{Entries: 20}})
		b := e.create(t, frozenClock)
		for range 30 {
			// One commit of the journal writer per request: each is a row.
			fillJournal(t, b, 1)
			e.st.Sandboxes.Journal().Flush(ctx)
		}
		resp, err := b.api.ListSandboxRequestsWithResponse(ctx, b.Id, &sandboxapi.ListSandboxRequestsParams{Limit: ptr(1000)})
		page := testkit.Answered(t, http.StatusOK, resp, err).JSON200
		require.Len(t, page.Data, 20, "the newest 20 are kept")
		require.NotNil(t, page.Dropped)
		assert.Equal(t, int64(10), *page.Dropped, "the oldest 10 were dropped")
		require.NotNil(t, page.Budget)
		assert.Equal(t, 20, page.Budget.Entries)
		assert.Equal(t, int64(11), page.Data[0].Seq/1024, "the oldest kept is the 11th row")

		// A reset empties the journal and the count.
		reset, err := b.api.ResetSandboxWithResponse(ctx, b.Id)
		require.NoError(t, err)
		require.Less(t, reset.StatusCode(), 300, string(reset.Body))
		resp, err = b.api.ListSandboxRequestsWithResponse(ctx, b.Id, nil)
		page = testkit.Answered(t, http.StatusOK, resp, err).JSON200
		assert.Equal(t, int64(0), *page.Dropped)
	})
	t.Run("bytes", func(t *testing.T) {
		e := start(t, envOptions{journal: sandbox.JournalBudget{Bytes: 200 << 10}})
		b := e.create(t, frozenClock)
		other := e.create(t, frozenClock)
		for range 40 {
			fillJournal(t, b, 1)
			e.st.Sandboxes.Journal().Flush(ctx)
		}
		fillJournal(t, other, 3)
		e.st.Sandboxes.Journal().Flush(ctx)
		var stored int64
		require.NoError(t, e.st.DB(stack.Sandbox).QueryRow(`SELECT COALESCE(SUM(LENGTH(data)), 0) FROM journal_batches WHERE sandbox_id = `+
			placeholder(), b.Id).Scan(&stored))
		assert.LessOrEqual(t, stored, int64(200<<10), "the journal keeps within its bytes")
		resp, err := b.api.ListSandboxRequestsWithResponse(ctx, b.Id, &sandboxapi.ListSandboxRequestsParams{Limit: ptr(1000)})
		page := testkit.Answered(t, http.StatusOK, resp, err).JSON200
		assert.Positive(t, *page.Dropped)
		assert.Equal(t, int64(40), *page.Dropped+int64(len(page.Data)), "kept and dropped are every request")
		assert.Len(t, journal(t, other, nil), 3, "another sandbox's journal is its own")
	})
	t.Run("many sandboxes a commit", func(t *testing.T) {
		// The writer commits the rows of every sandbox that sent
		// something together, and keeps each sandbox's journal within the
		// budget on its own.
		e := start(t, envOptions{journal: sandbox.JournalBudget{Entries: 4}})
		boxes := make([]*box, 5)
		for i := range boxes {
			boxes[i] = e.create(t, frozenClock)
		}
		for range 7 {
			for _, b := range boxes {
				fillJournal(t, b, 1)
			}
			e.st.Sandboxes.Journal().Flush(ctx)
		}
		fillJournal(t, boxes[0], 2)
		e.st.Sandboxes.Journal().Flush(ctx)
		for i, b := range boxes {
			resp, err := b.api.ListSandboxRequestsWithResponse(ctx, b.Id, &sandboxapi.ListSandboxRequestsParams{Limit: ptr(1000)})
			page := testkit.Answered(t, http.StatusOK, resp, err).JSON200
			sent := int64(7)
			if i == 0 {
				sent = 9
			}
			assert.Len(t, page.Data, 4, "sandbox %d keeps its newest 4", i)
			require.NotNil(t, page.Dropped)
			assert.Equal(t, sent-4, *page.Dropped, "sandbox %d: the oldest were dropped", i)
		}
	})
	t.Run("lowered", func(t *testing.T) {
		// A journal far past a budget (here: one a replica without a budget
		// filled) is back within it after the next commit of a writer that
		// keeps the budget, however many rows that drops.
		openDB := reopenable(stacktest.OpenDB(t))
		if testdb.Current() == testdb.Postgres {
			openDB = sharedOpenDB(t)
		}
		shared := &replicaOf{openDB: openDB, adminToken: "admin-token", creatorToken: "creator-token", masterKey: fixedKey}
		unbounded := start(t, envOptions{replica: shared})
		b := unbounded.create(t, frozenClock)
		for range 150 {
			fillJournal(t, b, 1)
			unbounded.st.Sandboxes.Journal().Flush(ctx)
		}
		bounded := start(t, envOptions{replica: shared, journal: sandbox.JournalBudget{Entries: 10}})
		through := *b.CreatedSandbox // its fax requests, through the bounded replica
		through.Credentials.Fax.BaseUrl = bounded.urls[stack.Fax]
		fillJournal(t, &box{CreatedSandbox: &through}, 1)
		bounded.st.Sandboxes.Journal().Flush(ctx)
		resp, err := b.api.ListSandboxRequestsWithResponse(ctx, b.Id, &sandboxapi.ListSandboxRequestsParams{Limit: ptr(1000)})
		page := testkit.Answered(t, http.StatusOK, resp, err).JSON200
		assert.Equal(t, 10, len(page.Data), "the newest 10 are kept")
		assert.Equal(t, int64(141), *page.Dropped)
		var entries, bytes, rowEntries, rowBytes int64
		require.NoError(t, bounded.st.DB(stack.Sandbox).QueryRow(`SELECT journal_entries, journal_bytes,
			(SELECT SUM(entries) FROM journal_batches WHERE sandbox_id = sandboxes.id),
			(SELECT SUM(LENGTH(data)) FROM journal_batches WHERE sandbox_id = sandboxes.id) FROM sandboxes WHERE id = `+placeholder(), b.Id).
			Scan(&entries, &bytes, &rowEntries, &rowBytes))
		assert.Equal(t, [2]int64{rowEntries, rowBytes}, [2]int64{entries, bytes}, "the totals are what the rows hold")
	})
}

// reopenable opens each database once with open and hands it to every
// stack that opens it again: on SQLite, stacks in one process sharing
// their databases.
func reopenable(open stack.OpenDBFunc) stack.OpenDBFunc {
	var mu sync.Mutex
	dbs := map[string]*sql.DB{}
	return func(ctx context.Context, m stack.Migrations) (*sql.DB, error) {
		mu.Lock()
		defer mu.Unlock()
		if db, ok := dbs[m.Schema]; ok {
			return db, nil
		}
		db, err := open(ctx, m)
		if err == nil {
			dbs[m.Schema] = db
		}
		return db, err
	}
}

// placeholder is the first query parameter in the run's dialect.
func placeholder() string {
	if testdb.Current() == testdb.Postgres {
		return "$1"
	}
	return "?"
}
