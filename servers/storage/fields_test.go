package storage_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/storage/storagetest"
)

// TestLifecycle_EveryAcceptedCorpusDocumentReadsBack puts every valid
// corpus document into the bucket it suits (a versioned one for noncurrent
// versions) and reads it back: a document the server accepts is answered
// whole by GET, so every element a stored rule can hold is checked against
// the spec on the way out. A document whose actions the server does not
// implement is refused 501 and stores nothing.
func TestLifecycle_EveryAcceptedCorpusDocumentReadsBack(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "lifecycle", "valid", "*.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	_, c := startLifecycle(t)
	accepted := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".xml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			bucket := storagetest.Bucket
			if strings.Contains(string(data), "Noncurrent") {
				bucket = storagetest.VersionedBucket
			}
			put := putCorpus(t, c, bucket, "valid", name)
			switch put.StatusCode() {
			case http.StatusOK:
				accepted++
				got := getLifecycle(t, c, bucket)
				require.Equal(t, http.StatusOK, got.StatusCode(), "%s", got.Body)
				require.NotNil(t, got.XML200)
				assert.NotEmpty(t, got.XML200.Rules)
			case http.StatusNotImplemented, http.StatusBadRequest:
				// Schema-valid but refused (an action not implemented, a
				// rule the bucket cannot take): the other tests say why.
			default:
				t.Fatalf("PUT %s answered %d: %s", name, put.StatusCode(), put.Body)
			}
		})
	}
	assert.Greater(t, accepted, len(files)/2, "most of the valid corpus is accepted")
}
