package benchhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// credentials is the part of <data-dir>/demo-credentials.json the harness
// reads (the file's keys are a documented contract).
type credentials struct {
	PAM struct {
		BaseURL   string `json:"base_url"`
		Team      string `json:"team"`
		KeyID     string `json:"key_id"`
		KeySecret string `json:"key_secret"`
	} `json:"pam"`
	Fax struct {
		BaseURL      string `json:"base_url"`
		APIKey       string `json:"api_key"`
		ConnectionID string `json:"connection_id"`
		From         string `json:"from"`
	} `json:"fax"`
	Storage struct {
		Endpoint string `json:"endpoint"`
		Region   string `json:"region"`
		KeyID    string `json:"key_id"`
		Secret   string `json:"secret"`
		Bucket   string `json:"bucket"`
	} `json:"storage"`
	Restaurant struct {
		BaseURL        string `json:"base_url"`
		ClientID       string `json:"client_id"`
		ClientSecret   string `json:"client_secret"`
		RestaurantGUID string `json:"restaurant_guid"`
	} `json:"restaurant"`
	Admin struct {
		BaseURL string `json:"base_url"`
		Token   string `json:"token"`
	} `json:"admin"`
}

// baseURL returns the base URL of api ("pam", "fax", "storage", "restaurant").
func (c credentials) baseURL(api string) string {
	switch api {
	case "pam":
		return c.PAM.BaseURL
	case "fax":
		return c.Fax.BaseURL
	case "storage":
		return c.Storage.Endpoint
	case "restaurant":
		return c.Restaurant.BaseURL
	}
	return ""
}

// Fixture is what the scenarios' requests need from one apistack instance:
// its credentials and the data loaded into it.
type Fixture struct {
	creds credentials
	// pamToken is a bearer token of the demo service user (pam_admin).
	pamToken string
	// restaurantToken is an access token of the demo restaurant client.
	restaurantToken string
	// menuItemGUID is one of the demo restaurant's menu items.
	menuItemGUID string
	// mediaURL is the two-page PDF the admin port serves for the fax demo.
	mediaURL string
}

// buildAPIStack builds the real binary into dir.
func buildAPIStack(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "apistack")
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./servers/cmd/apistack")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./servers/cmd/apistack: %w\n%s", err, out)
	}
	return bin, nil
}

// The markers of the apistack log lines the report counts: an error, and a
// response --validate-responses found breaking the spec.
const (
	logError     = "level=ERROR"
	logViolation = "response breaks the spec"
)

// instance is one running `apistack serve --demo`.
type instance struct {
	name    string
	proc    *child
	fixture *Fixture
}

// limitsOff raises the rate limits out of a benchmark's way: it measures the
// servers, not the limiters refusing it.
var limitsOff = []string{
	"--pam-rate-limit", "1000000000",
	"--restaurant-rate-per-second", "1000000000",
	"--restaurant-rate-limit", "1000000000",
	"--fax-rate-limit", "1000000000",
}

