package stalledbody

import (
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
