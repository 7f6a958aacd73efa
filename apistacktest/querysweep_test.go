package apistacktest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/apistacktest"
	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/internal/contractsweep"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/protocol/sigv4"
)

// postJSON posts body to url and decodes the JSON answer into out.
func postJSON(t *testing.T, url string, body any, out any) {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", bytes.NewReader(data))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
}

// TestQuerySweep_EveryAPI sends every operation of every API each declared
// query parameter empty, repeated and of the wrong type, and checks the
// documented error: 400 (fax 422) in the API's own error shape, naming the
// parameter.
func TestQuerySweep_EveryAPI(t *testing.T) {
	// The requests break the spec on purpose.
	st := apistacktest.Start(t, apistacktest.Options{AllowInvalidRequests: true})
	creds := st.Credentials

	t.Run("pam", func(t *testing.T) {
		var tok struct {
			AccessToken string `json:"bearer_token"`
		}
		postJSON(t, st.PAMURL+"/v1/teams/"+creds.PAM.Team+"/service_token",
			map[string]string{"key_id": creds.PAM.KeyID, "key_secret": creds.PAM.KeySecret}, &tok)
		require.NotEmpty(t, tok.AccessToken)
		cases := contractsweep.Query(t, contract.PAM, http.StatusBadRequest, st.PAMURL, map[string]string{"team_name": creds.PAM.Team}, nil,
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok.AccessToken) },
			func(t *testing.T, c contractsweep.QueryCase, body []byte) {
				var e struct {
					Error      string `json:"error"`
					ErrorCause []struct {
						LocationType string `json:"location_type"`
						Location     string `json:"location"`
					} `json:"error_cause"`
				}
				require.NoError(t, json.Unmarshal(body, &e), "%s", c)
				assert.Equal(t, "invalid_request", e.Error, "%s", c)
				if assert.NotEmpty(t, e.ErrorCause, "%s", c) {
					assert.Equal(t, "query", e.ErrorCause[0].LocationType, "%s", c)
					assert.Equal(t, c.Param, e.ErrorCause[0].Location, "%s", c)
				}
			})
		assert.NotEmpty(t, cases)
		t.Logf("pam: %d malformed queries, each 400 invalid_request naming its parameter", len(cases))
	})

	t.Run("fax", func(t *testing.T) {
		cases := contractsweep.Query(t, contract.Fax, http.StatusUnprocessableEntity, st.FaxURL, nil, nil,
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+creds.Fax.APIKey) },
			func(t *testing.T, c contractsweep.QueryCase, body []byte) {
				var e struct {
					Errors []struct {
						Code   string `json:"code"`
						Source struct {
							Parameter string `json:"parameter"`
						} `json:"source"`
					} `json:"errors"`
				}
				require.NoError(t, json.Unmarshal(body, &e), "%s", c)
				if assert.NotEmpty(t, e.Errors, "%s", c) {
					assert.Equal(t, c.Param, e.Errors[0].Source.Parameter, "%s", c)
				}
			})
		assert.NotEmpty(t, cases)
		t.Logf("fax: %d malformed queries, each 422 with errors[].source.parameter", len(cases))
	})

	t.Run("restaurant", func(t *testing.T) {
		var login struct {
			Token struct {
				AccessToken string `json:"accessToken"`
			} `json:"token"`
		}
		postJSON(t, st.RestaurantURL+"/authentication/v1/authentication/login", map[string]string{
			"clientId": creds.Restaurant.ClientID, "clientSecret": creds.Restaurant.ClientSecret,
			"userAccessType": "PLATFORM_MACHINE_CLIENT"}, &login)
		require.NotEmpty(t, login.Token.AccessToken)
		cases := contractsweep.Query(t, contract.Restaurant, http.StatusBadRequest, st.RestaurantURL,
			map[string]string{"guid": "00000000-0000-4000-8000-000000000001"}, nil,
			func(r *http.Request) {
				r.Header.Set("Authorization", "Bearer "+login.Token.AccessToken)
				r.Header.Set("Platform-Restaurant-External-ID", creds.Restaurant.RestaurantGUID)
			},
			func(t *testing.T, c contractsweep.QueryCase, body []byte) {
				var e struct {
					Status    int    `json:"status"`
					FieldName string `json:"fieldName"`
				}
				require.NoError(t, json.Unmarshal(body, &e), "%s", c)
				assert.Equal(t, http.StatusBadRequest, e.Status, "%s", c)
				assert.Equal(t, c.Param, e.FieldName, "%s", c)
			})
		assert.NotEmpty(t, cases)
		t.Logf("restaurant: %d malformed queries, each 400 naming its fieldName", len(cases))
	})

	t.Run("storage", func(t *testing.T) {
		sc := st.StorageConfig()
		signer := &storage.Signer{Credentials: sigv4.Credentials{AccessKeyID: sc.KeyID, SecretAccessKey: sc.Secret},
			Region: sc.Region, Service: "s3", Now: sc.Now}
		// PutLifecycle takes a lifecycle document: a well-formed one, so the
		// query alone is wrong.
		const doc = `<LifecycleConfiguration><Rule><ID>r</ID><Status>Enabled</Status><Prefix>logs/</Prefix><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`
		withDoc := func(r *http.Request) {
			if r.Method != http.MethodPut {
				return
			}
			r.Body = io.NopCloser(strings.NewReader(doc))
			r.ContentLength = int64(len(doc))
			r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(doc)), nil }
			r.Header.Set("Content-Type", "application/xml")
		}
		cases := contractsweep.Query(t, contract.Storage, http.StatusBadRequest, st.StorageURL, map[string]string{"bucket": creds.Storage.Bucket}, signer, withDoc,
			func(t *testing.T, c contractsweep.QueryCase, body []byte) {
				assert.Contains(t, string(body), "<Code>InvalidArgument</Code>", "%s", c)
				assert.Contains(t, strings.ToLower(string(body)), c.Param, "%s", c)
			})
		assert.NotEmpty(t, cases)
		t.Logf("storage: %d malformed queries, each 400 InvalidArgument", len(cases))
	})

	t.Run("admin", func(t *testing.T) {
		cases := contractsweep.Query(t, contract.Admin, http.StatusBadRequest, st.AdminURL, nil, nil,
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+creds.Admin.Token) }, nil)
		t.Logf("admin: %d query parameters to sweep", len(cases))
	})
}
