package drift

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/apistack/apistack/clients/conform"
	"github.com/apistack/apistack/clients/contract"
	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/protocol/sigv4"
)

// credentials put the target's credentials where the recording had its own.
type credentials struct {
	// apply rewrites a request of operation op: a tenant named in its path,
	// header or body, and the credentials a body carries (a key exchange, a
	// login).
	apply func(op, path string, header http.Header, body []byte) (string, http.Header, []byte)
	// send sends req, authenticated when the recorded request was.
	send func(ctx context.Context, req *http.Request, authenticated bool) (*http.Response, error)
}

var pamTeam = regexp.MustCompile(`^/v1/teams/[^/]+`)

// newCredentials reads api's section of creds, its base URL replaced by
// target, and sends through next.
func newCredentials(api contract.API, creds conform.Credentials, target string, next http.RoundTripper) (credentials, error) {
	plain := &http.Client{Transport: next, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	bearer := func(token func(context.Context) (string, error)) func(context.Context, *http.Request, bool) (*http.Response, error) {
		return func(ctx context.Context, req *http.Request, authenticated bool) (*http.Response, error) {
			if authenticated {
				tok, err := token(ctx)
				if err != nil {
					return nil, fmt.Errorf("drift: credentials: %w", err)
				}
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			return plain.Do(req)
		}
	}
	missing := fmt.Errorf("drift: the credentials file has no %s section", api)
	switch api {
	case contract.PAM:
		c := creds.PAM
		if c == nil {
			return credentials{}, missing
		}
		client, err := pam.New(pam.Config{BaseURL: target, Team: c.Team, KeyID: c.KeyID, KeySecret: c.KeySecret, Transport: next})
		if err != nil {
			return credentials{}, fmt.Errorf("drift: %w", err)
		}
		return credentials{
			apply: func(op, path string, header http.Header, body []byte) (string, http.Header, []byte) {
				path = pamTeam.ReplaceAllLiteralString(path, "/v1/teams/"+url.PathEscape(c.Team))
				if op == "IssueServiceToken" {
					body = setJSON(body, map[string]string{"key_id": c.KeyID, "key_secret": c.KeySecret})
				}
				return path, header, body
			},
			send: bearer(client.Token),
		}, nil
	case contract.Fax:
		c := creds.Fax
		if c == nil {
			return credentials{}, missing
		}
		return credentials{
			apply: func(op, path string, header http.Header, body []byte) (string, http.Header, []byte) {
				fields := map[string]string{"connection_id": c.ConnectionID, "from": c.From}
				if strings.HasPrefix(header.Get("Content-Type"), "application/x-www-form-urlencoded") {
					return path, header, setForm(body, fields)
				}
				return path, header, setJSON(body, fields)
			},
			send: bearer(func(context.Context) (string, error) { return c.APIKey, nil }),
		}, nil
	case contract.Restaurant:
		c := creds.Restaurant
		if c == nil {
			return credentials{}, missing
		}
		client, err := restaurant.New(restaurant.Config{BaseURL: target, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
			Restaurant: c.RestaurantGUID, Transport: next})
		if err != nil {
			return credentials{}, fmt.Errorf("drift: %w", err)
		}
		return credentials{
			apply: func(op, path string, header http.Header, body []byte) (string, http.Header, []byte) {
				if header.Get("Platform-Restaurant-External-ID") != "" {
					header.Set("Platform-Restaurant-External-ID", c.RestaurantGUID)
				}
				if op == "Login" {
					body = setJSON(body, map[string]string{"clientId": c.ClientID, "clientSecret": c.ClientSecret})
				}
				return path, header, body
			},
			send: bearer(client.Token),
		}, nil
	case contract.Storage:
		c := creds.Storage
		if c == nil {
			return credentials{}, missing
		}
		signer := &storage.Signer{Scheme: sigv4.Cloud4, Credentials: sigv4.Credentials{AccessKeyID: c.KeyID, SecretAccessKey: c.Secret},
			Region: c.Region, Service: storage.Service, Next: next}
		return credentials{
			apply: func(op, path string, header http.Header, body []byte) (string, http.Header, []byte) {
				for _, h := range []string{"X-Cloud-Date", "X-Cloud-Content-Sha256", "X-Amz-Date", "X-Amz-Content-Sha256"} {
					header.Del(h)
				}
				if rest, ok := strings.CutPrefix(path, "/"); ok && rest != "" {
					_, tail, hasTail := strings.Cut(rest, "/")
					path = "/" + url.PathEscape(c.Bucket)
					if hasTail {
						path += "/" + tail
					}
				}
				return path, header, body
			},
			send: func(ctx context.Context, req *http.Request, authenticated bool) (*http.Response, error) {
				if authenticated {
					return signer.RoundTrip(req)
				}
				return plain.Do(req)
			},
		}, nil
	}
	return credentials{}, errors.New("drift: replays the pam, fax, storage and restaurant APIs")
}

// setJSON sets the members of a JSON object body that it has among fields.
func setJSON(body []byte, fields map[string]string) []byte {
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil {
		return body
	}
	changed := false
	for k, v := range fields {
		if _, ok := doc[k]; ok && v != "" {
			doc[k] = v
			changed = true
		}
	}
	return remarshal(body, doc, changed)
}

// setForm sets the fields of a form body that it has among fields.
func setForm(body []byte, fields map[string]string) []byte {
	q, err := url.ParseQuery(string(body))
	if err != nil {
		return body
	}
	for k, v := range fields {
		if q.Has(k) && v != "" {
			q.Set(k, v)
		}
	}
	return []byte(q.Encode())
}

// remarshal is doc as JSON when changed, else (or when doc does not
// marshal) body as it was.
func remarshal(body []byte, doc any, changed bool) []byte {
	if !changed {
		return body
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}
