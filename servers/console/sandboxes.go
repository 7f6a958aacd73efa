package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/sandbox"
)

// The sandbox page's bounds.
const (
	journalShown  = 100
	attemptsShown = 50
)

// sandboxesView is the Sandboxes page: every sandbox.
type sandboxesView struct {
	Running   bool
	Now       time.Time
	Sandboxes []sandbox.ConsoleSandbox
}

func (c *Console) sandboxesPage(w http.ResponseWriter, r *http.Request, s *session) error {
	v := sandboxesView{Running: c.cfg.Sandboxes != nil, Now: c.cfg.Now()}
	if v.Running {
		var err error
		if v.Sandboxes, err = c.cfg.Sandboxes.Sandboxes(r.Context()); err != nil {
			return err
		}
	}
	return c.render(w, "sandboxes", http.StatusOK, view{Title: "Sandboxes", Nav: "sandboxes", CSRF: s.csrf, Data: v})
}

// sandboxView is one sandbox's page: its journal (filtered), webhook log
// and snapshots.
type sandboxView struct {
	Now       time.Time
	Sandbox   sandbox.ConsoleSandbox
	APIs      []string
	API       string
	Operation string
	StatusArg string
	Limit     int
	Journal   []sandboxapi.JournalEntry
	Webhooks  sandbox.ConsoleWebhooks
	Snapshots []sandboxapi.Snapshot
	CSRF      string
	// Notice says what the last action did (a redirect's ?done=).
	Notice string
}

// journalAPIs are the APIs a sandbox's journal holds.
var journalAPIs = []string{"pam", "fax", "storage", "restaurant"}

func (c *Console) sandboxPage(w http.ResponseWriter, r *http.Request, s *session) error {
	if c.cfg.Sandboxes == nil {
		http.Error(w, "the sandbox API is not running", http.StatusNotFound)
		return nil
	}
	ctx := r.Context()
	id := r.PathValue("id")
	sb, err := c.cfg.Sandboxes.Sandbox(ctx, id)
	if errors.Is(err, sandbox.ErrNoSuchSandbox) {
		http.Error(w, "no sandbox "+id+" (deleted, expired, or never made)", http.StatusNotFound)
		return nil
	}
	if err != nil {
		return err
	}
	q := r.URL.Query()
	v := sandboxView{Now: c.cfg.Now(), Sandbox: sb, APIs: journalAPIs, API: q.Get("api"), Operation: strings.TrimSpace(q.Get("operation")),
		StatusArg: strings.TrimSpace(q.Get("status")), Limit: journalShown, CSRF: s.csrf, Notice: q.Get("done")}
	f := sandbox.JournalFilter{API: v.API, Operation: v.Operation, Limit: journalShown}
	if v.API != "" && !slices.Contains(journalAPIs, v.API) {
		http.Error(w, fmt.Sprintf("api %q is none of %s", v.API, strings.Join(journalAPIs, ", ")), http.StatusBadRequest)
		return nil
	}
	if v.StatusArg != "" {
		status, ok := parseStatusFilter(v.StatusArg)
		if !ok {
			http.Error(w, fmt.Sprintf("status %q is neither a status (404) nor a class (4xx)", v.StatusArg), http.StatusBadRequest)
			return nil
		}
		f.Status = status
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			http.Error(w, "limit must be a number from 1 to 1000", http.StatusBadRequest)
			return nil
		}
		v.Limit, f.Limit = n, n
	}
	if v.Journal, err = c.cfg.Sandboxes.Journal(ctx, id, f); err != nil {
		return err
	}
	if v.Webhooks, err = c.cfg.Sandboxes.Webhooks(ctx, id, attemptsShown); err != nil {
		return err
	}
	for i, a := range v.Webhooks.Attempts {
		v.Webhooks.Attempts[i].Target = withoutQuery(a.Target)
	}
	if v.Snapshots, err = c.cfg.Sandboxes.Snapshots(ctx, id); err != nil {
		return err
	}
	return c.render(w, "sandbox", http.StatusOK, view{Title: "Sandbox " + id, Nav: "sandboxes", CSRF: s.csrf, Data: v})
}

// parseStatusFilter reads "404" (one status) or "4xx" (a class, as 4).
func parseStatusFilter(s string) (int, bool) {
	if len(s) == 3 && strings.EqualFold(s[1:], "xx") && s[0] >= '1' && s[0] <= '5' {
		return int(s[0] - '0'), true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 100 && n <= 599
}

// withoutQuery drops a URL's query, which may carry a receiver's secret.
func withoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// sandboxAction answers an action's outcome: back to the sandbox's page
// with what happened, or the API's refusal with its status.
func (c *Console) sandboxAction(w http.ResponseWriter, r *http.Request, id, done string, err error) error {
	var ce *sandbox.ConsoleError
	if errors.As(err, &ce) {
		http.Error(w, ce.Message, ce.Status)
		return nil
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, Prefix+"sandboxes/"+url.PathEscape(id)+"?done="+url.QueryEscape(done), http.StatusSeeOther)
	return nil
}

func (c *Console) sandboxRedeliver(w http.ResponseWriter, r *http.Request, _ *session) error {
	if c.cfg.Sandboxes == nil {
		http.Error(w, "the sandbox API is not running", http.StatusNotFound)
		return nil
	}
	id, event := r.PathValue("id"), r.PostForm.Get("event")
	err := c.cfg.Sandboxes.Redeliver(r.Context(), id, event)
	return c.sandboxAction(w, r, id, "redelivered event "+event, err)
}

func (c *Console) sandboxSnapshot(w http.ResponseWriter, r *http.Request, _ *session) error {
	if c.cfg.Sandboxes == nil {
		http.Error(w, "the sandbox API is not running", http.StatusNotFound)
		return nil
	}
	id := r.PathValue("id")
	snap, err := c.cfg.Sandboxes.Snapshot(r.Context(), id)
	return c.sandboxAction(w, r, id, "snapshot "+snap+" made", err)
}

func (c *Console) sandboxFork(w http.ResponseWriter, r *http.Request, _ *session) error {
	if c.cfg.Sandboxes == nil {
		http.Error(w, "the sandbox API is not running", http.StatusNotFound)
		return nil
	}
	snap := r.PostForm.Get("snapshot")
	id, err := c.cfg.Sandboxes.Fork(r.Context(), snap)
	return c.sandboxAction(w, r, id, "forked from snapshot "+snap, err)
}
