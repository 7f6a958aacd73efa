// Package fax is the fax API server: it implements the strict server
// interface generated from specs/fax/openapi.yaml on a SQLite or PostgreSQL
// store (replicas sharing a PostgreSQL database claim the simulator's steps
// and the webhook deliveries under leases), simulates
// the transmission of every fax deterministically (a worker that downloads the
// document, checks it is a PDF, counts its pages and walks the state machine),
// and delivers the resulting webhooks at least once from a transactional
// outbox, signed with Ed25519.
package fax

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/nyaruka/phonenumbers"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/gen/faxserver"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/egress"
	"github.com/apistack/apistack/servers/internal/ratelimit"
	"github.com/apistack/apistack/servers/internal/secretbox"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/validation"
)

// Deps are the dependencies every API's server takes alike.
type Deps = descriptor.Deps

// Config configures the fax server.
type Config struct {
	// Deps are the dependencies every API takes: DB, Clock, Logger,
	// validation, Hooks, Telemetry.
	Deps
	// MasterKey (secretbox.KeySize bytes, kept outside the database; see
	// LoadOrCreateMasterKey) seals the server's own secrets in DB: the
	// webhook signing seed and the media-link key.
	MasterKey []byte
	// BaseURL is where the fax API is reached (signed media links point to
	// it); SetBaseURL changes it once the listener's address is known.
	BaseURL string
	// Settings are the server's knobs (0: their defaults).
	Settings
	// CatchUpSteps takes at once, in order, the steps a clock moved on by
	// several intervals has passed (a test's fake clock: one Advance of ten
	// minutes walks a fax to its end); without it each step is due
	// StepInterval after the previous one was taken, however late.
	CatchUpSteps bool
	// WebhookTransport, when set, wraps the webhook sender's transport
	// (which keeps WebhookConcurrency connections per host and enforces
	// Destinations beneath the wrapper), e.g. to validate deliveries in
	// tests. Redirects are never followed.
	WebhookTransport func(http.RoundTripper) http.RoundTripper
	// ReplicaID names this server in the claims it makes on due simulator
	// steps and deliverable events when several replicas share DB; "" means
	// a random one. Run first ends the claims made under the same name (a
	// restarted replica takes its own work back at once).
	ReplicaID string
}

// DestinationOptions configure the destination policy of Config.Destinations
// (AllowPrivate, exact allowed URLs, and the resolver and dialer tests
// inject).
type DestinationOptions = egress.Options

// Server is the fax API, its transmission simulator and its webhook sender.
type Server struct {
	cfg   Config
	store *store
	clock clock.Clock
	// limiter bounds each account's requests.
	limiter    *ratelimit.Limiter
	logger     *slog.Logger
	signingKey ed25519.PrivateKey
	linkKey    []byte
	baseURL    atomic.Pointer[string]

	// destinations checks media downloads and webhook deliveries.
	destinations  *egress.Policy
	mediaClient   *http.Client
	webhookClient *http.Client

	// wakeSim and wakeOutbox nudge the worker loops after a commit.
	// keys caches which account an API key (by hash) belongs to, dropped
	// on every key rotation or deletion (store.revoked).
	keys *cache.Cache[keyEntry]
	// apps caches the applications sends name, dropped when one is changed
	// or deleted.
	apps *cache.Cache[application]

	wakeSim chan struct{}
	// recorded is fired when this replica records deliveries or failed
	// attempts (Advance waits for them).
	recorded   signal
	wakeOutbox chan struct{}
	running    sync.Mutex
}

var _ faxserver.StrictServerInterface = (*Server)(nil)

