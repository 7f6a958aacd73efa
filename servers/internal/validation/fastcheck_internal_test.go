package validation

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/specload"
)

// loadedSpec is one API's spec (name: its path in specs.FS), loaded, with
// the path router validation builds for it.
type loadedSpec struct {
	name   string
	doc    *openapi3.T
	router routers.Router
}

// loadSpecs loads every API's spec and builds its router.
func loadSpecs(t *testing.T) []loadedSpec {
	t.Helper()
	names := specload.OpenAPIPaths()
	require.NotEmpty(t, names)
	out := make([]loadedSpec, 0, len(names))
	for _, name := range names {
		doc, err := specload.Load(name)
		require.NoError(t, err)
		router, err := newPathRouter(doc)
		require.NoError(t, err)
		out = append(out, loadedSpec{name: name, doc: doc, router: router})
	}
	return out
}

// TestFastChecksAnswerAsOpenAPIFilter holds the compiled checks of the
// operations without a body to openapi3filter on every API's spec: random
// requests to each such operation, each parameter absent, repeated, empty, or
// given a value from its own schema (examples, enumerations, defaults,
// bounds and one past them) or from a list of valid and invalid values of
// every kind, with a good token, a bad one or none, are validated with the
// compiled checks and without them. Both answer alike: the same failure,
// word for word, the same query (defaults written in) and headers after. The
// hot reads are admitted by the compiled check itself.
func TestFastChecksAnswerAsOpenAPIFilter(t *testing.T) {
	admittedOps := map[string]int{}
	for _, spec := range loadSpecs(t) {
		name, doc, router := spec.name, spec.doc, spec.router
		checks := compileFastChecks(doc)
		opts := &openapi3filter.Options{
			AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
				if in.RequestValidationInput.Request.Header.Get("Authorization") != "Bearer good" {
					return errors.New("the token is not valid")
				}
				return nil
			},
			MultiError: true, KeepValidatedValue: true, RejectWhenRequestBodyNotSpecified: true,
		}
		rng := rand.New(rand.NewPCG(1, uint64(len(name))))
		for path, pathItem := range doc.Paths.Map() {
			for method, op := range pathItem.Operations() {
				if checks[op] == nil {
					continue
				}
				params := append(openapi3.Parameters{}, pathItem.Parameters...)
				params = append(params, op.Parameters...)
				for range 150 {
					build := randomRequest(rng, method, path, params)
					fastReq, slowReq := build(), build()
					fastRoute, fastInput, fastErr := validateRequest(fastReq, router, checks, opts, nil, opts)
					slowRoute, slowInput, slowErr := validateRequest(slowReq, router, nil, opts, nil, opts)
					where := fmt.Sprintf("%s %s", method, slowReq.URL.String())
					require.Equal(t, describeFailure(slowErr), describeFailure(fastErr), where)
					require.Equal(t, slowReq.URL.RawQuery, fastReq.URL.RawQuery, where)
					require.Equal(t, slowReq.Header, fastReq.Header, where)
					if slowRoute != nil {
						require.Equal(t, slowRoute.Operation, fastRoute.Operation, where)
						require.Equal(t, slowInput.PathParams, fastInput.PathParams, where)
					}
					probe := build()
					if route, vars, err := router.FindRoute(probe); err == nil && checks[route.Operation] != nil {
						if _, ok := checks[route.Operation].admit(probe, route, vars, opts); ok {
							require.NoError(t, slowErr, where)
							admittedOps[op.OperationID]++
						}
					}
				}
			}
		}
	}
	for _, op := range []string{"ListGroups", "ListMenuItems", "GetMenuItem", "ListFaxes"} {
		assert.Positive(t, admittedOps[op], "%s requests are admitted by the compiled check", op)
	}
	t.Logf("admitted by the compiled checks: %v", admittedOps)
}

