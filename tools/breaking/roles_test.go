package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withRoles is the base fixture with GetWidget's and DeleteWidget's roles
// declared.
func withRoles(t *testing.T, getRoles, deleteRoles string) string {
	t.Helper()
	return variant(t, readFixture(t, "base.yaml"),
		edit{"      operationId: GetWidget\n", "      operationId: GetWidget\n      x-apistack-roles: " + getRoles + "\n"},
		edit{"      operationId: DeleteWidget\n", "      operationId: DeleteWidget\n      x-apistack-roles: " + deleteRoles + "\n"})
}

// TestJudge_RoleChanges: oasdiff ignores extensions, so a change of an
// operation's x-apistack-roles is found on its own: a role removed breaks
// the callers with it (403 where they had an answer) and needs a new major
// version; a role added breaks nobody and asks for a minor one.
func TestJudge_RoleChanges(t *testing.T) {
	const path = "specs/w/openapi.yaml"
	tests := []struct {
		name string
		// baseGet is GetWidget's roles at the base ("[admin, reader]" when
		// empty); DeleteWidget's are [admin] there.
		baseGet  string
		get, del string
		rule     string
		breaking bool
		text     string
		op       string
	}{
		{"a role removed", "", "[admin]", "[admin]", RoleRemovedRule, true,
			"role `reader` removed from x-apistack-roles: its callers are now answered 403", "GET /widgets/{id} (GetWidget)"},
		{"a role added", "", "[admin, reader]", "[admin, reader]", RoleAddedRule, false,
			"role `reader` added to x-apistack-roles", "DELETE /widgets/{id} (DeleteWidget)"},
		{"narrowed from every caller", "[authenticated]", "[admin, reader]", "[admin]", RoleRemovedRule, true,
			"x-apistack-roles narrowed from `authenticated` to [`admin`, `reader`]: callers with any other role are now answered 403",
			"GET /widgets/{id} (GetWidget)"},
		{"widened to every caller", "", "[authenticated]", "[admin]", RoleAddedRule, false,
			"x-apistack-roles widened from [`admin`, `reader`] to `authenticated`", "GET /widgets/{id} (GetWidget)"},
		{"reordered", "", "[reader, admin]", "[admin]", "", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.baseGet == "" {
				tt.baseGet = "[admin, reader]"
			}
			from := loadSpec(t, path, withRoles(t, tt.baseGet, "[admin]"))
			rev := withRoles(t, tt.get, tt.del)
			v, err := Judge(path, from, loadSpec(t, path, rev))
			require.NoError(t, err)
			all, err := Compare(from, loadSpec(t, path, rev), 0)
			require.NoError(t, err)
			if tt.rule == "" {
				assert.Empty(t, all, "an unchanged set of roles is no change")
				assert.Empty(t, v.Bump)
				return
			}
			require.Equal(t, []string{tt.rule}, rules(all), "the one change is the roles'")
			c := all[0]
			assert.Equal(t, tt.op, c.Operation)
			assert.Contains(t, c.Text, tt.text)
			assert.Equal(t, tt.breaking, c.Breaking())
			assert.Equal(t, tt.breaking, v.Failed, "%v", v.Changes)
			if tt.breaking {
				assert.Equal(t, "2.0.0", v.Bump)
				assert.Contains(t, c.String(), "breaking "+tt.op)
				major, err := Judge(path, from, loadSpec(t, path, variant(t, rev, majorBump)))
				require.NoError(t, err)
				assert.False(t, major.Failed, "a new major version allows it")
			} else {
				assert.Equal(t, "1.5.0", v.Bump, "an addition asks for a minor version")
				minor, err := Judge(path, from, loadSpec(t, path, variant(t, rev, minorBump)))
				require.NoError(t, err)
				assert.Empty(t, minor.Bump, "a minor version is enough")
			}
		})
	}
}

// TestJudge_RolesNotAListFails: a malformed x-apistack-roles is an error
// named by operation, not a silently skipped one.
func TestJudge_RolesNotAListFails(t *testing.T) {
	const path = "specs/w/openapi.yaml"
	b := loadSpec(t, path, withRoles(t, "[admin]", "[admin]"))
	r := loadSpec(t, path, withRoles(t, "admin", "[admin]"))
	_, err := Judge(path, b, r)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "x-apistack-roles of GetWidget"), err.Error())
}
