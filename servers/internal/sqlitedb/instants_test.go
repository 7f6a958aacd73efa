package sqlitedb

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStoredMicros(t *testing.T) {
	at := time.Date(2026, 11, 26, 0, 3, 23, 689872000, time.UTC)
	cases := []struct {
		name string
		in   any
		want any
	}{
		{"time.Time's text, as the driver wrote it", "2026-11-26 00:03:23.689872 +0000 UTC", at.UnixMicro()},
		{"with a monotonic reading", "2026-11-26 00:03:23.689872 +0000 UTC m=+0.012", at.UnixMicro()},
		{"another offset", "2026-11-26 01:03:23.689872 +0100 CET", at.UnixMicro()},
		{"a whole second", "2026-11-26 00:03:23 +0000 UTC", at.Truncate(time.Second).UnixMicro()},
		{"RFC 3339", "2026-11-26T00:03:23.689872Z", at.UnixMicro()},
		{"SQLite's own text", "2026-11-26 00:03:23.689", at.Truncate(time.Millisecond).UnixMicro()},
		{"bytes", []byte("2026-11-26 00:03:23.689872 +0000 UTC"), at.UnixMicro()},
		{"already microseconds", at.UnixMicro(), at.UnixMicro()},
		{"NULL", nil, nil},
	}
	for _, tc := range cases {
		got, err := storedMicros(tc.in)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, err := storedMicros("yesterday")
	assert.ErrorContains(t, err, `"yesterday" is not an instant`)
	_, err = storedMicros(1.5)
	assert.ErrorContains(t, err, "a float64 is not an instant")
}

func TestMicrosFunction_InAMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := Open(ctx, path, fstest.MapFS{"00001_init.sql": {Data: []byte("-- +goose Up\nCREATE TABLE t (at TIMESTAMP NULL);\n-- +goose Down\n")}})
	require.NoError(t, err)
	defer db.Close()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	_, err = db.Exec(`INSERT INTO t (at) VALUES (?), (NULL)`, at)
	require.NoError(t, err)
	var us int64
	var null *int64
	require.NoError(t, db.QueryRow(`SELECT apistack_micros(at) FROM t WHERE at IS NOT NULL`).Scan(&us))
	require.NoError(t, db.QueryRow(`SELECT apistack_micros(at) FROM t WHERE at IS NULL`).Scan(&null))
	assert.Equal(t, at.UnixMicro(), us)
	assert.Nil(t, null)
}