// New returns a fax server on cfg.DB. Run starts its simulator and webhook
// delivery.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.DB == nil {
		return nil, errors.New("fax: Config.DB is nil")
	}
	cfg.Settings = cfg.Settings.withDefaults()
	if cfg.Lease <= cfg.MediaTimeout || cfg.Lease <= cfg.WebhookTimeout {
		return nil, fmt.Errorf("fax: Config.Lease %v must exceed MediaTimeout %v and WebhookTimeout %v", cfg.Lease, cfg.MediaTimeout, cfg.WebhookTimeout)
	}
	if cfg.ReplicaID == "" {
		cfg.ReplicaID = uuid.NewString()
	}
	cfg.Deps = cfg.Deps.WithDefaults()
	box, err := secretbox.New(cfg.MasterKey)
	if err != nil {
		return nil, fmt.Errorf("fax: master key: %w", err)
	}
	// On PostgreSQL the schema's transactions run in parallel: the
	// simulator's and the outbox's claims lock the accounts and faxes they
	// decide for (claimDueFaxes, claimEvents).
	db := sqldb.New(cfg.DB, sqldb.Options{SerializeWrites: true})
	// Every cache follows the database: dropped after this replica's
	// commits (OnCommit, store.revoked) and after every commit another
	// replica makes (Follow), and bypassed while this replica cannot hear
	// those.
	st := &store{db: db, box: box,
		pages: apistore.PageCache[faxPage](db, 64, time.Minute), rendered: apistore.PageCache[[]byte](db, 256, renderedTTL)}
	st.attemptBatches = newAttemptBatches(st)
	seed, err := st.secret(ctx, "webhook_signing_seed", ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	linkKey, err := st.secret(ctx, "media_link_key", 32)
	if err != nil {
		return nil, err
	}
	destinations, err := egress.New(cfg.Destinations)
	if err != nil {
		return nil, fmt.Errorf("fax: %w", err)
	}
	media := destinations.Transport(http.DefaultTransport.(*http.Transport))
	hooks := http.DefaultTransport.(*http.Transport).Clone()
	hooks.MaxIdleConnsPerHost = cfg.WebhookConcurrency
	hooksRT := destinations.Transport(hooks)
	if cfg.WebhookTransport != nil {
		hooksRT = cfg.WebhookTransport(hooksRT)
	}
	s := &Server{
		destinations:  destinations,
		mediaClient:   &http.Client{Transport: media, CheckRedirect: egress.CheckRedirect},
		webhookClient: &http.Client{Transport: hooksRT},
		cfg:           cfg,
		store:         st,
		keys:          cache.New[keyEntry](keyCacheSize, keyCacheTTL),
		apps:          cache.New[application](keyCacheSize, keyCacheTTL),
		clock:         cfg.Clock,
		logger:        cfg.Logger,
		signingKey:    ed25519.NewKeyFromSeed(seed),
		linkKey:       linkKey,
		wakeSim:       make(chan struct{}, 1),
		wakeOutbox:    make(chan struct{}, 1),
		limiter:       ratelimit.New("requests", cfg.RateLimit, cfg.RateLimitPeriod, cfg.Clock, ratelimit.StoreFor(st.db)),
	}
	st.ownClocks = cfg.Clocks != nil
	st.revoked = func() {
		s.keys.Invalidate()
		s.apps.Invalidate()
	}
	st.db.Follow(s.keys)
	st.db.Follow(s.apps)
	s.SetBaseURL(cfg.BaseURL)
	cfg.Telemetry.WatchOutbox(st.pendingEventCount)
	return s, nil
}

// SetBaseURL sets the URL the fax API is reached at, for signed media links.
func (s *Server) SetBaseURL(u string) {
	u = strings.TrimSuffix(u, "/")
	s.baseURL.Store(&u)
}

// AllowDestinations lets media downloads and webhooks reach exactly these
// URLs even on a non-public address (the demo's inbox and sample document
// on the admin port), without opening the rest of their host.
func (s *Server) AllowDestinations(urls ...string) error {
	return s.destinations.Allow(urls...)
}

// AllowDestinationPrefixes adds URL prefixes (ending in /) the server may
// reach even on a non-public address: every URL below one.
func (s *Server) AllowDestinationPrefixes(prefixes ...string) error {
	return s.destinations.AllowPrefix(prefixes...)
}

