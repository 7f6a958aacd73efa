package apiserver_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/specs"
)

func fetch(t *testing.T, u string, header http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(body)
}

// TestDocs_WorkOfflineAndTryItOutReachesTheSamePort checks what the
// docs page loads: its assets all come from the port itself (no CDN, no
// validator service), and the spec it shows names the port serving it as
// the server "Try it out" calls, whatever host the spec file names.
func TestDocs_WorkOfflineAndTryItOutReachesTheSamePort(t *testing.T) {
	base := observed(t, newRecorder(), nil, nil)
	status, _, page := fetch(t, base+"/docs/", nil)
	require.Equal(t, http.StatusOK, status)

	// Every asset the page names is relative to it, and is served.
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1)
	require.NotEmpty(t, refs)
	for _, m := range refs {
		ref := m[1]
		u, err := url.Parse(ref)
		require.NoError(t, err)
		assert.Empty(t, u.Scheme, "asset %q from another origin", ref)
		assert.Empty(t, u.Host, "asset %q from another origin", ref)
		abs, err := url.Parse(base + "/docs/")
		require.NoError(t, err)
		status, _, _ := fetch(t, abs.ResolveReference(u).String(), nil)
		assert.Equal(t, http.StatusOK, status, "asset %q", ref)
	}
	assert.Contains(t, page, "validatorUrl: null", "no call to the online validator")
	assert.Contains(t, page, `"swaggerJsonUrl":"/docs/openapi.yaml"`)

	// The spec the page loads: the API's own, its server made relative.
	status, header, docsYAML := fetch(t, base+"/docs/openapi.yaml", nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "application/yaml", header.Get("Content-Type"))
	docsSpec, err := openapi3.NewLoader().LoadFromData([]byte(docsYAML))
	require.NoError(t, err)
	raw, err := specs.FS.ReadFile("admin/openapi.yaml")
	require.NoError(t, err)
	spec, err := openapi3.NewLoader().LoadFromData(raw)
	require.NoError(t, err)
	require.Len(t, docsSpec.Servers, 1)
	assert.Equal(t, "/", docsSpec.Servers[0].URL)
	assert.NotEqual(t, spec.Servers[0].URL, docsSpec.Servers[0].URL)
	assert.Equal(t, spec.Paths.Len(), docsSpec.Paths.Len(), "every operation is still there")
	assert.Equal(t, spec.Components.SecuritySchemes["adminToken"].Value.Scheme, docsSpec.Components.SecuritySchemes["adminToken"].Value.Scheme,
		"the Authorize button's scheme is kept")
	_, _, served := fetch(t, base+"/openapi.yaml", nil)
	assert.Equal(t, string(raw), served, "/openapi.yaml stays the spec as written")

	// Swagger UI resolves the relative server against the spec's URL: the
	// docs page's origin. A request from that page (same origin, with the
	// token the Authorize button sets) reaches the API.
	specURL, err := url.Parse(base + "/docs/openapi.yaml")
	require.NoError(t, err)
	server, err := specURL.Parse(docsSpec.Servers[0].URL)
	require.NoError(t, err)
	assert.Equal(t, base+"/", server.String())
	status, _, body := fetch(t, strings.TrimSuffix(server.String(), "/")+"/storage/buckets", http.Header{
		"Origin":        {base},
		"Referer":       {base + "/docs/"},
		"Authorization": {"Bearer " + token},
	})
	assert.Equal(t, http.StatusOK, status, body)
}