// describeFailure is what a client can tell of a validation error.
func describeFailure(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		auth := ""
		if f.AuthErr != nil {
			auth = f.AuthErr.Error()
		}
		return fmt.Sprintf("kind %d: %s %v %s", f.Kind, f.Message, f.Causes, auth)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// randomRequest returns a function building one random request to the
// operation (the same request each call).
func randomRequest(rng *rand.Rand, method, path string, params openapi3.Parameters) func() *http.Request {
	concrete := path
	var query []string
	header := http.Header{}
	switch rng.IntN(10) {
	case 0:
	case 1:
		header.Set("Authorization", "Bearer bad")
	default:
		header.Set("Authorization", "Bearer good")
	}
	for _, ref := range params {
		prm := ref.Value
		own, values := candidates(prm)
		pick := func() string {
			if len(own) > 0 && rng.IntN(2) == 0 {
				return own[rng.IntN(len(own))]
			}
			return values[rng.IntN(len(values))]
		}
		switch prm.In {
		case openapi3.ParameterInPath:
			concrete = strings.ReplaceAll(concrete, "{"+prm.Name+"}", url.PathEscape(pick()))
		case openapi3.ParameterInQuery:
			switch n := rng.IntN(10); {
			case n < 5: // absent
			case n == 4:
				query = append(query, url.QueryEscape(prm.Name)+"="+url.QueryEscape(pick()), url.QueryEscape(prm.Name)+"="+url.QueryEscape(pick()))
			case n == 6 && rng.IntN(2) == 0:
				query = append(query, url.QueryEscape(prm.Name)+"=")
			default:
				query = append(query, url.QueryEscape(prm.Name)+"="+url.QueryEscape(pick()))
			}
		case openapi3.ParameterInHeader:
			switch n := rng.IntN(10); {
			case n == 0: // absent
			case n == 1:
				header.Add(prm.Name, pick())
				header.Add(prm.Name, pick())
			default:
				header.Set(prm.Name, pick())
			}
		}
	}
	if rng.IntN(8) == 0 {
		query = append(query, "unknown=1")
	}
	rng.Shuffle(len(query), func(i, j int) { query[i], query[j] = query[j], query[i] })
	target := "http://127.0.0.1:1" + concrete
	if len(query) > 0 {
		target += "?" + strings.Join(query, "&")
	}
	return func() *http.Request {
		req, err := http.NewRequest(method, target, nil)
		if err != nil {
			panic(err)
		}
		req.Header = header.Clone()
		return req
	}
}

// candidates are the values a random request gives a parameter: its
// schema's own (examples, default, enumeration, bounds and one past them),
// and some of every kind.
func candidates(prm *openapi3.Parameter) (own, general []string) {
	general = []string{"demo", "acme-team", "a", "-bad", "UPPER", "a b", "é", "x.y",
		strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("x", 255), strings.Repeat("x", 256), strings.Repeat("x", 1025),
		"4a5ef2a1-3c1f-4f56-9a3a-1b0e2f3c4d5e", "4A5EF2A1-3C1F-4F56-9A3A-1B0E2F3C4D5E", "4a5ef2a1-3c1f-4f56-9a3a-1b0e2f3c4d5",
		"+13125550100", "13125550100", "2015-12-01T00:00:00Z", "2015-12-01T00:00:00.000+0000", "yesterday",
		"0", "1", "2", "20", "100", "250", "251", "300", "301", "1000", "1001", "1000000", "1000001",
		"-1", "-0", "007", "+5", "1.5", "1e3", "99999999999999999999", "true", "false", "True", "outbound", "inbound", "sideways"}
	if prm.Schema == nil || prm.Schema.Value == nil {
		return nil, general
	}
	s := prm.Schema.Value
	for _, v := range []any{s.Example, s.Default} {
		if v != nil {
			own = append(own, fmt.Sprint(v))
		}
	}
	for _, v := range s.Enum {
		own = append(own, fmt.Sprint(v))
	}
	for _, b := range []*float64{s.Min, s.Max} {
		if b != nil {
			own = append(own, strconv.FormatFloat(*b, 'f', -1, 64), strconv.FormatFloat(*b-1, 'f', -1, 64), strconv.FormatFloat(*b+1, 'f', -1, 64))
		}
	}
	return own, general
}
