package sqldb_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqldb"
)

func TestInstants(t *testing.T) {
	at := time.Date(2026, 11, 26, 1, 2, 3, 456789123, time.FixedZone("X", 3600))
	us := sqldb.Micros(at)
	assert.Equal(t, at.UnixMicro(), us)
	back := sqldb.Time(us)
	assert.Equal(t, time.UTC, back.Location())
	assert.True(t, at.Truncate(time.Microsecond).Equal(back), "kept to the microsecond")

	assert.Nil(t, sqldb.NullMicros(nil))
	assert.Equal(t, us, sqldb.NullMicros(&at))
	assert.Nil(t, sqldb.NullTime(sql.NullInt64{}))
	assert.Equal(t, back, *sqldb.NullTime(sql.NullInt64{Int64: us, Valid: true}))

	var got time.Time
	require.NoError(t, sqldb.TimeInto(&got).Scan(us))
	assert.Equal(t, back, got)
	assert.ErrorContains(t, sqldb.TimeInto(&got).Scan("2026-11-26"), "not as string")
}