// startAPIStack starts bin on a fresh data directory with every API on a free
// port, waits for its demo credentials and every API's /healthz, and loads the
// benchmark's data.
func startAPIStack(ctx context.Context, name, bin, dataDir string, extra []string) (*instance, error) {
	args := []string{"serve", "--demo", "--data-dir", dataDir,
		"--pam-addr", "127.0.0.1:0", "--fax-addr", "127.0.0.1:0", "--storage-addr", "127.0.0.1:0",
		"--restaurant-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"}
	args = append(append(args, limitsOff...), extra...)
	cmd := exec.Command(bin, args...)
	// The environment's APISTACK_* variables must not change what is measured.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "APISTACK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	proc, _, err := startChild(name, cmd, false, logError, logViolation)
	if err != nil {
		return nil, err
	}
	inst := &instance{name: name, proc: proc}
	fail := func(err error) (*instance, error) {
		proc.stop(5 * time.Second)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	creds, err := waitCredentials(ctx, proc, filepath.Join(dataDir, "demo-credentials.json"), 2*time.Minute)
	if err != nil {
		return fail(err)
	}
	for _, base := range []string{creds.PAM.BaseURL, creds.Fax.BaseURL, creds.Storage.Endpoint, creds.Restaurant.BaseURL, creds.Admin.BaseURL} {
		if base == "" {
			return fail(errors.New("demo-credentials.json lacks a base URL"))
		}
		if err := waitHealthy(ctx, proc, base+"/healthz", time.Minute); err != nil {
			return fail(err)
		}
	}
	inst.fixture, err = loadFixture(ctx, creds)
	if err != nil {
		return fail(err)
	}
	return inst, nil
}

// waitCredentials polls for the credentials file until it parses whole.
func waitCredentials(ctx context.Context, proc *child, path string, timeout time.Duration) (credentials, error) {
	deadline := time.Now().Add(timeout)
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			var c credentials
			if json.Unmarshal(data, &c) == nil && c.Admin.BaseURL != "" {
				return c, nil
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return credentials{}, fmt.Errorf("reading %s: %w", path, err)
		}
		if proc.exited() {
			return credentials{}, proc.failure()
		}
		if time.Now().After(deadline) {
			return credentials{}, fmt.Errorf("no %s within %s; output:\n%s", path, timeout, proc.out)
		}
		select {
		case <-ctx.Done():
			return credentials{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitHealthy polls url until it answers 200.
func waitHealthy(ctx context.Context, proc *child, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		status, _, err := call(ctx, http.MethodGet, url, nil, nil)
		if err == nil && status == http.StatusOK {
			return nil
		}
		if proc.exited() {
			return proc.failure()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not healthy within %s (status %d, %v)", url, timeout, status, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// call sends one request for the set-up and returns its status and body.
func call(ctx context.Context, method, url string, header http.Header, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: reading the answer: %w", method, url, err)
	}
	return resp.StatusCode, data, nil
}

// callJSON sends a JSON request, requires the status want and decodes the
// answer into out (when not nil).
func callJSON(ctx context.Context, method, url string, header http.Header, in, out any, want int) error {
	var body []byte
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
		h.Set("Content-Type", "application/json")
	}
	status, data, err := call(ctx, method, url, h, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	if status != want {
		return fmt.Errorf("%s %s: answered %d, want %d: %s", method, url, status, want, snippet(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decoding the answer: %w", method, url, err)
		}
	}
	return nil
}

// snippet shortens a body for an error message.
func snippet(b []byte) string {
	const n = 300
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// benchGroups is how many groups the PAM demo team holds for the list scenario.
const benchGroups = 100

// loadFixture logs in to the APIs and loads the benchmark's data: the PAM
// demo team is filled up to 100 groups through the public API (its service
// user is pam_admin), and a menu item of the demo restaurant (which --demo
// fills with 500) is picked for the single get.
func loadFixture(ctx context.Context, creds credentials) (*Fixture, error) {
	fx := &Fixture{creds: creds, mediaURL: creds.Admin.BaseURL + "/fax/sample.pdf"}

	pam := creds.PAM
	var tok struct {
		BearerToken string `json:"bearer_token"`
	}
	if err := callJSON(ctx, http.MethodPost, pam.BaseURL+"/v1/teams/"+pam.Team+"/service_token", nil,
		map[string]string{"key_id": pam.KeyID, "key_secret": pam.KeySecret}, &tok, http.StatusOK); err != nil {
		return nil, fmt.Errorf("pam token: %w", err)
	}
	fx.pamToken = tok.BearerToken
	auth := http.Header{"Authorization": {"Bearer " + fx.pamToken}}
	groupsURL := pam.BaseURL + "/v1/teams/" + pam.Team + "/groups"
	var list struct {
		List []struct {
			Name string `json:"name"`
		} `json:"list"`
	}
	if err := callJSON(ctx, http.MethodGet, groupsURL+"?count=1000", auth, nil, &list, http.StatusOK); err != nil {
		return nil, fmt.Errorf("pam groups: %w", err)
	}
	roles := [][]string{{"end_user"}, {"resource_admin"}, {"security_admin", "end_user"}, {"delegated_resource_admin"}}
	for i := len(list.List); i < benchGroups; i++ {
		group := map[string]any{"name": fmt.Sprintf("bench-team-%03d", i), "roles": roles[i%len(roles)]}
		if err := callJSON(ctx, http.MethodPost, groupsURL, auth, group, nil, http.StatusCreated); err != nil {
			return nil, fmt.Errorf("pam create group: %w", err)
		}
	}
	if err := callJSON(ctx, http.MethodGet, groupsURL, auth, nil, &list, http.StatusOK); err != nil {
		return nil, fmt.Errorf("pam groups: %w", err)
	}
	if len(list.List) != benchGroups {
		return nil, fmt.Errorf("pam: GET %s answers %d groups, want %d", groupsURL, len(list.List), benchGroups)
	}

	r := creds.Restaurant
	var login struct {
		Token struct {
			AccessToken string `json:"accessToken"`
		} `json:"token"`
	}
	if err := callJSON(ctx, http.MethodPost, r.BaseURL+"/authentication/v1/authentication/login", nil,
		map[string]string{"clientId": r.ClientID, "clientSecret": r.ClientSecret, "userAccessType": "PLATFORM_MACHINE_CLIENT"},
		&login, http.StatusOK); err != nil {
		return nil, fmt.Errorf("restaurant login: %w", err)
	}
	fx.restaurantToken = login.Token.AccessToken
	var items []struct {
		GUID string `json:"guid"`
	}
	rh := http.Header{"Authorization": {"Bearer " + fx.restaurantToken}, "Platform-Restaurant-External-Id": {r.RestaurantGUID}}
	if err := callJSON(ctx, http.MethodGet, r.BaseURL+"/config/v2/menuItems?pageSize=100", rh, nil, &items, http.StatusOK); err != nil {
		return nil, fmt.Errorf("restaurant menu items: %w", err)
	}
	if len(items) != 100 {
		return nil, fmt.Errorf("restaurant: the demo restaurant lists %d menu items on a page of 100, want 100", len(items))
	}
	fx.menuItemGUID = items[len(items)/2].GUID

	// The fax account's list has a full page of faxes, delivered before
	// anything is measured, so the list is read while nothing changes.
	fax := creds.Fax
	fh := http.Header{"Authorization": {"Bearer " + fax.APIKey}}
	form := url.Values{"connection_id": {fax.ConnectionID}, "to": {"+13125550800"}, "from": {fax.From}, "media_url": {fx.mediaURL}}
	for range benchFaxes {
		code, body, err := call(ctx, http.MethodPost, fax.BaseURL+"/v2/faxes",
			http.Header{"Authorization": fh["Authorization"], "Content-Type": {"application/x-www-form-urlencoded"}}, []byte(form.Encode()))
		if err != nil || code != http.StatusAccepted {
			return nil, fmt.Errorf("fax send: %d %s: %v", code, snippet(body), err)
		}
	}
	for {
		var page struct {
			Data []struct {
				Status string `json:"status"`
			} `json:"data"`
		}
		if err := callJSON(ctx, http.MethodGet, fax.BaseURL+"/v2/faxes?page[size]="+strconv.Itoa(benchFaxes), fh, nil, &page, http.StatusOK); err != nil {
			return nil, fmt.Errorf("fax list: %w", err)
		}
		final := 0
		for _, f := range page.Data {
			if f.Status == "delivered" || f.Status == "failed" {
				final++
			}
		}
		if len(page.Data) == benchFaxes && final == benchFaxes {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("fax: waiting for %d faxes to be delivered: %w", benchFaxes, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fx, nil
}

// benchFaxes is how many faxes the fax list scenario lists: one page.
const benchFaxes = 20
