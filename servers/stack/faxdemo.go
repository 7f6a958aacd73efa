package stack

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/apistack/apistack/protocol/faxwebhook"
	"github.com/apistack/apistack/servers/fax"
)

// The demo routes of the admin port (specs/admin/openapi.yaml, tag fax): a
// sample document to fax and a webhook inbox, so the demo works offline.
const (
	// FaxSamplePath serves a sample PDF of FaxSamplePages pages.
	FaxSamplePath = fax.SamplePath
	// FaxInboxPath takes webhook deliveries (POST) and lists them (GET,
	// admin token).
	FaxInboxPath = fax.InboxPath
	// FaxInboxEvents is how many deliveries the inbox keeps.
	FaxInboxEvents = 100
	// FaxSamplePages is the sample document's page count.
	FaxSamplePages = 2
)

// InboxEvent is one verified delivery, as GET /fax/webhook_inbox lists it.
type InboxEvent struct {
	ID         string          `json:"id"`
	EventType  string          `json:"event_type"`
	FaxID      string          `json:"fax_id"`
	Attempt    int             `json:"attempt"`
	ReceivedAt time.Time       `json:"received_at"`
	Body       json.RawMessage `json:"body"`
}

// FaxInbox keeps the last FaxInboxEvents verified deliveries in memory.
type FaxInbox struct {
	mu     sync.Mutex
	events []InboxEvent
}

// Add records e, dropping the oldest event beyond FaxInboxEvents.
func (in *FaxInbox) Add(e InboxEvent) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.events = append(in.events, e)
	if over := len(in.events) - FaxInboxEvents; over > 0 {
		in.events = append([]InboxEvent(nil), in.events[over:]...)
	}
}

// List returns the events kept, oldest first.
func (in *FaxInbox) List() []InboxEvent {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]InboxEvent{}, in.events...)
}

// withFaxDemoRoutes serves the sample PDF and the webhook inbox beside the
// admin API. The inbox is a receiver like any other, built on the webhook
// receiver the fax clients use too (protocol/faxwebhook), so it verifies and
// decodes deliveries exactly as a user's service does.
func withFaxDemoRoutes(adminHandler http.Handler, fs *fax.Server, inbox *FaxInbox, adminToken string, logger *slog.Logger) (http.Handler, error) {
	pdf, err := samplePDF()
	if err != nil {
		return nil, err
	}
	receive, err := faxwebhook.NewHandler(fs.Operator().WebhookPublicKey(), func(ctx context.Context, e faxwebhook.Event) error {
		inbox.Add(InboxEvent{ID: e.ID, EventType: e.Type, FaxID: e.FaxID, Attempt: e.Attempt, ReceivedAt: time.Now().UTC(), Body: e.Raw})
		logger.InfoContext(ctx, "fax webhook received", "event_type", e.Type, "fax_id", e.FaxID, "attempt", e.Attempt)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fax webhook inbox: %w", err)
	}
	tokenHash := sha256.Sum256([]byte(adminToken))
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+FaxSamplePath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(pdf)
	})
	mux.Handle("POST "+FaxInboxPath, receive)
	mux.HandleFunc("GET "+FaxInboxPath, func(w http.ResponseWriter, r *http.Request) {
		// The events carry signed media links: the list needs the admin token.
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(token))
		w.Header().Set("Content-Type", "application/json")
		if subtle.ConstantTimeCompare(sum[:], tokenHash[:]) != 1 {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"code": http.StatusUnauthorized, "error": "unauthorized", "message": "an Authorization: Bearer <admin token> header is required"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"events": inbox.List()})
	})
	mux.Handle("/", adminHandler)
	return mux, nil
}

// samplePDF is the sample document, made once per process.
var samplePDF = sync.OnceValues(func() ([]byte, error) { return fax.SamplePDF(FaxSamplePages) })