// WebhookPublicKey is the Ed25519 public key webhook receivers verify with.
func (s *Operator) WebhookPublicKey() ed25519.PublicKey {
	return s.signingKey.Public().(ed25519.PublicKey)
}

// Handler returns the HTTP handler of the API: the generated routes behind
// authentication and validation, plus /healthz, /openapi.yaml and /docs/.
func (s *Server) Handler() (http.Handler, error) {
	e, err := s.cfg.Echo(apiserver.Config{
		Name:         "fax",
		Title:        "apistack fax API",
		ErrorHandler: errorHandler(s.logger),
		Before:       []echo.MiddlewareFunc{s.resolveAuth},
		MaxBodyBytes: 64 << 10,
	}, faxserver.GetSpec, authenticate)
	if err != nil {
		return nil, err
	}
	// After validation: a form body reaches the handler as the JSON encoding
	// of exactly the value the validator checked.
	e.Use(validatedFormAsJSON)
	faxserver.RegisterHandlers(e, faxserver.NewStrictHandler(s, nil))
	return e, nil
}

// validatedFormAsJSON replaces a validated form-encoded body with the JSON of
// its validated value, so the generated handler decodes the value that was
// validated instead of parsing the form a second time.
func validatedFormAsJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ct, _, _ := strings.Cut(req.Header.Get("Content-Type"), ";")
		if strings.TrimSpace(strings.ToLower(ct)) != "application/x-www-form-urlencoded" {
			return next(c)
		}
		vb, ok := req.Body.(interface{ ValidatedValue() any })
		if !ok {
			return &validation.Failure{Kind: validation.KindUnsupportedMediaType, Message: "the form body was not validated"}
		}
		// The form decoder reads only the schema's fields: refuse the others
		// (and repeated ones) here, as additionalProperties: false says.
		raw, err := io.ReadAll(req.Body)
		if err != nil {
			return fmt.Errorf("read the validated form: %w", err)
		}
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			return &validation.Failure{Kind: validation.KindUnsupportedMediaType, Message: "the form body cannot be decoded: " + err.Error()}
		}
		value, _ := vb.ValidatedValue().(map[string]any)
		var causes []validation.Cause
		for k, vs := range form {
			if _, known := value[k]; !known {
				causes = append(causes, validation.Cause{In: "body", Name: "/" + k, Message: fmt.Sprintf("property %q is unsupported", k)})
			} else if len(vs) > 1 {
				causes = append(causes, validation.Cause{In: "body", Name: "/" + k, Message: fmt.Sprintf("property %q is given %d times", k, len(vs))})
			}
		}
		if len(causes) > 0 {
			return &validation.Failure{Kind: validation.KindInvalid, Message: "invalid form fields", Causes: causes}
		}
		data, err := json.Marshal(value)
		if err != nil {
			return fmt.Errorf("re-encode the validated form: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(data))
		req.ContentLength = int64(len(data))
		req.Header.Set("Content-Type", "application/json")
		return next(c)
	}
}

