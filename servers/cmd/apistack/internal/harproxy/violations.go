package harproxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/servers/internal/har"
	"github.com/apistack/apistack/servers/internal/shape"
	"github.com/apistack/apistack/servers/internal/validation"
)

// Exchange is one request and its answer as a checker sees them, bodies
// whole (or cut, then not checked).
type Exchange struct {
	Request *http.Request
	// RequestBody is the request's body; RequestCut reports it was cut at a
	// cap and is not whole.
	RequestBody []byte
	RequestCut  bool
	// Answered is false when no answer came (Status, Header and
	// ResponseBody are then unset).
	Answered       bool
	Status         int
	Header         http.Header
	ResponseBody   []byte
	ResponseUnread bool
}

// Check holds an exchange to the spec of checker: it returns the operation
// (its operationId, "" when none has the request's method and path) and
// every violation, request first.
func Check(ctx context.Context, checker *contract.Transport, x *Exchange) (string, []har.Violation) {
	var checked *contract.Checked
	var err error
	if x.RequestCut {
		checked, err = checker.CheckRequestHead(ctx, x.Request)
	} else {
		checked, err = checker.CheckRequest(ctx, x.Request, x.RequestBody)
	}
	route := checked.Route()
	if route == nil {
		msg := fmt.Sprintf("no operation of the spec is %s %s", x.Request.Method, x.Request.URL.Path)
		if err != nil {
			msg += ": " + err.Error()
		}
		return "", []har.Violation{{Where: "request", Pointer: "", Message: msg}}
	}
	var out []har.Violation
	if err != nil {
		out = append(out, Violations("request", err)...)
	}
	op := route.Operation
	if !x.RequestCut && len(x.RequestBody) > 0 && op.RequestBody != nil && op.RequestBody.Value != nil {
		ct := x.Request.Header.Get("Content-Type")
		out = append(out, undeclared("request", shape.MediaSchema(op.RequestBody.Value.Content, ct), ct, x.RequestBody)...)
	}
	if !x.Answered {
		return op.OperationID, out
	}
	if x.ResponseUnread {
		err = checked.CheckResponseHead(ctx, x.Status, x.Header)
	} else {
		err = checked.CheckResponse(ctx, x.Status, x.Header, x.ResponseBody)
	}
	if err != nil {
		out = append(out, Violations("response", err)...)
	}
	if !x.ResponseUnread && len(x.ResponseBody) > 0 {
		ct := x.Header.Get("Content-Type")
		out = append(out, undeclared("response", shape.ResponseSchema(op, x.Status, ct), ct, x.ResponseBody)...)
	}
	return op.OperationID, out
}

// undeclared lists the members of a JSON body its schema does not declare.
func undeclared(where string, schema *openapi3.Schema, contentType string, body []byte) []har.Violation {
	if schema == nil {
		return nil
	}
	doc, err := decodeBody(contentType, body)
	if err != nil {
		return nil
	}
	var out []har.Violation
	for _, p := range shape.Undeclared(schema, doc) {
		out = append(out, har.Violation{Where: where, Pointer: "/body" + p, Message: "a member the spec does not declare"})
	}
	return out
}

// decodeBody is shape.Decode's reading of body, a JSON one read in one pass
// by the servers' decoder (numbers as float64s, which members a document
// has and their shapes unchanged); a JSON document that decoder refuses
// (duplicate keys, deep nesting) is read by shape.Decode as before.
func decodeBody(contentType string, body []byte) (any, error) {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		if doc, err := validation.DecodeStrictJSON(body); err == nil {
			return doc, nil
		}
	}
	return shape.Decode(contentType, body)
}

var headerName = regexp.MustCompile(`header "([^"]+)"`)

// Violations lists the rules a validation error says were broken, each
// with its place in the exchange (har.Violation's pointer).
func Violations(where string, err error) []har.Violation {
	var out []har.Violation
	violations(where, "", err, &out)
	return out
}

func violations(where, at string, err error, out *[]har.Violation) {
	var multi openapi3.MultiError
	if errors.As(err, &multi) && !isWrapped(err) {
		for _, e := range multi {
			violations(where, at, e, out)
		}
		return
	}
	switch e := err.(type) {
	case openapi3.MultiError:
		for _, x := range e {
			violations(where, at, x, out)
		}
	case *openapi3filter.RequestError:
		switch {
		case e.Parameter != nil:
			at = "/" + e.Parameter.In + "/" + e.Parameter.Name
		case e.RequestBody != nil:
			at = "/body"
		}
		reasoned(where, at, e.Reason, e.Err, out)
	case *openapi3filter.ResponseError:
		switch {
		case e.Reason == "status is not supported":
			*out = append(*out, har.Violation{Where: where, Pointer: "/status",
				Message: fmt.Sprintf("status %d is not one the operation declares", e.Input.Status)})
			return
		case strings.Contains(e.Reason, "header"):
			if m := headerName.FindStringSubmatch(e.Reason); m != nil {
				at = "/header/" + m[1]
			}
		case strings.Contains(e.Reason, "body") || strings.Contains(e.Reason, "Content-Type"):
			at = "/body"
		}
		reasoned(where, at, e.Reason, e.Err, out)
	case *openapi3filter.SecurityRequirementsError:
		msgs := make([]string, 0, len(e.Errors))
		for _, x := range e.Errors {
			msgs = append(msgs, x.Error())
		}
		*out = append(*out, har.Violation{Where: where, Pointer: "/security",
			Message: "no security requirement met: " + strings.Join(msgs, "; ")})
	case *openapi3.SchemaError:
		ptr := at
		if p := e.JSONPointer(); len(p) > 0 {
			ptr += "/" + strings.Join(p, "/")
		}
		reason := e.Reason
		if reason == "" && e.Origin != nil {
			reason = e.Origin.Error()
		}
		*out = append(*out, har.Violation{Where: where, Pointer: ptr, Message: reason})
	default:
		*out = append(*out, har.Violation{Where: where, Pointer: at, Message: err.Error()})
	}
}

// isWrapped reports an error that carries its place itself (a request or
// response error around a MultiError).
func isWrapped(err error) bool {
	switch err.(type) {
	case *openapi3filter.RequestError, *openapi3filter.ResponseError, *openapi3filter.SecurityRequirementsError, *openapi3.SchemaError:
		return true
	}
	return false
}

// reasoned adds the violations of cause, or one with reason when it has
// none of its own.
func reasoned(where, at, reason string, cause error, out *[]har.Violation) {
	if cause == nil {
		*out = append(*out, har.Violation{Where: where, Pointer: at, Message: reason})
		return
	}
	before := len(*out)
	violations(where, at, cause, out)
	if reason == "" {
		return
	}
	for i := before; i < len(*out); i++ {
		v := &(*out)[i]
		if !strings.Contains(v.Message, reason) && !strings.Contains(reason, "doesn't match schema") {
			v.Message = reason + ": " + v.Message
		}
	}
}
