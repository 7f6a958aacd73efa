package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// edit replaces old, which must occur exactly once, with new.
type edit struct{ old, new string }

// variant is the base fixture with edits applied.
func variant(t *testing.T, base string, edits ...edit) string {
	t.Helper()
	for _, e := range edits {
		require.Equal(t, 1, strings.Count(base, e.old), "fixture edit anchor %q", e.old)
		base = strings.Replace(base, e.old, e.new, 1)
	}
	return base
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "evolution", name))
	require.NoError(t, err)
	return string(data)
}

func loadSpec(t *testing.T, path, text string) *Spec {
	t.Helper()
	s, err := LoadSpec(path, []byte(text))
	require.NoError(t, err)
	return s
}

func rules(changes []Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Rule)
	}
	return out
}

var (
	removeDelete = edit{`    delete:
      operationId: DeleteWidget
      responses:
        '204': {description: deleted}
`, ""}
	removeResponseSize = edit{`      required: [id, name, size]
      properties:
        id: {type: string}
        name: {type: string}
        size: {type: integer}
`, `      required: [id, name]
      properties:
        id: {type: string}
        name: {type: string}
`}
	removeResponseColour = edit{`        size: {type: integer}
        colour: {type: string, enum: [red, green, blue]}
    WidgetInput:`, `        size: {type: integer}
    WidgetInput:`}
	addRequiredWeight = edit{`      required: [name]
      properties:
        name: {type: string}
`, `      required: [name, weight]
      properties:
        name: {type: string}
        weight: {type: number}
`}
	narrowInputColour = edit{`        size: {type: integer}
        colour: {type: string, enum: [red, green, blue]}
EOF`, `        size: {type: integer}
        colour: {type: string, enum: [red, green]}
EOF`}
	responseSizeString = edit{`        name: {type: string}
        size: {type: integer}
        colour: {type: string, enum: [red, green, blue]}
    WidgetInput:`, `        name: {type: string}
        size: {type: string}
        colour: {type: string, enum: [red, green, blue]}
    WidgetInput:`}
	requestSizeString = edit{`        size: {type: integer}
        colour: {type: string, enum: [red, green, blue]}
EOF`, `        size: {type: string}
        colour: {type: string, enum: [red, green, blue]}
EOF`}
	countRequired = edit{`          required: false
          schema: {type: integer, minimum: 1, maximum: 100}`, `          required: true
          schema: {type: integer, minimum: 1, maximum: 100}`}
	minorBump = edit{"version: 1.4.0", "version: 1.5.0"}
	majorBump = edit{"version: 1.4.0", "version: 2.0.0"}
)

// TestJudge_EachBreakingRule proves each rule the repository relies on is
// caught on its own, named by operation and rule id, and fails unless the
// major version is new.
func TestJudge_EachBreakingRule(t *testing.T) {
	// The EOF marker anchors edits at the end of the document.
	base := readFixture(t, "base.yaml") + "EOF"
	tests := []struct {
		name      string
		edit      edit
		rule      string
		operation string
	}{
		{"removed operation", removeDelete, "api-removed-without-deprecation", "DELETE /widgets/{id} (DeleteWidget)"},
		{"removed required response property", removeResponseSize, "response-required-property-removed", "GET /widgets/{id} (GetWidget)"},
		{"removed optional response property", removeResponseColour, "response-optional-property-removed", "GET /widgets/{id} (GetWidget)"},
		{"added required request property", addRequiredWeight, "new-required-request-property", "POST /widgets (CreateWidget)"},
		{"narrowed request enum", narrowInputColour, "request-property-enum-value-removed", "POST /widgets (CreateWidget)"},
		{"changed response type", responseSizeString, "response-property-type-changed", "GET /widgets/{id} (GetWidget)"},
		{"changed request type", requestSizeString, "request-property-type-changed", "POST /widgets (CreateWidget)"},
		{"optional parameter became required", countRequired, "request-parameter-became-required", "GET /widgets (ListWidgets)"},
	}
	b := loadSpec(t, "specs/w/openapi.yaml", strings.TrimSuffix(base, "EOF"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, bump := range []struct {
				name   string
				edits  []edit
				failed bool
			}{
				{"same version", nil, true},
				{"minor version", []edit{minorBump}, true},
				{"major version", []edit{majorBump}, false},
			} {
				text := strings.TrimSuffix(variant(t, base, append([]edit{tt.edit}, bump.edits...)...), "EOF")
				v, err := Judge("specs/w/openapi.yaml", b, loadSpec(t, "specs/w/openapi.yaml", text))
				require.NoError(t, err)
				assert.Equal(t, bump.failed, v.Failed, "%s with %s: %v", tt.name, bump.name, v.Changes)
				var found *Change
				for i, c := range v.Changes {
					if c.Rule == tt.rule {
						found = &v.Changes[i]
					}
				}
				require.NotNil(t, found, "%s: rule %s not reported; got %v", tt.name, tt.rule, rules(v.Changes))
				assert.True(t, found.Breaking(), "%s is breaking", tt.rule)
				assert.Equal(t, tt.operation, found.Operation)
				assert.Contains(t, found.String(), "breaking "+tt.operation)
				assert.Contains(t, found.String(), "["+tt.rule+"]")
			}
		})
	}
}