// SendFax queues an outbound fax after checking what the schema cannot: the
// numbers, the application, its voice profile and the sending number.
func (s *Server) SendFax(ctx context.Context, req faxserver.SendFaxRequestObject) (faxserver.SendFaxResponseObject, error) {
	acct, err := accountFrom(ctx)
	if err != nil {
		return nil, err
	}
	body := req.JSONBody
	if body == nil {
		return nil, &validation.Failure{Kind: validation.KindUnsupportedMediaType, Message: "the request body is missing"}
	}
	var problems []apiErrorItem
	to, toOK := e164(body.To)
	if !toOK {
		problems = append(problems, invalidField("/to", "to must be a valid phone number in E.164 form (+13125550100)"))
	}
	from, fromOK := e164(body.From)
	if !fromOK {
		problems = append(problems, invalidField("/from", "from must be a valid phone number in E.164 form (+13125550100)"))
	}
	if !httpURL(body.MediaUrl) {
		problems = append(problems, invalidField("/media_url", "media_url must be an absolute http or https URL"))
	}
	problems = append(problems, s.destinationProblems(ctx, []fieldURL{
		{"media_url", "/media_url", &body.MediaUrl},
		{"webhook_url", "/webhook_url", body.WebhookUrl},
		{"webhook_failover_url", "/webhook_failover_url", body.WebhookFailoverUrl},
	})...)
	app, err := s.application(ctx, acct, body.ConnectionId)
	switch {
	case errors.Is(err, storeerr.ErrNotFound):
		problems = append(problems, invalidField("/connection_id", "connection_id is not a fax application of this account"))
	case err != nil:
		return nil, err
	case app.VoiceProfileID == nil:
		problems = append(problems, invalidField("/connection_id", "the fax application has no outbound voice profile; set outbound_voice_profile_id to send"))
	}
	if fromOK && err == nil {
		n, nerr := s.store.number(ctx, from)
		if nerr != nil && !errors.Is(nerr, storeerr.ErrNotFound) {
			return nil, nerr
		}
		if errors.Is(nerr, storeerr.ErrNotFound) || n.AccountID != acct || n.ApplicationID == nil || *n.ApplicationID != app.ID {
			problems = append(problems, invalidField("/from", "from is not a number enabled on the fax application"))
		}
	}
	if len(problems) > 0 {
		return nil, invalid(problems...)
	}

	now := s.tenantNow(ctx)
	f := faxRow{
		ID: uuid.NewString(), AccountID: acct, ConnectionID: app.ID, Direction: "outbound",
		From: from, To: to, MediaURL: body.MediaUrl, Quality: string(faxapi.FaxQualityNormal), Status: string(faxapi.FaxStatusQueued),
		WebhookURL: app.WebhookURL, WebhookFailoverURL: app.WebhookFailoverURL,
		Outcome: outcomeFor(to).name, NextStepAt: &now, CreatedAt: now, UpdatedAt: now,
	}
	setString(&f.Quality, body.Quality)
	setIf(&f.StoreMedia, body.StoreMedia)
	setIf(&f.WebhookURL, body.WebhookUrl)
	setIf(&f.WebhookFailoverURL, body.WebhookFailoverUrl)
	ev, err := s.newEvent(f, eventQueued, now)
	if err != nil {
		return nil, err
	}
	if err := s.store.insertFax(ctx, f, nil, []outboxEvent{ev}); err != nil {
		return nil, err
	}
	s.wake()
	return faxserver.SendFax202JSONResponse{Data: s.toAPIFax(ctx, f)}, nil
}

// ListFaxes lists the account's faxes, newest first, one numbered page at a
// time. It changes nothing and emits nothing.
func (s *Server) ListFaxes(ctx context.Context, req faxserver.ListFaxesRequestObject) (faxserver.ListFaxesResponseObject, error) {
	acct, err := accountFrom(ctx)
	if err != nil {
		return nil, err
	}
	p := req.Params
	number, size := page(p.PageNumber, p.PageSize)
	f := faxFilter{CreatedGTE: p.FilterCreatedAtGte, CreatedLTE: p.FilterCreatedAtLte}
	setString(&f.Direction, p.FilterDirection)
	setIf(&f.From, p.FilterFrom)
	setIf(&f.To, p.FilterTo)
	// A page's answer is kept encoded until the next write. Its media links
	// are signed to expire MediaLinkTTL after the caller's clock, to the
	// second, so the key names that second: within it the answer is the
	// same bytes, and a link is never older than one made now would be.
	now := s.tenantNow(ctx)
	key := renderedFaxListKey(acct, f, number, size, now, *s.baseURL.Load())
	if body, ok := s.store.rendered.Get(key); ok {
		return faxListBody(body), nil
	}
	gen := s.store.rendered.Generation()
	rows, total, err := s.store.listFaxes(ctx, acct, f, (number-1)*size, size)
	if err != nil {
		return nil, err
	}
	l := faxapi.FaxList{Data: make([]faxapi.Fax, 0, len(rows)), Meta: pageMeta(number, size, total)}
	for _, r := range rows {
		l.Data = append(l.Data, s.toAPIFaxAt(r, now))
	}
	body, err := appendFaxList(nil, l)
	if err != nil {
		return nil, fmt.Errorf("encode faxes: %w", err)
	}
	s.store.rendered.Put(gen, key, body)
	return faxListBody(body), nil
}

