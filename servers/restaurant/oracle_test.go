package restaurant_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRestaurants_AnUnknownOneAnswersAsOneNotGranted: a client learns
// nothing of the restaurants it was not granted, not even whether they
// exist: the two answer alike, status, key, code and message.
func TestRestaurants_AnUnknownOneAnswersAsOneNotGranted(t *testing.T) {
	f := newFixture(t)
	const unknown = "0f0f0f0f-0000-4000-8000-000000000000"
	header := func(guid string) http.Header {
		return http.Header{"Authorization": {"Bearer " + f.token}, "Platform-Restaurant-External-Id": {guid}}
	}
	for _, path := range []string{"/config/v2/menuItems", "/config/v2/tables", "/config/v2/tipWithholding"} {
		sNo, eNo, _ := f.raw(path, header(f.b))
		sUnknown, eUnknown, _ := f.raw(path, header(unknown))
		assert.Equal(t, sNo, sUnknown, path)
		assert.Equal(t, http.StatusForbidden, sUnknown, path)
		assert.Equal(t, eNo.MessageKey, eUnknown.MessageKey, path)
		assert.Equal(t, eNo.Code, eUnknown.Code, path)
		assert.Equal(t, strings.ReplaceAll(eNo.Message, f.b, "X"), strings.ReplaceAll(eUnknown.Message, unknown, "X"), path)
	}
}
