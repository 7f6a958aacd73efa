package fax

import (
	"context"
	"errors"
	"fmt"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"time"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/faxapi"
)

// Operator is the operator's side of a fax server, beside its API: the calls
// the admin API, the sandbox API, the demo seed and the test kit make. They
// bypass API keys: the admin and sandbox APIs guard them with their own
// tokens. Server.Operator gives a server's.
type Operator Server

// Operator is the operator's side of s.
func (s *Server) Operator() *Operator { return (*Operator)(s) }

// server is the server o is the operator's side of.
func (s *Operator) server() *Server { return (*Server)(s) }

// Errors returned (wrapped) by the admin calls.
var (
	ErrNotFound      = storeerr.ErrNotFound
	ErrAlreadyExists = storeerr.ErrAlreadyExists
	// ErrInvalid is returned for input the operator must fix (a bad number,
	// a document that is not a PDF).
	ErrInvalid = storeerr.ErrInvalid
)

// The outcomes an injected inbound fax can have.
const (
	InboundReceived          = "received"
	InboundPartial           = "partial"
	InboundSenderCallDropped = "sender_call_dropped"
)

// Account is a tenant of the fax API.
type Account struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// CreateAccount creates an account; ErrAlreadyExists when the name is taken.
func (s *Operator) CreateAccount(ctx context.Context, name string) (Account, error) {
	a := account{ID: uuid.NewString(), Name: name, CreatedAt: s.server().now()}
	if err := s.store.createAccount(ctx, a); err != nil {
		return Account{}, err
	}
	return Account(a), nil
}

// AccountByName returns the named account; ErrNotFound when there is none.
func (s *Operator) AccountByName(ctx context.Context, name string) (Account, error) {
	a, err := s.store.accountByName(ctx, name)
	return Account(a), err
}

// IssueAPIKey creates an API key for the account and returns it; only its
// hash is stored.
func (s *Operator) IssueAPIKey(ctx context.Context, accountID string) (keyID, key string, err error) {
	if _, err := s.store.accountByID(ctx, accountID); err != nil {
		return "", "", err
	}
	key = newAPIKey()
	keyID = uuid.NewString()
	if err := s.store.insertAPIKey(ctx, keyID, accountID, hashKey(key), s.clock.Now()); err != nil {
		return "", "", err
	}
	return keyID, key, nil
}

// APIKeyWorks reports whether key authenticates as accountID.
func (s *Operator) APIKeyWorks(ctx context.Context, accountID, key string) bool {
	acct, _, _, err := s.store.keyByHash(ctx, hashKey(key))
	return err == nil && acct == accountID
}

// CreateOutboundVoiceProfile creates an outbound voice profile, which a fax
// application needs to send.
func (s *Operator) CreateOutboundVoiceProfile(ctx context.Context, accountID, name string) (string, error) {
	if _, err := s.store.accountByID(ctx, accountID); err != nil {
		return "", err
	}
	id := uuid.NewString()
	return id, s.store.insertVoiceProfile(ctx, id, accountID, name, s.clock.Now())
}

// Application is a fax application, as the operator sees it.
type Application struct {
	ID                     string
	AccountID              string
	Name                   string
	WebhookURL             string
	WebhookFailoverURL     string
	OutboundVoiceProfileID string
}

// CreateApplication creates a fax application for the account (as the
// public API's CreateFaxApplication does, without an API key); its URLs
// must pass the destination policy (ErrInvalid otherwise).
func (s *Operator) CreateApplication(ctx context.Context, a Application) (Application, error) {
	if err := s.server().checkStored(ctx, fieldURL{name: "webhook_url", url: &a.WebhookURL},
		fieldURL{name: "webhook_failover_url", url: &a.WebhookFailoverURL}); err != nil {
		return Application{}, err
	}
	return s.createApplication(ctx, a)
}

