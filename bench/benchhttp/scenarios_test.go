package benchhttp

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/sigv4"
)

func testFixture() *Fixture {
	fx := &Fixture{pamToken: "tok", restaurantToken: "rtok", menuItemGUID: "item-1", mediaURL: "http://127.0.0.1:1/fax/sample.pdf"}
	fx.creds.PAM.Team = "demo"
	fx.creds.PAM.KeyID, fx.creds.PAM.KeySecret = "kid", "ksecret"
	fx.creds.Restaurant.RestaurantGUID = "rest-1"
	fx.creds.Fax.APIKey, fx.creds.Fax.ConnectionID, fx.creds.Fax.From = "fkey", "conn-1", "+13125550150"
	fx.creds.Storage.KeyID, fx.creds.Storage.Secret, fx.creds.Storage.Region, fx.creds.Storage.Bucket = "AKID", "secret", "local-1", "demo-bucket"
	return fx
}

func scenario(t *testing.T, name string) Scenario {
	t.Helper()
	s, err := SelectScenarios(name)
	require.NoError(t, err)
	require.Len(t, s, 1)
	return s[0]
}

func body(t *testing.T, req *http.Request) string {
	t.Helper()
	b, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	return string(b)
}

func TestScenarios_WritePathNamesAreUniqueAcrossWorkersRequestsAndRuns(t *testing.T) {
	s := scenario(t, "pam-create")
	ctx := context.Background()
	seen := map[string]bool{}
	for range 2 { // two runs (rounds) of the same scenario
		fn := s.build(testFixture(), "http://h")
		for w := range 3 {
			for seq := range 3 {
				req, err := fn(ctx, w, seq)
				require.NoError(t, err)
				b := body(t, req)
				assert.False(t, seen[b], "repeated: %s", b)
				seen[b] = true
				assert.Equal(t, "Bearer tok", req.Header.Get("Authorization"))
				assert.Equal(t, "http://h/v1/teams/demo/groups", req.URL.String())
			}
		}
	}
}

func TestScenarios_StoragePutIsSignedForItsTarget(t *testing.T) {
	fx := testFixture()
	req, err := scenario(t, "storage-put").build(fx, "http://127.0.0.1:9999")(context.Background(), 0, 0)
	require.NoError(t, err)
	b := body(t, req)
	assert.Contains(t, b, "<LifecycleConfiguration")
	assert.Equal(t, "/demo-bucket", req.URL.Path)
	assert.Equal(t, "lifecycle=", req.URL.RawQuery)

	// The server's verifier accepts it as it arrives, with its Content-Length.
	v := sigv4.Verifier{Scheme: sigv4.Cloud4, Region: "local-1", Service: "s3",
		Secret: func(_ context.Context, id string) (string, bool, error) {
			return fx.creds.Storage.Secret, id == "AKID", nil
		}}
	arrived := req.Header.Clone()
	arrived.Set("Content-Length", strconv.Itoa(len(b)))
	hash := sigv4.HashHex([]byte(b))
	_, err = v.Verify(context.Background(), sigv4.Request{
		Method: req.Method, Host: req.URL.Host, Path: req.URL.Path, Query: req.URL.Query(), Header: arrived, PayloadHash: hash,
	}, hash, time.Now())
	assert.NoError(t, err)

	// Signed for another host, it is refused: each target gets its own signature.
	_, err = v.Verify(context.Background(), sigv4.Request{
		Method: req.Method, Host: "127.0.0.1:8083", Path: req.URL.Path, Query: req.URL.Query(), Header: arrived, PayloadHash: hash,
	}, hash, time.Now())
	assert.Error(t, err)
}

func TestScenarios_FaxSendIsFormEncoded(t *testing.T) {
	req, err := scenario(t, "fax-send").build(testFixture(), "http://h")(context.Background(), 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "application/x-www-form-urlencoded", req.Header.Get("Content-Type"))
	assert.Equal(t, "Bearer fkey", req.Header.Get("Authorization"))
	form, err := url.ParseQuery(body(t, req))
	require.NoError(t, err)
	assert.Equal(t, url.Values{"connection_id": {"conn-1"}, "to": {"+13125550800"}, "from": {"+13125550150"},
		"media_url": {"http://127.0.0.1:1/fax/sample.pdf"}}, form)
}
