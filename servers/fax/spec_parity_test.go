package fax_test

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/specs"
)

// loadSpec loads one of the embedded fax specs.
func loadSpec(t *testing.T, name string) *openapi3.T {
	t.Helper()
	data, err := fs.ReadFile(specs.FS, "fax/"+name)
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(data)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()), name)
	return doc
}

// testNumberRow is a row of the test-number table: | +13125550801 | text |.
var testNumberRow = regexp.MustCompile(`(?m)^\s*\|\s*(\+13125550\d{3})\s*\|\s*([^|]+?)\s*\|\s*$`)

func TestOutcomeNumbers_MatchTheTableOfTheSpec(t *testing.T) {
	doc := loadSpec(t, "openapi.yaml")
	documented := map[string]string{}
	for _, m := range testNumberRow.FindAllStringSubmatch(doc.Info.Description, -1) {
		documented[m[1]] = m[2]
	}
	require.NotEmpty(t, documented, "the spec's description has the test-number table")

	implemented := map[string]string{}
	for _, n := range fax.OutcomeNumbers() {
		want := n.Outcome
		switch {
		case n.FailsWhile != "":
			want = fmt.Sprintf("failed, %s (while %s)", n.Outcome, n.FailsWhile)
		case n.Outcome == "slow":
			want = "delivered slowly"
		}
		implemented[n.To] = want
	}
	assert.ElementsMatch(t, keys(implemented), keys(documented), "the same numbers in Go and in the spec")
	for to, want := range implemented {
		assert.True(t, strings.HasPrefix(documented[to], want), "%s: the spec says %q, the simulator does %q", to, documented[to], want)
	}
}

func TestWebhooksSpec_EnumsMatchTheFaxAPI(t *testing.T) {
	api, hooks := loadSpec(t, "openapi.yaml"), loadSpec(t, "webhooks.yaml")
	shared := 0
	for name, ref := range hooks.Components.Schemas {
		apiRef, ok := api.Components.Schemas[name]
		if !ok || len(ref.Value.Enum) == 0 {
			continue
		}
		shared++
		assert.Equal(t, apiRef.Value.Enum, ref.Value.Enum, "enum of %s", name)
	}
	assert.GreaterOrEqual(t, shared, 3, "FaxDirection, FaxStatus and FaxFailureReason are duplicated")

	// The event payloads narrow status, direction and failure_reason to
	// values the fax API knows.
	known := map[string][]any{
		"status":         api.Components.Schemas["FaxStatus"].Value.Enum,
		"direction":      api.Components.Schemas["FaxDirection"].Value.Enum,
		"failure_reason": api.Components.Schemas["FaxFailureReason"].Value.Enum,
	}
	for name, ref := range hooks.Components.Schemas {
		for _, s := range append([]*openapi3.SchemaRef{ref}, ref.Value.AllOf...) {
			for prop, p := range s.Value.Properties {
				allowed, ok := known[prop]
				if !ok {
					continue
				}
				for _, v := range p.Value.Enum {
					assert.True(t, slices.Contains(allowed, v), "%s.%s: %v is not a value of the fax API", name, prop, v)
				}
			}
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