// GetFax returns one fax, with fresh signed media links.
func (s *Server) GetFax(ctx context.Context, req faxserver.GetFaxRequestObject) (faxserver.GetFaxResponseObject, error) {
	f, err := s.faxOf(ctx, req.Id.String())
	if err != nil {
		return nil, err
	}
	return faxserver.GetFax200JSONResponse{Data: s.toAPIFax(ctx, f)}, nil
}

// DeleteFax deletes a fax in a final state and emits fax.deleted.
func (s *Server) DeleteFax(ctx context.Context, req faxserver.DeleteFaxRequestObject) (faxserver.DeleteFaxResponseObject, error) {
	f, err := s.faxOf(ctx, req.Id.String())
	if err != nil {
		return nil, err
	}
	if !isFinal(f.Status) {
		return nil, errInvalidState("the fax is %s; only a delivered, failed or received fax can be deleted (cancel it first)", f.Status)
	}
	now := s.tenantNow(ctx)
	from := f.Status
	f.DeletedAt, f.UpdatedAt, f.NextStepAt = &now, now, nil
	ev, err := s.newEvent(f, eventDeleted, now)
	if err != nil {
		return nil, err
	}
	if err := s.store.updateFax(ctx, f, faxGuard{Status: from}, nil, []outboxEvent{ev}); err != nil {
		if errors.Is(err, errStale) {
			return nil, errNoSuchFax()
		}
		return nil, err
	}
	s.wake()
	return faxserver.DeleteFax204Response{}, nil
}

// CancelFax fails an outbound fax that is still in progress with
// user_cancelled. The simulator may move the fax on between the read and the
// write; the cancel is then made again from the state it moved to, as long
// as that state can still be cancelled.
func (s *Server) CancelFax(ctx context.Context, req faxserver.CancelFaxRequestObject) (faxserver.CancelFaxResponseObject, error) {
	const maxTries = 8
	for try := 1; ; try++ {
		f, err := s.faxOf(ctx, req.Id.String())
		if err != nil {
			return nil, err
		}
		if f.Direction != "outbound" || !cancellable[f.Status] {
			return nil, errInvalidState("the fax is %s %s; only an outbound fax that is queued, media.processed, originated or sending can be cancelled", f.Direction, f.Status)
		}
		from := faxGuard{Status: f.Status}
		now := s.tenantNow(ctx)
		reason := string(faxapi.FaxFailureReasonUserCancelled)
		f.Status, f.FailureReason, f.NextStepAt, f.UpdatedAt = string(faxapi.FaxStatusFailed), &reason, nil, now
		ev, err := s.newEvent(f, eventFailed, now)
		if err != nil {
			return nil, err
		}
		err = s.store.updateFax(ctx, f, from, nil, []outboxEvent{ev})
		if errors.Is(err, errStale) && try < maxTries {
			continue
		}
		if errors.Is(err, errStale) {
			return nil, errInvalidState("the fax moved on while it was being cancelled; get it and try again")
		}
		if err != nil {
			return nil, err
		}
		s.wake()
		return faxserver.CancelFax200JSONResponse{Data: s.toAPIFax(ctx, f)}, nil
	}
}

// cancellable are the states an outbound fax can be cancelled in.
var cancellable = map[string]bool{
	string(faxapi.FaxStatusQueued): true, string(faxapi.FaxStatusMediaProcessed): true,
	string(faxapi.FaxStatusOriginated): true, string(faxapi.FaxStatusSending): true,
}

