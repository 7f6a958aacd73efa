package conform

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/apistack/apistack/protocol/contract"
)

// violationError is a contract violation as a check reports it: each rule
// broken and where, on one line, without the schema and value dumps of
// kin-openapi's messages.
type violationError struct {
	op, method, path string
	v                *contract.Violation
}

func (e *violationError) Error() string {
	side := "request"
	if e.v.Side == "response" {
		side = fmt.Sprintf("response %d", e.v.Status)
	}
	return fmt.Sprintf("%s (%s %s): contract: %s breaks the spec: %s", e.op, e.method, e.path, side, describe(e.v.Err))
}

// Unwrap returns the violation.
func (e *violationError) Unwrap() error { return e.v }

// describe explains a validation error: the rules broken, each with its place
// (a parameter, a header, a JSON pointer into the body).
func describe(err error) string {
	switch e := err.(type) {
	case openapi3.MultiError:
		parts := make([]string, 0, len(e))
		for _, x := range e {
			parts = append(parts, describe(x))
		}
		return strings.Join(parts, "; ")
	case *openapi3filter.ResponseError:
		return joinReason(e.Reason, e.Err)
	case *openapi3filter.RequestError:
		prefix := ""
		switch {
		case e.Parameter != nil:
			prefix = fmt.Sprintf("parameter %q in %s: ", e.Parameter.Name, e.Parameter.In)
		case e.RequestBody != nil:
			prefix = "request body: "
		}
		return prefix + joinReason(e.Reason, e.Err)
	case *openapi3.SchemaError:
		at := "/" + strings.Join(e.JSONPointer(), "/")
		reason := e.Reason
		if reason == "" && e.Origin != nil {
			reason = describe(e.Origin)
		}
		return fmt.Sprintf("at %s: %s", at, reason)
	}
	return err.Error()
}

// joinReason is kin-openapi's "reason: cause", each part described.
func joinReason(reason string, cause error) string {
	if cause == nil {
		return reason
	}
	c := describe(cause)
	if reason == "" || reason == cause.Error() {
		return c
	}
	return reason + ": " + c
}
