package stalledbody

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const spec = `
openapi: 3.0.3
info: {title: test, version: "1"}
paths:
  /teams/{team}/things:
    get:
      operationId: listThings
      responses: {"200": {description: listed}}
    post:
      operationId: createThing
      requestBody:
        content:
          application/x-www-form-urlencoded: {schema: {type: object}}
          application/json: {schema: {type: object}}
      responses: {"201": {description: made}}
  /lifecycle:
    put:
      operationId: putLifecycle
      requestBody:
        content:
          application/xml: {schema: {type: string}}
      responses: {"200": {description: set}}
`

func TestOperations_ListsEveryOperationTakingABodyJSONFirst(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	require.NoError(t, err)
	assert.Equal(t, []Operation{
		{ID: "createThing", Method: "POST", Path: "/teams/{team}/things", ContentType: "application/json"},
		{ID: "putLifecycle", Method: "PUT", Path: "/lifecycle", ContentType: "application/xml"},
	}, Operations(doc))
}

func TestExpand_FillsEachParameterEscapedAndRefusesOneWithoutValue(t *testing.T) {
	got, err := expand("/teams/{team}/numbers/{number}", map[string]string{"team": "acme", "number": "+1 312"})
	require.NoError(t, err)
	assert.Equal(t, "/teams/acme/numbers/+1%20312", got)
	_, err = expand("/teams/{team}", nil)
	assert.ErrorContains(t, err, "no value for the path parameter team")
	_, err = expand("/teams/{team", map[string]string{"team": "acme"})
	assert.ErrorContains(t, err, "unclosed parameter")
}

func TestSend_SetsTheBearerUnlessAuthorizeSetsTheCredentials(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	op := Operation{ID: "createThing", Method: http.MethodPost, Path: "/teams/{team}/things", ContentType: "application/json"}
	values := map[string]string{"team": "acme"}
	for _, tc := range []struct {
		name   string
		target Target
		want   string
	}{
		{"bearer", Target{PathValues: values, Bearer: "tok"}, "Bearer tok"},
		{"none", Target{PathValues: values}, ""},
		{"authorize", Target{PathValues: values, Bearer: "tok", Authorize: func(_ *testing.T, _ Operation, req *http.Request) {
			req.Header.Set("Authorization", "Custom x")
		}}, "Custom x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, _ := Send(t, srv.URL, tc.target, op)
			assert.Equal(t, http.StatusTeapot, status)
			assert.Equal(t, tc.want, <-got)
		})
	}
}

func TestDecodeJSON_DecodesTheBodyIntoItsType(t *testing.T) {
	type apiError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	assert.Equal(t, apiError{Code: 408, Message: "read timeout"},
		DecodeJSON[apiError](t, []byte(`{"code":408,"message":"read timeout"}`)))
}