// RefreshFax answers the fax with freshly signed media links.
func (s *Server) RefreshFax(ctx context.Context, req faxserver.RefreshFaxRequestObject) (faxserver.RefreshFaxResponseObject, error) {
	f, err := s.faxOf(ctx, req.Id.String())
	if err != nil {
		return nil, err
	}
	if !hasDocument(f) {
		return nil, errInvalidState("the fax has no stored or received document to link to")
	}
	return faxserver.RefreshFax200JSONResponse{Data: s.toAPIFax(ctx, f)}, nil
}

// GetMedia serves a document through a signed link.
func (s *Server) GetMedia(ctx context.Context, req faxserver.GetMediaRequestObject) (faxserver.GetMediaResponseObject, error) {
	id := req.MediaId.String()
	if err := s.checkMediaLink(ctx, id, req.Params.Expires, req.Params.Signature); err != nil {
		return nil, err
	}
	doc, err := s.store.media(ctx, id)
	if errors.Is(err, storeerr.ErrNotFound) {
		return nil, errNotFoundf("the document does not exist any more")
	}
	if err != nil {
		return nil, err
	}
	return faxserver.GetMedia200ApplicationpdfResponse{Body: bytes.NewReader(doc), ContentLength: int64(len(doc))}, nil
}

// ListFaxApplications lists the account's fax applications.
func (s *Server) ListFaxApplications(ctx context.Context, req faxserver.ListFaxApplicationsRequestObject) (faxserver.ListFaxApplicationsResponseObject, error) {
	acct, err := accountFrom(ctx)
	if err != nil {
		return nil, err
	}
	number, size := page(req.Params.PageNumber, req.Params.PageSize)
	apps, total, err := s.store.listApplications(ctx, acct, (number-1)*size, size)
	if err != nil {
		return nil, err
	}
	out := faxserver.ListFaxApplications200JSONResponse{Data: make([]faxapi.FaxApplication, 0, len(apps)), Meta: pageMeta(number, size, total)}
	for _, a := range apps {
		out.Data = append(out.Data, toAPIApplication(a))
	}
	return out, nil
}

