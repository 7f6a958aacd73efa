package apiserver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
)

func TestViolationMessages(t *testing.T) {
	schema := openapi3.NewBoolSchema()
	bad := schema.VisitJSON("secret-value")
	var schemaErr *openapi3.SchemaError
	if !errors.As(bad, &schemaErr) {
		t.Fatalf("VisitJSON returned %T, not a schema error", bad)
	}
	assert.Contains(t, bad.Error(), "secret-value", "kin-openapi quotes the value")

	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"plain", errors.New("response Content-Type \"text/plain\" is not declared for status 200"),
			[]string{`response Content-Type "text/plain" is not declared for status 200`}},
		{"schema error, wrapped", fmt.Errorf("response body doesn't match schema: %w", bad),
			[]string{"response body doesn't match schema: value must be a boolean"}},
		{"several, one line each", fmt.Errorf("response body doesn't match schema: %w", openapi3.MultiError{bad, errors.New("second\nwith a detail line")}),
			[]string{"response body doesn't match schema: value must be a boolean", "response body doesn't match schema: second"}},
		{"joined", errors.Join(errors.New("one"), errors.New("two")), []string{"one", "two"}},
		{"clipped", errors.New(strings.Repeat("x", 2*maxViolationBytes)), []string{strings.Repeat("x", maxViolationBytes) + "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := violationMessages(tt.err)
			assert.Equal(t, tt.want, got)
			for _, m := range got {
				assert.NotContains(t, m, "secret-value")
			}
		})
	}
}
