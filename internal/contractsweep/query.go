package contractsweep

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/contractcoverage"
	"github.com/apistack/apistack/protocol/contract"
)

// Malformed is one way a query parameter is sent wrong.
type Malformed string

// The ways the query sweep sends a parameter wrong.
const (
	// Empty sends "?name=" to a parameter that does not allow an empty value.
	Empty Malformed = "empty"
	// Repeated sends "?name=v&name=v" to a parameter that is not an array.
	Repeated Malformed = "repeated"
	// WrongType sends a value its schema refuses ("abc" for an integer).
	WrongType Malformed = "wrong type"
)

// QueryCase is one malformed request of the query sweep.
type QueryCase struct {
	// Op is the operation.
	Op contractcoverage.Operation
	// Param is the query parameter sent wrong.
	Param string
	// How it is wrong.
	How Malformed
	// Query is the query string sent.
	Query string
}

func (c QueryCase) String() string {
	return fmt.Sprintf("%s %s %s?%s (%s %s)", c.Op.ID, c.Op.Method, c.Op.Path, c.Query, c.Param, c.How)
}

// Query sends every operation of api, for each query parameter it declares,
// the parameter empty, repeated and of the wrong type (each where the
// parameter's schema makes it wrong), the other parameters well formed, and
// asserts each is answered 400, which every such operation must declare;
// the contract transport holds each answer to the spec's 400 response (the
// API's error shape), and check then looks at the body (the API's error name,
// the parameter named). prepare adds credentials and headers to a request;
// next is the transport under the contract check (nil: the default). It
// returns the cases sent.
func Query(t *testing.T, api contract.API, want int, baseURL string, values map[string]string, next http.RoundTripper,
	prepare func(*http.Request), check func(t *testing.T, c QueryCase, body []byte)) []QueryCase {
	t.Helper()
	if next == nil {
		next = http.DefaultTransport
	}
	_, ops, err := contractcoverage.Operations(string(api))
	require.NoError(t, err)
	rt, err := contract.ForAPI(api, next, contract.WithoutRequestValidation(),
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	client := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var cases []QueryCase
	for _, op := range ops {
		for _, ref := range append(append(openapi3.Parameters{}, op.Shared...), op.Op.Parameters...) {
			prm := ref.Value
			if prm.In != openapi3.ParameterInQuery {
				continue
			}
			for _, how := range []Malformed{Empty, Repeated, WrongType} {
				sent, ok := malformed(prm, how)
				if !ok {
					continue
				}
				req, err := op.NewRequest(baseURL, values, "")
				require.NoError(t, err)
				q := req.URL.Query()
				q.Del(prm.Name)
				for _, v := range sent {
					q.Add(prm.Name, v)
				}
				req.URL.RawQuery = q.Encode()
				c := QueryCase{Op: op, Param: prm.Name, How: how, Query: req.URL.RawQuery}
				require.True(t, op.Declares(want), "%s declares no %d for a malformed query", c, want)
				cases = append(cases, c)
				if prepare != nil {
					prepare(req)
				}
				resp, err := client.Do(req)
				require.NoError(t, err, "%s", c)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				if assert.Equal(t, want, resp.StatusCode, "%s: %.300s", c, body) && check != nil {
					check(t, c, body)
				}
			}
		}
	}
	return cases
}

// malformed gives the values that send prm wrong in the given way, or false
// when the parameter cannot be wrong that way (an empty value it allows, an
// array that takes repeats, a free string no value is the wrong type for).
func malformed(prm *openapi3.Parameter, how Malformed) ([]string, bool) {
	s := &openapi3.Schema{}
	if prm.Schema != nil && prm.Schema.Value != nil {
		s = prm.Schema.Value
	}
	if s.Type.Is(openapi3.TypeArray) {
		return nil, false
	}
	switch how {
	case Empty:
		if prm.AllowEmptyValue {
			return nil, false
		}
		return []string{""}, true
	case Repeated:
		v := validSample(s)
		return []string{v, v}, true
	case WrongType:
		v, ok := wrongValue(s)
		if !ok {
			return nil, false
		}
		return []string{v}, true
	}
	return nil, false
}

// validSample is a value valid for s.
func validSample(s *openapi3.Schema) string {
	switch {
	case len(s.Enum) > 0:
		return fmt.Sprint(s.Enum[0])
	case s.Default != nil:
		return fmt.Sprint(s.Default)
	case s.Example != nil:
		return fmt.Sprint(s.Example)
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		if s.Min != nil {
			return strconv.FormatFloat(*s.Min, 'f', -1, 64)
		}
		return "1"
	case s.Type.Is(openapi3.TypeBoolean):
		return "true"
	case s.Format == "date-time":
		return "2026-01-02T03:04:05Z"
	case s.MaxLength != nil && *s.MaxLength == 0:
		return ""
	}
	return "x"
}

// wrongValue is a value of the wrong type for s.
func wrongValue(s *openapi3.Schema) (string, bool) {
	switch {
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		return "abc", true
	case s.Type.Is(openapi3.TypeBoolean):
		return "maybe", true
	case len(s.Enum) > 0:
		return "not-a-listed-value", true
	case s.Format == "date-time":
		return "yesterday", true
	case s.Format == "uuid":
		return "not-a-uuid", true
	case s.Pattern != "":
		return "\u00e9 not the pattern \u00e9", true
	case s.MaxLength != nil && *s.MaxLength == 0:
		return "x", true
	}
	return "", false
}
