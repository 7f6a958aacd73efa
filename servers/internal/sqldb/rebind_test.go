package sqldb

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRebind(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{`SELECT '?' || ? FROM "we?ird" WHERE x = ?`, `SELECT '?' || $1 FROM "we?ird" WHERE x = $2`},
		{"SELECT ? -- a comment?\n, ?", "SELECT $1 -- a comment?\n, $2"},
		{`SELECT 'it''s?', ?`, `SELECT 'it''s?', $1`},
		{`SELECT a - ? FROM t`, `SELECT a - $1 FROM t`},
		{`SELECT 'unterminated ?`, `SELECT 'unterminated ?`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, rebind(tt.in), tt.in)
	}
}
