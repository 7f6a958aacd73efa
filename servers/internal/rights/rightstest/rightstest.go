// Package rightstest reads a spec's authorization rules for the tests that
// walk every operation with every kind of caller, independently of the
// reading package rights does for the servers: a test that trusted the
// server's own reading could not catch a mistake in it.
package rightstest

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/rights"
)

// Op is one operation of a spec that needs credentials, with who may call
// it as the spec says.
type Op struct {
	// ID, Method and Path name the operation; Path keeps its {parameters}.
	ID, Method, Path string
	// Roles is the operation's list; [rights.Authenticated] allows every
	// authenticated caller.
	Roles []string
	// Body is the $ref name of its request body's schema ("" without one).
	Body string
}

// Ops walks doc: every operation that needs credentials, in path and method
// order. An operation open to everyone (security: []) must not carry the
// extension; an operation that needs credentials without it fails the test.
func Ops(t *testing.T, doc *openapi3.T) []Op {
	t.Helper()
	var ops []Op
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security != nil && len(*op.Security) == 0 {
				assert.NotContains(t, op.Extensions, rights.Extension, "%s needs no credentials", op.OperationID)
				continue
			}
			raw, ok := op.Extensions[rights.Extension].([]any)
			if !assert.True(t, ok, "%s %s (%s) does not say who may call it (%s)", method, path, op.OperationID, rights.Extension) {
				continue
			}
			o := Op{ID: op.OperationID, Method: method, Path: path}
			for _, r := range raw {
				o.Roles = append(o.Roles, r.(string))
			}
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Value.Content {
					o.Body = strings.TrimPrefix(mt.Schema.Ref, "#/components/schemas/")
				}
			}
			ops = append(ops, o)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Path+ops[i].Method < ops[j].Path+ops[j].Method })
	return ops
}

// Roles is the role table of doc's security scheme named scheme: its roles,
// sorted.
func Roles(t *testing.T, doc *openapi3.T, scheme string) []string {
	t.Helper()
	s, ok := doc.Components.SecuritySchemes[scheme]
	require.True(t, ok, "the spec has no security scheme %s", scheme)
	table, ok := s.Value.Extensions[rights.Extension].(map[string]any)
	require.True(t, ok, "the %s scheme carries the role table", scheme)
	var roles []string
	for r := range table {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

// MayCall reports whether the spec lets a caller holding role ("" for
// none) call o.
func (o Op) MayCall(role string) bool {
	return slices.Equal(o.Roles, []string{rights.Authenticated}) || (role != "" && slices.Contains(o.Roles, role))
}