// TestJudge_AdditionsPass: an added operation, optional request property,
// response property, response header and widened request enum break no
// consumer, whatever the version.
func TestJudge_AdditionsPass(t *testing.T) {
	base := readFixture(t, "base.yaml")
	b := loadSpec(t, "specs/w/openapi.yaml", base)
	r := loadSpec(t, "specs/w/openapi.yaml", readFixture(t, "additions.yaml"))
	require.Equal(t, b.Version(), r.Version(), "the additions keep the version: they need no bump")
	v, err := Judge("specs/w/openapi.yaml", b, r)
	require.NoError(t, err)
	assert.False(t, v.Failed, "%v", v.Changes)
	for _, c := range v.Changes {
		assert.False(t, c.Breaking(), "%s", c)
	}
	// The changelog sees every addition.
	all, err := Compare(b, r, 0)
	require.NoError(t, err)
	assert.Subset(t, rules(all), []string{"endpoint-added", "new-optional-request-property",
		"response-optional-property-added", "request-property-enum-value-added"})
}

// TestJudge_FixturePair is the committed pair: every breaking change of the
// rules above at once fails with a minor version bump.
func TestJudge_FixturePair(t *testing.T) {
	b := loadSpec(t, "specs/w/openapi.yaml", readFixture(t, "base.yaml"))
	r := loadSpec(t, "specs/w/openapi.yaml", readFixture(t, "breaking.yaml"))
	v, err := Judge("specs/w/openapi.yaml", b, r)
	require.NoError(t, err)
	assert.True(t, v.Failed)
	assert.Subset(t, rules(v.Changes), []string{"api-removed-without-deprecation", "response-required-property-removed",
		"new-required-request-property", "request-property-enum-value-removed", "response-property-type-changed",
		"request-parameter-became-required"})
}

func TestJudge_NewAndRemovedSpecs(t *testing.T) {
	s := loadSpec(t, "specs/w/openapi.yaml", readFixture(t, "base.yaml"))
	v, err := Judge("specs/w/openapi.yaml", nil, s)
	require.NoError(t, err)
	assert.False(t, v.Failed, "a new spec breaks nobody")
	v, err = Judge("specs/w/openapi.yaml", s, nil)
	require.NoError(t, err)
	assert.True(t, v.Failed, "a removed spec breaks every consumer")
	assert.Equal(t, []string{"spec-removed"}, rules(v.Changes))
}

// TestJudge_WebhooksFromTheReceiversSide: in a webhooks spec the consumer
// serves the endpoint, so a payload property removed breaks it and one
// added does not.
func TestJudge_WebhooksFromTheReceiversSide(t *testing.T) {
	const path = "specs/w/webhooks.yaml"
	base := readFixture(t, "base.yaml")
	b := loadSpec(t, path, base)

	// The receiver's request body (the payload) gains a required field it
	// may ignore: fine. It loses a required one it reads: broken.
	lost := loadSpec(t, path, variant(t, base, edit{"      required: [name]\n      properties:\n        name: {type: string}\n        size: {type: integer}\n",
		"      required: [size]\n      properties:\n        size: {type: integer}\n"}))
	v, err := Judge(path, b, lost)
	require.NoError(t, err)
	assert.True(t, v.Failed, "%v", v.Changes)
	gained := loadSpec(t, path, variant(t, base, addRequiredWeight))
	v, err = Judge(path, b, gained)
	require.NoError(t, err)
	assert.False(t, v.Failed, "%v", v.Changes)
}

func TestMajorBumped(t *testing.T) {
	tests := []struct {
		base, rev string
		want      bool
	}{
		{"1.4.0", "2.0.0", true},
		{"1.4.0", "1.5.0", false},
		{"1.4.0", "1.4.0", false},
		{"2.0.0", "1.9.0", false},
		{"v1", "v2", true},
		{"1.0.0-beta", "2.0.0-rc.1", true},
		{"one", "2.0.0", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, MajorBumped(tt.base, tt.rev), "%s -> %s", tt.base, tt.rev)
	}
}
