// Package faxenv starts a fax server in-process on loopback, with an
// account, an application and a document server, for the fax client's
// end-to-end tests and the server its runnable examples call
// (e2e/exampleserver).
package faxenv

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	faxserver "github.com/apistack/apistack/servers/fax"
)

// Service is a fax server running in-process on loopback, with an account,
// an application sending from From, and a document server.
type Service struct {
	// URL is the API; APIKey the account's key; ConnectionID the
	// application's id; From its number; DocURL a one-page PDF to send.
	URL, APIKey, ConnectionID, From, DocURL string
	// Server is the server itself.
	Server *faxserver.Server
	stop   func()
}

// Stop shuts the server down and removes its data.
func (s *Service) Stop() { s.stop() }

// onePagePDF is a minimal valid PDF of one page.
func onePagePDF() []byte {
	var b bytes.Buffer
	var offsets []int
	b.WriteString("%PDF-1.4\n")
	for i, o := range []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> >>",
	} {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 4\n0000000000 65535 f \n")
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}

// Start starts a fax service whose webhooks go to webhookURL.
func Start(webhookURL string) (*Service, error) {
	ctx, cancel := context.WithCancel(context.Background())
	dir, err := os.MkdirTemp("", "faxclient")
	if err != nil {
		cancel()
		return nil, err
	}
	db, err := faxserver.OpenDB(ctx, filepath.Join(dir, "fax.db"))
	if err != nil {
		cancel()
		return nil, err
	}
	masterKey, err := faxserver.LoadOrCreateMasterKey(filepath.Join(dir, "fax-master.key"))
	if err != nil {
		cancel()
		return nil, err
	}
	srv, err := faxserver.New(ctx, faxserver.Config{Deps: faxserver.Deps{DB: db, Logger: slog.New(slog.DiscardHandler), ValidateResponses: true}, MasterKey: masterKey, Settings: faxserver.Settings{WebhookBackoff: 10 * time.Millisecond, WebhookMaxBackoff: 50 * time.Millisecond, Destinations: faxserver.DestinationOptions{AllowPrivate: true}}}) // documents and webhooks on loopback
	if err != nil {
		cancel()
		return nil, err
	}
	h, err := srv.Handler()
	if err != nil {
		cancel()
		return nil, err
	}
	api := httptest.NewServer(h)
	srv.SetBaseURL(api.URL)
	pdf := onePagePDF()
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(pdf)
	}))
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Run(ctx) }()
	s := &Service{URL: api.URL, From: "+13125550100", DocURL: docs.URL + "/doc.pdf", Server: srv, stop: func() {
		cancel()
		<-done
		api.Close()
		docs.Close()
		_ = db.Close()
		_ = os.RemoveAll(dir)
	}}
	acct, err := srv.Operator().CreateAccount(ctx, "acme")
	if err == nil {
		_, s.APIKey, err = srv.Operator().IssueAPIKey(ctx, acct.ID)
	}
	var profile string
	if err == nil {
		profile, err = srv.Operator().CreateOutboundVoiceProfile(ctx, acct.ID, "default")
	}
	var app faxserver.Application
	if err == nil {
		app, err = srv.Operator().CreateApplication(ctx, faxserver.Application{AccountID: acct.ID, Name: "main", WebhookURL: webhookURL, OutboundVoiceProfileID: profile})
	}
	if err == nil {
		s.ConnectionID = app.ID
		err = srv.Operator().AssignNumber(ctx, acct.ID, s.From, app.ID)
	}
	if err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}
