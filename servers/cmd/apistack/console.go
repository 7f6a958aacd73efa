package main

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/apistack/apistack/servers/console"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/sandbox"
	"github.com/apistack/apistack/servers/stack"
	"github.com/apistack/apistack/servers/storage"
)

// consoleServers are the servers the web console shows.
type consoleServers struct {
	pam        *pam.Server
	restaurant *restaurant.Server
	fax        *fax.Server
	storage    *storage.Server
	sandboxes  *sandbox.Server
}

// newConsole builds the web console of the admin port: behind the admin
// token, showing the servers, the request log and the demo webhook inbox.
func newConsole(adminToken string, s consoleServers, requests *requestlog.Log, inbox *stack.FaxInbox, logger *slog.Logger) (*console.Console, error) {
	var sandboxes console.Sandboxes
	if s.sandboxes != nil {
		sandboxes = s.sandboxes.Console()
	}
	return console.New(console.Config{
		AdminToken: adminToken, Fax: s.fax.Console(), PAM: s.pam.Console(), Restaurant: s.restaurant.Console(), Storage: s.storage.Console(),
		Sandboxes: sandboxes,
		Requests:  requests, Logger: logger,
		Inbox: func() []console.InboxEvent {
			events := inbox.List()
			out := make([]console.InboxEvent, len(events))
			for i, e := range events {
				out[i] = console.InboxEvent{ID: e.ID, Type: e.EventType, FaxID: e.FaxID, Attempt: e.Attempt, ReceivedAt: e.ReceivedAt}
			}
			return out
		},
	})
}

// withConsole serves the console under console.Prefix (and /console without
// the slash) beside next.
func withConsole(next http.Handler, con *console.Console) http.Handler {
	ch := con.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == strings.TrimSuffix(console.Prefix, "/"):
			http.Redirect(w, r, console.Prefix, http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, console.Prefix):
			ch.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// docsURLs maps each API to its Swagger UI.
func docsURLs(urls map[string]string) map[string]string {
	out := make(map[string]string, len(urls))
	for api, u := range urls {
		out[api] = u + "/docs/"
	}
	return out
}
