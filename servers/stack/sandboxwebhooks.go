package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/sandbox"
)

// faxWebhooks is the sandbox API's view of the fax API's webhook log. The
// fax server is built after the sandbox API (whose journal it writes to),
// so it is looked up at each call.
type faxWebhooks struct{ st *Stack }

var _ sandbox.Webhooks = faxWebhooks{}

func (w faxWebhooks) WebhookAttempts(ctx context.Context, account string, after int64, limit int) ([]fax.LogAttempt, error) {
	return w.st.Fax.Operator().WebhookAttempts(ctx, account, after, limit)
}

func (w faxWebhooks) PendingWebhookEvents(ctx context.Context, account string, limit int) ([]fax.LogEvent, error) {
	return w.st.Fax.Operator().PendingWebhookEvents(ctx, account, limit)
}

func (w faxWebhooks) RedeliverEventOf(ctx context.Context, account, eventID string) (fax.LogEvent, error) {
	return w.st.Fax.Operator().RedeliverEventOf(ctx, account, eventID)
}

func (w faxWebhooks) AttemptRecorded() <-chan struct{} { return w.st.Fax.Operator().AttemptRecorded() }

// sandboxInbox is the default webhook receiver of every sandbox's fax
// application, POST /sandboxes/{id}/inbox: a receiver like any other, built
// on the shared webhook receiver (protocol/faxwebhook), verifying each delivery's signature and
// timestamp (on the stack's clock, which signs them) before it answers 204.
// The deliveries themselves are in the sandbox's webhook log (the fax
// server records each attempt and its answer). A sandbox that is gone
// answers a delivery signed by this stack 404; an unsigned request is
// answered alike whether the sandbox exists or not.
func (st *Stack) sandboxInbox() (func(id string, w http.ResponseWriter, r *http.Request), error) {
	now := time.Now
	if st.cfg.Clock != nil {
		now = st.cfg.Clock.Now
	}
	receive, err := faxwebhook.NewHandler(st.Fax.Operator().WebhookPublicKey(), func(context.Context, faxwebhook.Event) error { return nil },
		faxwebhook.WithClock(now))
	if err != nil {
		return nil, err
	}
	return func(id string, w http.ResponseWriter, r *http.Request) {
		ok, err := st.Sandboxes.TakesDeliveries(r.Context(), id)
		if err != nil {
			st.logger.ErrorContext(r.Context(), "sandbox inbox: look the sandbox up", "sandbox", id, "err", err)
			inboxError(w, http.StatusInternalServerError, "the sandbox could not be looked up; retry later")
			return
		}
		if ok {
			receive.ServeHTTP(w, r)
			return
		}
		// No such sandbox: a delivery this stack signed learns so (the fax
		// server stops retrying it); anything else is answered as the
		// receiver answers it for a sandbox that exists, so that an
		// unsigned request learns nothing of which sandboxes exist.
		held := &heldResponse{header: http.Header{}}
		receive.ServeHTTP(held, r)
		if held.status/100 == 2 {
			inboxError(w, http.StatusNotFound, "no sandbox "+id)
			return
		}
		for name, values := range held.header {
			w.Header()[name] = values
		}
		w.WriteHeader(held.status)
		_, _ = w.Write(held.body.Bytes())
	}, nil
}

// heldResponse keeps a handler's answer instead of sending it.
type heldResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header { return h.header }

func (h *heldResponse) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldResponse) Write(p []byte) (int, error) {
	h.WriteHeader(http.StatusOK)
	return h.body.Write(p)
}

func inboxError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// inboxID returns the sandbox id of an inbox path, or false.
func inboxID(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, SandboxesPath+"/")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, "/inbox")
	if !ok || !strings.HasPrefix(id, sandbox.IDPrefix) || strings.Contains(id, "/") {
		return "", false
	}
	return id, sandbox.InboxPathOf(id) == path
}