// createApplication creates the application a, whose URLs the stack chose
// (a tenant set's own inbox, allowed by the stack once it knows its
// addresses).
func (s *Operator) createApplication(ctx context.Context, a Application) (Application, error) {
	now := s.server().now()
	row := application{ID: uuid.NewString(), AccountID: a.AccountID, Name: a.Name, WebhookURL: a.WebhookURL,
		WebhookFailoverURL: a.WebhookFailoverURL, CreatedAt: now, UpdatedAt: now}
	if a.OutboundVoiceProfileID != "" {
		ok, err := s.store.voiceProfileExists(ctx, a.AccountID, a.OutboundVoiceProfileID)
		if err != nil {
			return Application{}, err
		}
		if !ok {
			return Application{}, fmt.Errorf("%w: outbound voice profile %q is not the account's", ErrInvalid, a.OutboundVoiceProfileID)
		}
		p := a.OutboundVoiceProfileID
		row.VoiceProfileID = &p
	}
	if err := s.store.insertApplication(ctx, row); err != nil {
		return Application{}, err
	}
	a.ID = row.ID
	return a, nil
}

// ApplicationOf returns the account's application id; ErrNotFound when it
// is missing.
func (s *Operator) ApplicationOf(ctx context.Context, accountID, id string) (Application, error) {
	a, err := s.store.application(ctx, accountID, id)
	if err != nil {
		return Application{}, err
	}
	out := Application{ID: a.ID, AccountID: a.AccountID, Name: a.Name, WebhookURL: a.WebhookURL, WebhookFailoverURL: a.WebhookFailoverURL}
	if a.VoiceProfileID != nil {
		out.OutboundVoiceProfileID = *a.VoiceProfileID
	}
	return out, nil
}

// AssignNumber gives phoneNumber (E.164) to the account and enables it on
// applicationID ("" for none). ErrAlreadyExists when another account has it.
func (s *Operator) AssignNumber(ctx context.Context, accountID, phoneNumber, applicationID string) error {
	n, ok := e164(phoneNumber)
	if !ok {
		return fmt.Errorf("%w: %q is not a valid E.164 phone number", ErrInvalid, phoneNumber)
	}
	if _, err := s.store.accountByID(ctx, accountID); err != nil {
		return err
	}
	row := number{PhoneNumber: n, AccountID: accountID}
	if applicationID != "" {
		if _, err := s.store.application(ctx, accountID, applicationID); err != nil {
			return err
		}
		row.ApplicationID = &applicationID
	}
	return s.store.upsertNumber(ctx, row)
}

// InboundFax is a fax injected as if a sender had called one of the
// account's numbers.
type InboundFax struct {
	From string
	// To must be a number enabled on a fax application.
	To string
	// Document is the PDF received.
	Document []byte
	// Outcome is InboundReceived, InboundPartial or InboundSenderCallDropped.
	Outcome string
	// CallDurationSecs is the length of the call; 0 derives one from the
	// page count.
	CallDurationSecs int
	// Account, when set, is the name of the account To must belong to (a
	// sandbox's): another account's number is ErrNotFound.
	Account string
}

