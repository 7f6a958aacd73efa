package pgdb

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A notification's payload names the pool, the table and the change; one
// naming the pool alone (an older replica's) stands for any change.
func TestParseChange(t *testing.T) {
	for _, c := range []struct {
		payload, pool string
		want          Change
		any           bool
	}{
		{"POOLA tokens UPDATE", "POOLA", Change{Table: "tokens", Op: "UPDATE"}, false},
		{"POOLA team_groups INSERT", "POOLA", Change{Table: "team_groups", Op: "INSERT"}, false},
		{"POOLA", "POOLA", Change{}, true},
		{"", "", Change{}, true},
		{"POOLA tokens", "POOLA", Change{}, true},
		{"POOLA  DELETE", "POOLA", Change{}, true},
	} {
		t.Run(c.payload, func(t *testing.T) {
			pool, got := parseChange(c.payload)
			assert.Equal(t, c.pool, pool)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.any, got.Any())
		})
	}
}
