package specload_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/specload"
)

func TestLoad_EveryAPIsDocumentAndNoOther(t *testing.T) {
	paths := specload.OpenAPIPaths()
	assert.Contains(t, paths, "pam/openapi.yaml")
	assert.NotContains(t, paths, "fax/webhooks.yaml", "the webhooks document is not an API's")
	for _, p := range paths {
		doc, err := specload.Load(p)
		require.NoError(t, err, p)
		assert.NotEmpty(t, doc.Paths.Map(), p)
	}
	_, err := specload.Load("nope/openapi.yaml")
	assert.Error(t, err)
}