// InjectInbound starts an inbound fax: it is created receiving (emitting
// fax.receiving.started) and walks media.processing -> received, or fails
// with sender_call_dropped. It returns the fax id.
func (s *Operator) InjectInbound(ctx context.Context, in InboundFax) (string, error) {
	from, ok := e164(in.From)
	if !ok {
		return "", fmt.Errorf("%w: from %q is not a valid E.164 phone number", ErrInvalid, in.From)
	}
	to, ok := e164(in.To)
	if !ok {
		return "", fmt.Errorf("%w: to %q is not a valid E.164 phone number", ErrInvalid, in.To)
	}
	switch in.Outcome {
	case InboundReceived, InboundPartial, InboundSenderCallDropped:
	default:
		return "", fmt.Errorf("%w: outcome %q is not one of received, partial, sender_call_dropped", ErrInvalid, in.Outcome)
	}
	pages, err := CountPages(in.Document)
	if err != nil {
		return "", fmt.Errorf("%w: document: %w", ErrInvalid, err)
	}
	n, err := s.store.number(ctx, to)
	if errors.Is(err, storeerr.ErrNotFound) || (err == nil && n.ApplicationID == nil) {
		return "", fmt.Errorf("%w: %s is not a number enabled on a fax application", ErrNotFound, to)
	}
	if err != nil {
		return "", err
	}
	if in.Account != "" {
		a, err := s.store.accountByID(ctx, n.AccountID)
		if err != nil {
			return "", err
		}
		if a.Name != in.Account {
			return "", fmt.Errorf("%w: %s is not a number of account %s", ErrNotFound, to, in.Account)
		}
	}
	app, err := s.store.application(ctx, n.AccountID, *n.ApplicationID)
	if err != nil {
		return "", err
	}
	now := s.server().accountNow(ctx, n.AccountID)
	duration := in.CallDurationSecs
	if duration == 0 {
		duration = callDuration(pages, 1)
	}
	f := faxRow{
		ID: uuid.NewString(), AccountID: n.AccountID, ConnectionID: app.ID, Direction: "inbound",
		From: from, To: to, Quality: string(faxapi.FaxQualityNormal), Status: string(faxapi.FaxStatusReceiving),
		WebhookURL: app.WebhookURL, WebhookFailoverURL: app.WebhookFailoverURL,
		Outcome: in.Outcome, CallDurationSecs: &duration, NextStepAt: &now, CreatedAt: now, UpdatedAt: now,
	}
	var doc []byte
	if in.Outcome != InboundSenderCallDropped {
		id := uuid.NewString()
		f.MediaID, f.PageCount, doc = &id, &pages, in.Document
	}
	ev, err := s.server().newEvent(f, eventReceivingStarted, now)
	if err != nil {
		return "", err
	}
	if err := s.store.insertFax(ctx, f, doc, []outboxEvent{ev}); err != nil {
		return "", err
	}
	s.server().wake()
	return f.ID, nil
}

// WebhookStats counts the outbox's events: waiting to be delivered,
// delivered, and abandoned after every retry.
func (s *Operator) WebhookStats(ctx context.Context) (pending, delivered, abandoned int, err error) {
	return s.store.eventStats(ctx)
}

// RotateAPIKey issues a new API key for the account and, in the same
// transaction, revokes the account's key replacedKeyID ("" revokes none):
// either both happen or neither. ErrNotFound when the account or the key to
// replace does not exist.
func (s *Operator) RotateAPIKey(ctx context.Context, accountID, replacedKeyID string) (keyID, key string, err error) {
	if _, err := s.store.accountByID(ctx, accountID); err != nil {
		return "", "", err
	}
	key = newAPIKey()
	keyID = uuid.NewString()
	if err := s.store.rotateAPIKey(ctx, accountID, keyID, hashKey(key), replacedKeyID, s.clock.Now()); err != nil {
		return "", "", err
	}
	return keyID, key, nil
}

// RevokeAPIKey deletes the account's key keyID: requests bearing it answer
// 401 from then on. ErrNotFound when the account has no such key.
func (s *Operator) RevokeAPIKey(ctx context.Context, accountID, keyID string) error {
	return s.store.deleteAPIKey(ctx, accountID, keyID)
}

// SetApplicationWebhookURL points the account's application id at
// webhookURL, which must pass the destination policy (ErrInvalid
// otherwise); events committed from then on go there.
func (s *Operator) SetApplicationWebhookURL(ctx context.Context, accountID, id, webhookURL string) error {
	if !httpURL(webhookURL) {
		return fmt.Errorf("%w: webhook URL %q is not an http(s) URL", ErrInvalid, webhookURL)
	}
	if err := s.server().checkStored(ctx, fieldURL{name: "webhook_url", url: &webhookURL}); err != nil {
		return err
	}
	return s.setApplicationWebhookURL(ctx, accountID, id, webhookURL)
}

// setApplicationWebhookURL points the application at webhookURL, which the
// stack chose (a tenant set's own inbox).
func (s *Operator) setApplicationWebhookURL(ctx context.Context, accountID, id, webhookURL string) error {
	a, err := s.store.application(ctx, accountID, id)
	if err != nil {
		return err
	}
	a.WebhookURL, a.UpdatedAt = webhookURL, s.server().now()
	return s.store.updateApplication(ctx, a)
}
