package rights_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/gen/pamserver"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/internal/docblocks"
	"github.com/apistack/apistack/servers/internal/rights"
)

// guide is the rights guide, relative to the repository's root.
const guide = "docs/rights.md"

// rightsTable renders the rights of a spec as the guide shows them: the
// role table (each role and what it is for), then each operation, by name,
// with the roles that may call it.
func rightsTable(t *testing.T, doc *openapi3.T) string {
	t.Helper()
	table, err := rights.FromSpec(doc)
	require.NoError(t, err)
	described := map[string]string{}
	for _, ref := range doc.Components.SecuritySchemes {
		roles, _ := ref.Value.Extensions[rights.Extension].(map[string]any)
		for r, d := range roles {
			described[r] = strings.TrimSpace(d.(string))
		}
	}
	var b strings.Builder
	b.WriteString("| role | what it is |\n|---|---|\n")
	for _, r := range table.Roles() {
		b.WriteString("| `" + r + "` | " + described[r] + " |\n")
	}
	b.WriteString("\n| operation | who may call it |\n|---|---|\n")
	for _, op := range table.Operations() {
		rule, _ := table.Rule(op)
		var who string
		switch {
		case rule.Open:
			who = "anyone (no credentials)"
		case len(rule.Names) == 1 && rule.Names[0] == rights.Authenticated:
			who = "any authenticated caller (`" + rights.Authenticated + "`)"
		default:
			who = "`" + strings.Join(rule.Names, "`, `") + "`"
		}
		b.WriteString("| `" + op + "` | " + who + " |\n")
	}
	return b.String()
}

// The guide's tables are the specs' rights, as the specs say them today.
func TestGuide_TablesAreTheSpecs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docblocks.Root(t), guide))
	require.NoError(t, err)
	text := string(data)
	for _, api := range []struct {
		name string
		spec func() (*openapi3.T, error)
	}{{"pam", pamserver.GetSpec}, {"sandbox", sandboxserver.GetSpec}, {"admin", adminserver.GetSpec}} {
		t.Run(api.name, func(t *testing.T) {
			doc, err := api.spec()
			require.NoError(t, err)
			want := rightsTable(t, doc)
			_, rest, ok := strings.Cut(text, "<!-- rights:"+api.name+" -->\n")
			require.True(t, ok, "%s has no <!-- rights:%s --> table", guide, api.name)
			got, _, ok := strings.Cut(rest, "<!-- /rights:"+api.name+" -->")
			require.True(t, ok, "%s: the table of %s is not closed", guide, api.name)
			if !assert.Equal(t, want, got, "%s: the table of %s is not the spec's; write it as here (APISTACK_WRITE_GUIDE=1 writes it)", guide, api.name) && os.Getenv("APISTACK_WRITE_GUIDE") == "1" {
				text = strings.Replace(text, "<!-- rights:"+api.name+" -->\n"+got, "<!-- rights:"+api.name+" -->\n"+want, 1)
				require.NoError(t, os.WriteFile(filepath.Join(docblocks.Root(t), guide), []byte(text), 0o644))
			}
		})
	}
}

// The guide's command lists each PAM operation with its roles, from the
// spec itself.
func TestGuide_CommandShowsTheRolesOfTheSpec(t *testing.T) {
	// The file is named literally, not as guide: the guides' lint
	// (internal/docblocks) finds the blocks a test runs by their names.
	out := docblocks.Run(t, "docs/rights.md", "rights-grep", docblocks.Root(t))
	assert.Contains(t, out, "operationId: CreateGroup\n      x-apistack-roles: [pam_admin]")
	assert.Contains(t, out, "operationId: GetCurrentUser\n      x-apistack-roles: [authenticated]")
	assert.NotContains(t, out, "IssueServiceToken", "the token exchange needs no credentials, so it lists no roles")
}
