// Package examplestack starts the server a client's runnable examples call,
// in a process of its own: `go run` of e2e/exampleserver,
// from this module's source. So no server package is compiled into a client
// package's tests, and `go mod tidy` in a module that imports a client (tidy
// records the modules of the imported packages' test imports too) records
// no server-side module. It imports the standard library only.
package examplestack

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// Env is what an example needs of the server it calls; each API fills its
// own fields.
type Env struct {
	// URL is the API's base URL.
	URL string `json:"url"`
	// KeyID and KeySecret are a PAM service user's key (pam_admin, team
	// "demo"), or the storage access key.
	KeyID     string `json:"key_id,omitempty"`
	KeySecret string `json:"key_secret,omitempty"`
	// ClientID, ClientSecret and Restaurant are a restaurant API client's
	// credentials and the restaurant it is granted.
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	Restaurant   string `json:"restaurant,omitempty"`
	// Region, Bucket and VersionedBucket are the storage region and buckets.
	Region          string `json:"region,omitempty"`
	Bucket          string `json:"bucket,omitempty"`
	VersionedBucket string `json:"versioned_bucket,omitempty"`
	// APIKey, ConnectionID, From and DocURL are a fax account's key, its
	// application, the number it sends from and a one-page PDF to send;
	// WebhookPublicKey verifies the server's webhook signatures.
	APIKey           string `json:"api_key,omitempty"`
	ConnectionID     string `json:"connection_id,omitempty"`
	From             string `json:"from,omitempty"`
	DocURL           string `json:"doc_url,omitempty"`
	WebhookPublicKey []byte `json:"webhook_public_key,omitempty"`

	cmd   *exec.Cmd
	stdin io.Closer
	once  sync.Once
}

// moduleRoot is the directory of this module's go.mod (this file is
// internal/examplestack/examplestack.go).
func moduleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("examplestack: cannot locate the module")
	}
	return filepath.Join(filepath.Dir(file), "..", ".."), nil
}

// Start runs the example server of api ("pam", "fax", "storage",
// "restaurant") with args (fax: the webhook URL) and returns once it serves.
// Stop ends it. The go command caches the built server, so only the first
// Start of a build compiles it.
func Start(api string, args ...string) (*Env, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	runArgs := []string{"run"}
	if raceEnabled {
		runArgs = append(runArgs, "-race") // the test's own build cache already holds the packages so built
	}
	runArgs = append(runArgs, "./e2e/exampleserver", api)
	cmd := exec.Command("go", append(runArgs, args...)...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("examplestack: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("examplestack: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("examplestack: start %s server: %w", api, err)
	}
	env := &Env{cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, env)
	}
	if err != nil {
		env.Stop()
		return nil, fmt.Errorf("examplestack: the %s server did not start: %w", api, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return env, nil
}

// Stop ends the server (it stops when its standard input closes, and
// removes its data) and waits for it.
func (e *Env) Stop() {
	e.once.Do(func() {
		_ = e.stdin.Close()
		_ = e.cmd.Wait()
	})
}

// LateHandler lets an HTTP server exist before its handler does (a webhook
// receiver whose URL the server it verifies must know first): it answers
// 503 until Set is called.
type LateHandler struct {
	mu sync.Mutex
	h  http.Handler
}

// Set installs h.
func (l *LateHandler) Set(h http.Handler) { l.mu.Lock(); l.h = h; l.mu.Unlock() }

// ServeHTTP implements http.Handler.
func (l *LateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	h := l.h
	l.mu.Unlock()
	if h == nil {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}
