package contractcoverage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unreachableFile is the committed list of pairs no test can produce.
const unreachableFile = "../../testdata/contract/unreachable.yaml"

// untestedFile lists the reachable pairs no test produces yet.
const untestedFile = "../../testdata/contract/untested.yaml"

func TestDeclared_EveryAPIHasPairs(t *testing.T) {
	for api := range APIs {
		pairs, err := Declared(api)
		require.NoError(t, err, api)
		assert.NotEmpty(t, pairs, api)
		for _, p := range pairs {
			assert.NotEmpty(t, p.OperationID, "%s: every operation has an operationId", p)
		}
	}
}

func TestReadUnreachable_TheCommittedListsAreValid(t *testing.T) {
	unreachable, err := ReadUnreachable(unreachableFile)
	require.NoError(t, err)
	untested, err := ReadUnreachable(untestedFile)
	require.NoError(t, err)
	for p := range untested {
		_, both := unreachable[p]
		assert.False(t, both, "%s is listed both unreachable and untested", p)
	}
	unreachableFields, err := ReadUnreachableFields(unreachableFile)
	require.NoError(t, err)
	untestedFields, err := ReadUnreachableFields(untestedFile)
	require.NoError(t, err)
	entries, matched := untestedFields.Entries()
	for i, u := range entries {
		for _, f := range matched[i] {
			_, both := unreachableFields.Excuse(f)
			assert.False(t, both, "%s (entry %s %s %d %s) is listed both unreachable and untested", f, u.API, u.OperationID, u.Status, u.Pointer)
		}
	}
}

func TestReadUnreachable_RefusesBadEntries(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"no reason", "- {api: pam, operationId: ListGroups, status: 200}", "has no reason"},
		{"undeclared", "- {api: pam, operationId: ListGroups, status: 299, reason: r}", "not declared"},
		{"twice", "- {api: pam, operationId: ListGroups, status: 200, reason: r}\n- {api: pam, operationId: ListGroups, status: 200, reason: r}", "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "u.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.doc), 0o600))
			_, err := ReadUnreachable(path)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}
