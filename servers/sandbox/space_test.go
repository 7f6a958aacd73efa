package sandbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/testdb"
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
		body, err := json.Marshal(map[string]string{"to": "+13125550800", "media_url": "https://example.com/" + base64.RawURLEncoding.EncodeToString(random)})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, b.Credentials.Fax.BaseUrl+"/v2/faxes", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+b.Credentials.Fax.ApiKey)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
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