// CreateFaxApplication creates a fax application.
func (s *Server) CreateFaxApplication(ctx context.Context, req faxserver.CreateFaxApplicationRequestObject) (faxserver.CreateFaxApplicationResponseObject, error) {
	acct, err := accountFrom(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	now := s.tenantNow(ctx)
	a := application{ID: uuid.NewString(), AccountID: acct, Name: b.ApplicationName, WebhookURL: b.WebhookUrl, CreatedAt: now, UpdatedAt: now}
	setIf(&a.WebhookFailoverURL, b.WebhookFailoverUrl)
	if problems := s.destinationProblems(ctx, []fieldURL{
		{"webhook_url", "/webhook_url", &b.WebhookUrl},
		{"webhook_failover_url", "/webhook_failover_url", b.WebhookFailoverUrl},
	}); len(problems) > 0 {
		return nil, invalid(problems...)
	}
	if err := s.setVoiceProfile(ctx, &a, b.OutboundVoiceProfileId); err != nil {
		return nil, err
	}
	if err := s.store.insertApplication(ctx, a); err != nil {
		return nil, err
	}
	return faxserver.CreateFaxApplication201JSONResponse{Data: toAPIApplication(a)}, nil
}

// GetFaxApplication returns one fax application.
func (s *Server) GetFaxApplication(ctx context.Context, req faxserver.GetFaxApplicationRequestObject) (faxserver.GetFaxApplicationResponseObject, error) {
	a, err := s.applicationOf(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return faxserver.GetFaxApplication200JSONResponse{Data: toAPIApplication(a)}, nil
}

// UpdateFaxApplication changes the fields present in the body.
func (s *Server) UpdateFaxApplication(ctx context.Context, req faxserver.UpdateFaxApplicationRequestObject) (faxserver.UpdateFaxApplicationResponseObject, error) {
	a, err := s.applicationOf(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	b := req.Body
	setIf(&a.Name, b.ApplicationName)
	setIf(&a.WebhookURL, b.WebhookUrl)
	setIf(&a.WebhookFailoverURL, b.WebhookFailoverUrl)
	if problems := s.destinationProblems(ctx, []fieldURL{
		{"webhook_url", "/webhook_url", b.WebhookUrl},
		{"webhook_failover_url", "/webhook_failover_url", b.WebhookFailoverUrl},
	}); len(problems) > 0 {
		return nil, invalid(problems...)
	}
	if b.OutboundVoiceProfileId != nil {
		if err := s.setVoiceProfile(ctx, &a, b.OutboundVoiceProfileId); err != nil {
			return nil, err
		}
	}
	a.UpdatedAt = s.tenantNow(ctx)
	if err := s.store.updateApplication(ctx, a); err != nil {
		return nil, err
	}
	return faxserver.UpdateFaxApplication200JSONResponse{Data: toAPIApplication(a)}, nil
}

// DeleteFaxApplication deletes a fax application; its numbers are no longer
// enabled on any application.
func (s *Server) DeleteFaxApplication(ctx context.Context, req faxserver.DeleteFaxApplicationRequestObject) (faxserver.DeleteFaxApplicationResponseObject, error) {
	acct, err := accountFrom(ctx)
	if err != nil {
		return nil, err
	}
	err = s.store.deleteApplication(ctx, acct, req.Id)
	if errors.Is(err, storeerr.ErrNotFound) {
		return nil, errNotFoundf("fax application %q does not exist", req.Id)
	}
	if err != nil {
		return nil, err
	}
	return faxserver.DeleteFaxApplication204Response{}, nil
}

// setVoiceProfile sets a's outbound voice profile to id ("" or nil: none),
// which must be a profile of a's account.
func (s *Server) setVoiceProfile(ctx context.Context, a *application, id *string) error {
	if id == nil || *id == "" {
		a.VoiceProfileID = nil
		return nil
	}
	ok, err := s.store.voiceProfileExists(ctx, a.AccountID, *id)
	if err != nil {
		return err
	}
	if !ok {
		return invalid(invalidField("/outbound_voice_profile_id", "outbound_voice_profile_id is not an outbound voice profile of this account"))
	}
	p := *id
	a.VoiceProfileID = &p
	return nil
}

func (s *Server) faxOf(ctx context.Context, id string) (faxRow, error) {
	return ofCaller(ctx, id, s.store.fax, func() error { return errNoSuchFax() })
}

func (s *Server) applicationOf(ctx context.Context, id string) (application, error) {
	return ofCaller(ctx, id, s.store.application, func() error { return errNotFoundf("fax application %q does not exist", id) })
}

// ofCaller reads, with read, the caller's account's row id; a missing one is
// answered missing().
func ofCaller[T any](ctx context.Context, id string, read func(ctx context.Context, accountID, id string) (T, error), missing func() error) (T, error) {
	var zero T
	acct, err := accountFrom(ctx)
	if err != nil {
		return zero, err
	}
	v, err := read(ctx, acct, id)
	if errors.Is(err, storeerr.ErrNotFound) {
		return zero, missing()
	}
	return v, err
}

func errNoSuchFax() *apiError { return errNotFoundf("no such fax") }

// e164 parses a phone number written in E.164 form and reports whether it is
// a valid number written exactly so.
func e164(s string) (string, bool) {
	if !strings.HasPrefix(s, "+") {
		return "", false
	}
	if r, ok := e164Seen.Get(s); ok {
		return r.number, r.ok
	}
	r := e164Result{}
	n, err := phonenumbers.Parse(s, "")
	if err == nil && phonenumbers.IsValidNumber(n) {
		r.number = phonenumbers.Format(n, phonenumbers.E164)
		r.ok = r.number == s
	}
	e164Seen.Put(e164Seen.Generation(), s, r)
	return r.number, r.ok
}

// e164Seen remembers the numbers parsed lately: parsing one (libphonenumber's
// metadata and patterns) cost a sixth of a send, and senders repeat their
// numbers. The answer is a pure function of the text, so it never goes stale.
var e164Seen = cache.New[e164Result](4096, time.Hour)

type e164Result struct {
	number string
	ok     bool
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func isFinal(status string) bool {
	switch faxapi.FaxStatus(status) {
	case faxapi.FaxStatusDelivered, faxapi.FaxStatusFailed, faxapi.FaxStatusReceived:
		return true
	}
	return false
}

// setIf sets *dst to *v when v is given (a request's optional field).
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// setString sets *dst to the text of *v when v is given.
func setString[S ~string](dst *string, v *S) {
	if v != nil {
		*dst = string(*v)
	}
}

func page(number *faxapi.PageNumber, size *faxapi.PageSize) (int, int) {
	n, sz := 1, 20
	setIf(&n, number)
	setIf(&sz, size)
	return n, sz
}

func pageMeta(number, size, total int) faxapi.PageMeta {
	return faxapi.PageMeta{PageNumber: number, PageSize: size, TotalResults: total, TotalPages: (total + size - 1) / size}
}

// toAPIFax renders a fax; its media links are signed now, valid 10 minutes.
func (s *Server) toAPIFax(ctx context.Context, f faxRow) faxapi.Fax {
	return s.toAPIFaxAt(f, s.tenantNow(ctx))
}

// toAPIFaxAt renders a fax with its media links signed at now.
func (s *Server) toAPIFaxAt(f faxRow, now time.Time) faxapi.Fax {
	out := faxapi.Fax{
		Id: uuid.MustParse(f.ID), RecordType: faxapi.FaxRecordTypeFax, ConnectionId: f.ConnectionID,
		Direction: faxapi.FaxDirection(f.Direction), From: f.From, To: f.To,
		Quality: faxapi.FaxQuality(f.Quality), Status: faxapi.FaxStatus(f.Status), StoreMedia: f.StoreMedia,
		PageCount: f.PageCount, PartialContent: f.PartialContent, CallDurationSecs: f.CallDurationSecs,
		CreatedAt: f.CreatedAt.UTC(), UpdatedAt: f.UpdatedAt.UTC(),
		WebhookUrl: f.WebhookURL, WebhookFailoverUrl: f.WebhookFailoverURL,
	}
	if f.FailureReason != nil {
		r := faxapi.FaxFailureReason(*f.FailureReason)
		out.FailureReason = &r
	}
	if f.MediaURL != "" {
		u := f.MediaURL
		out.MediaUrl = &u
	}
	if hasDocument(f) {
		link := s.mediaLink(*f.MediaID, now)
		if f.Direction == "inbound" {
			out.MediaUrl = &link
		} else {
			out.StoredMediaUrl = &link
		}
	}
	return out
}

// hasDocument reports whether f has a document to link to: the stored copy
// of an outbound fax, or the PDF of an inbound fax once it is received (while
// receiving and media.processing the PDF is still being generated).
func hasDocument(f faxRow) bool {
	if f.MediaID == nil {
		return false
	}
	return f.Direction != string(faxapi.FaxDirectionInbound) || f.Status == string(faxapi.FaxStatusReceived)
}

func toAPIApplication(a application) faxapi.FaxApplication {
	return faxapi.FaxApplication{
		Id: a.ID, RecordType: faxapi.FaxApplicationRecordTypeFaxApplication, ApplicationName: a.Name,
		WebhookUrl: a.WebhookURL, WebhookFailoverUrl: a.WebhookFailoverURL, OutboundVoiceProfileId: a.VoiceProfileID,
		CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC(),
	}
}

// wake nudges the simulator and the webhook sender after a commit.
func (s *Server) wake() {
	nudge(s.wakeSim)
	s.wakeDelivery()
}

func (s *Server) wakeDelivery() {
	nudge(s.wakeOutbox)
}

// nudge wakes the loop waiting on ch (buffered), without blocking when it
// is already woken.
func nudge(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// now is the time of a change, to the microsecond: the precision the store
// keeps, so the record a change answers is the record a later get answers.
func (s *Server) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }
