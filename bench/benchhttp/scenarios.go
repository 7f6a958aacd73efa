package benchhttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/protocol/sigv4"
)

// Scenario is one request measured against every server.
type Scenario struct {
	// Name selects the scenario on the command line (-scenarios).
	Name string
	// Title heads its table.
	Title string
	// API is the API it exercises: pam, fax, storage or restaurant (Prism
	// mocks specs/<API>/openapi.yaml).
	API string
	// Request describes the request for the report.
	Request string
	// Connections is the number of concurrent connections.
	Connections int
	// ValidateResponses adds the `apistack serve --validate-responses` server.
	ValidateResponses bool
	// Write marks a write path: the targets want no errors and p99 under 50 ms.
	Write bool
	// Headline marks the API's main list or send operation, which the targets
	// compare with Prism.
	Headline bool
	// Note is said under the table.
	Note string
	// build returns the request function against base, the target's base
	// URL of API, with fx's credentials and data.
	build func(fx *Fixture, base string) RequestFunc
}

// Scenarios returns every scenario in the order they run. Scenarios whose
// server keeps working after answering (fax's simulator) come last, so that
// work does not weigh on the others.
func Scenarios() []Scenario {
	return []Scenario{
		{
			Name: "pam-list", Title: "PAM: list 100 groups", API: "pam", Connections: 16, Headline: true, ValidateResponses: true,
			Request: "GET /v1/teams/demo/groups (Bearer token; 100 groups, one page)",
			build: func(fx *Fixture, base string) RequestFunc {
				u := base + "/v1/teams/" + fx.creds.PAM.Team + "/groups"
				return getRequest(u, http.Header{"Authorization": {"Bearer " + fx.pamToken}})
			},
		},
		{
			Name: "pam-token", Title: "PAM: token exchange", API: "pam", Connections: 16,
			Request: "POST /v1/teams/demo/service_token (JSON key id and secret; stores a new token each time)",
			build: func(fx *Fixture, base string) RequestFunc {
				body, _ := json.Marshal(map[string]string{"key_id": fx.creds.PAM.KeyID, "key_secret": fx.creds.PAM.KeySecret})
				u := base + "/v1/teams/" + fx.creds.PAM.Team + "/service_token"
				return func(ctx context.Context, _, _ int) (*http.Request, error) {
					return newRequest(ctx, http.MethodPost, u, "application/json", body, nil)
				}
			},
		},
		{
			Name: "pam-create", Title: "PAM: create a group (write path)", API: "pam", Connections: 16, Write: true,
			Request: "POST /v1/teams/demo/groups (JSON, a unique name per request)",
			Note:    "Every request creates a group with a unique name; a conflict or any other refusal counts as an error.",
			build: func(fx *Fixture, base string) RequestFunc {
				u := base + "/v1/teams/" + fx.creds.PAM.Team + "/groups"
				h := http.Header{"Authorization": {"Bearer " + fx.pamToken}}
				prefix := "bench-" + strings.ToLower(rand.Text()[:8])
				return func(ctx context.Context, worker, seq int) (*http.Request, error) {
					body, err := json.Marshal(map[string]any{
						"name":  fmt.Sprintf("%s-%d-%d", prefix, worker, seq),
						"roles": []string{"end_user"},
					})
					if err != nil {
						return nil, err
					}
					return newRequest(ctx, http.MethodPost, u, "application/json", body, h)
				}
			},
		},
		{
			Name: "restaurant-list", Title: "Restaurant: list 100 menu items", API: "restaurant", Connections: 16, Headline: true,
			Request: "GET /config/v2/menuItems?pageSize=100 (Bearer token, restaurant header; the demo restaurant has 500)",
			build: func(fx *Fixture, base string) RequestFunc {
				return getRequest(base+"/config/v2/menuItems?pageSize=100", restaurantHeader(fx))
			},
		},
		{
			Name: "restaurant-get", Title: "Restaurant: get one menu item", API: "restaurant", Connections: 16,
			Request: "GET /config/v2/menuItems/{guid}",
			build: func(fx *Fixture, base string) RequestFunc {
				return getRequest(base+"/config/v2/menuItems/"+fx.menuItemGUID, restaurantHeader(fx))
			},
		},
		{
			Name: "storage-put", Title: "Storage: PUT a lifecycle configuration", API: "storage", Connections: 16, Headline: true,
			Request: "PUT /demo-bucket?lifecycle (XML, two rules; each request signed CLOUD4-HMAC-SHA256)",
			Note: "Each request is signed when it is built (protocol/sigv4), and the server checks the signature and the body hash. " +
				"Prism validates the request too; when it refuses this one, the table shows the reasons it gave (its sl-violations header).",
			build: storagePut,
		},
		{
			Name: "fax-list", Title: "Fax: list 20 faxes", API: "fax", Connections: 16, Headline: true,
			Request: "GET /v2/faxes?page[size]=20 (Bearer API key; 20 delivered faxes)",
			build: func(fx *Fixture, base string) RequestFunc {
				return getRequest(base+"/v2/faxes?page%5Bsize%5D=20", http.Header{"Authorization": {"Bearer " + fx.creds.Fax.APIKey}})
			},
		},
		{
			Name: "fax-send", Title: "Fax: send a fax", API: "fax", Connections: 16, Headline: true,
			Request: "POST /v2/faxes (form-encoded, to +13125550800, media_url the admin port's sample PDF)",
			Note: "Each send answers 202 at once; the server's simulator then fetches the PDF, walks the fax's states " +
				"and delivers webhooks in the background, competing for the same CPU while later sends are measured.",
			build: func(fx *Fixture, base string) RequestFunc {
				form := url.Values{
					"connection_id": {fx.creds.Fax.ConnectionID},
					"to":            {"+13125550800"},
					"from":          {fx.creds.Fax.From},
					"media_url":     {fx.mediaURL},
				}
				body := []byte(form.Encode())
				h := http.Header{"Authorization": {"Bearer " + fx.creds.Fax.APIKey}}
				return func(ctx context.Context, _, _ int) (*http.Request, error) {
					return newRequest(ctx, http.MethodPost, base+"/v2/faxes", "application/x-www-form-urlencoded", body, h)
				}
			},
		},
	}
}

// SelectScenarios returns the scenarios named in the comma-separated list
// (all of them for "" or "all"), in their running order.
func SelectScenarios(list string) ([]Scenario, error) {
	all := Scenarios()
	if list == "" || list == "all" {
		return all, nil
	}
	want := map[string]bool{}
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		found := false
		for _, s := range all {
			found = found || s.Name == name
		}
		if !found {
			var names []string
			for _, s := range all {
				names = append(names, s.Name)
			}
			return nil, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(names, ", "))
		}
		want[name] = true
	}
	var out []Scenario
	for _, s := range all {
		if want[s.Name] {
			out = append(out, s)
		}
	}
	return out, nil
}

func restaurantHeader(fx *Fixture) http.Header {
	return http.Header{
		"Authorization":                   {"Bearer " + fx.restaurantToken},
		"Platform-Restaurant-External-Id": {fx.creds.Restaurant.RestaurantGUID},
	}
}

func getRequest(u string, h http.Header) RequestFunc {
	return func(ctx context.Context, _, _ int) (*http.Request, error) {
		return newRequest(ctx, http.MethodGet, u, "", nil, h)
	}
}

func newRequest(ctx context.Context, method, u, contentType string, body []byte, h http.Header) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req, nil
}

// storagePut signs every request anew, as a client does: the signature
// covers the time and the target's host.
func storagePut(fx *Fixture, base string) RequestFunc {
	s := fx.creds.Storage
	doc, err := storage.MarshalConfiguration(storage.Configuration(
		storage.ExpireAfterDays("expire-logs", "logs/", 30),
		storage.AbortIncompleteUploadsAfterDays("abort-uploads", "", 7)))
	u := base + "/" + s.Bucket + "?lifecycle="
	hash := sigv4.HashHex(doc)
	creds := sigv4.Credentials{AccessKeyID: s.KeyID, SecretAccessKey: s.Secret}
	return func(ctx context.Context, _, _ int) (*http.Request, error) {
		if err != nil {
			return nil, err
		}
		req, err := newRequest(ctx, http.MethodPut, u, "application/xml", doc, nil)
		if err != nil {
			return nil, err
		}
		header := req.Header.Clone()
		header.Set("Content-Length", strconv.Itoa(len(doc)))
		signed := sigv4.Cloud4.SignHeaders(sigv4.Request{
			Method: req.Method, Host: req.URL.Host, Path: req.URL.Path, Query: req.URL.Query(),
			Header: header, PayloadHash: hash,
		}, creds, s.Region, "s3", time.Now(), sigv4.Options{SignPayloadHash: true})
		for k, v := range signed.Header {
			req.Header[k] = v
		}
		return req, nil
	}
}
