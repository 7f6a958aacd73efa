package replicas

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withoutURLs removes the addresses from a demo-credentials.json: each
// replica writes its own ports there; every secret must be the same.
func withoutURLs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k == "base_url" || k == "endpoint" {
				continue
			}
			out[k] = withoutURLs(e)
		}
		return out
	default:
		return v
	}
}

// TestReplicas_DemoCreatedOnce: two replicas started together with --demo
// create the demo tenants once and write the same credentials.
func TestReplicas_DemoCreatedOnce(t *testing.T) {
	c := newCluster(t)
	rs := c.start(t, 2, "--demo")

	var files []map[string]any
	for _, r := range rs {
		data, err := os.ReadFile(filepath.Join(r.dataDir, "demo-credentials.json"))
		require.NoError(t, err)
		var creds map[string]any
		require.NoError(t, json.Unmarshal(data, &creds))
		files = append(files, creds)
	}
	for _, api := range []string{"pam", "restaurant", "fax", "storage", "admin"} {
		require.Contains(t, files[0], api)
	}
	assert.Equal(t, withoutURLs(files[0]), withoutURLs(files[1]), "both replicas hold the same credentials")
	assert.Equal(t, c.adminToken, files[0]["admin"].(map[string]any)["token"])
	for _, r := range rs {
		entries, err := os.ReadDir(r.dataDir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.Equal(t, []string{"demo-credentials.json", "demo-lifecycle.xml"}, names,
			"the demo's files (its credentials, the document of the banner's storage line), no SQLite file, no key file: the state is in PostgreSQL")
	}

	// The demo key works on both replicas, and the demo bot has one key:
	// the second replica reused the first one's instead of issuing its own.
	p := files[0]["pam"].(map[string]any)
	team := pamTeam{name: p["team"].(string), keyID: p["key_id"].(string), keySecret: p["key_secret"].(string)}
	var token string
	for _, r := range rs {
		token = pamToken(t, direct(r, "pam"), team)
	}
	var keys struct {
		List []map[string]any `json:"list"`
	}
	mustCall(t, client("pam", rs...), http.MethodGet, "http://pam/v1/teams/"+team.name+"/service_users/demo-bot/keys", token, nil, http.StatusOK, &keys)
	assert.Len(t, keys.List, 1, "one demo key")

	// A replica restarted with --demo keeps the same credentials.
	rs[0].stop()
	again := c.start(t, 1, "--demo")
	data, err := os.ReadFile(filepath.Join(again[0].dataDir, "demo-credentials.json"))
	require.NoError(t, err)
	var third map[string]any
	require.NoError(t, json.Unmarshal(data, &third))
	assert.Equal(t, withoutURLs(files[0]), withoutURLs(third))
}
