// Package sandbox is the sandbox API (specs/sandbox/openapi.yaml), served on
// the admin port under /sandboxes: isolated tenant sets, one tenant in each
// API, created, reset and deleted over HTTP, each with a journal of the
// requests its credentials made. The tenants themselves are each API's
// (their descriptors' Seed, Reset and Delete, run by servers/stack through
// Tenants); this package keeps the sandboxes, their tokens and their
// journals in its own database, so every replica answers the same.
package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/failguard"
	"github.com/apistack/apistack/servers/internal/ratelimit"
	"github.com/apistack/apistack/servers/internal/rights"
	"github.com/apistack/apistack/servers/internal/secretbox"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/validation"
)

// IDPrefix starts every sandbox's id, which is also the name of its tenant
// set in every API.
const IDPrefix = "sbx-"

// The TTL bounds and default (CreateSandboxRequest.ttl).
const (
	DefaultTTL = time.Hour
	MinTTL     = time.Minute
	MaxTTL     = 720 * time.Hour
)

// The limits on creating sandboxes (Config.MaxSandboxes, Config.CreatesPerMinute).
const (
	DefaultMaxSandboxes     = 1000
	DefaultCreatesPerMinute = 60
)

// The default journal budget of each sandbox (Config.JournalBudget).
const (
	DefaultJournalEntries = 10000
	DefaultJournalBytes   = 32 << 20
)

// retryAfterFull is the Retry-After, in seconds, of a create refused because
// the deployment holds its most sandboxes: the sweep, or a delete, makes room.
const retryAfterFull = 60

// The clock modes.
const (
	ClockReal   = "real"
	ClockFrozen = "frozen"
)

// DefaultSweepInterval is how often the server looks for sandboxes past
// their TTL.
const DefaultSweepInterval = time.Minute

// staleCreation is how long a sandbox may stay half created before the
// sweep takes it for the leftover of a replica that died creating it.
const staleCreation = 10 * time.Minute

// Tenants creates, resets and deletes the tenant sets of sandboxes in every
// API (servers/stack). Credentials are the sections of
// demo-credentials.json, one per API.
type Tenants interface {
	// Seed creates the set named set and returns its credentials.
	Seed(ctx context.Context, set string) (json.RawMessage, error)
	// Reset puts the set back as Seed left it, creds keeping working.
	Reset(ctx context.Context, set string, creds json.RawMessage) error
	// Delete removes the set and all its data from every API.
	Delete(ctx context.Context, set string) error
	// Fixture applies a fixture's sections (by API name) to the set whose
	// credentials creds are, and returns the credentials each API's section
	// made, by the fixture's names. A section that breaks a rule answers a
	// *descriptor.FixtureError (its pointer within the fixture).
	Fixture(ctx context.Context, set string, creds json.RawMessage, sections map[string]json.RawMessage) (map[string]json.RawMessage, error)
	// Copy copies the tenants of set from into set to, with new
	// credentials; creds and named are from's credentials and fixture
	// credentials, the answers to's, and the APIs whose rows it copied.
	Copy(ctx context.Context, from, to string, creds json.RawMessage, named map[string]json.RawMessage) (json.RawMessage, map[string]json.RawMessage, []string, error)
}

// Config configures the sandbox API.
type Config struct {
	// DB is the sandbox database (Migrations, PostgresMigrations).
	DB *sqldb.DB
	// MasterKey seals the sandboxes' credentials at rest.
	MasterKey []byte
	// Tenants makes the sandboxes' tenants.
	Tenants Tenants
	// Fax is where the inbound-fax trigger makes faxes arrive; nil answers
	// that trigger 500.
	Fax Fax
	// Webhooks is the fax webhook log of the sandboxes (webhooks.go); nil
	// makes its operations fail.
	Webhooks Webhooks
	// AdminToken may do everything; it must not be empty.
	AdminToken string
	// CreatorToken may only create sandboxes; "" means no creator token.
	CreatorToken string
	// Clock is the stack's time; nil means the system clock.
	Clock clock.Clock
	// SweepInterval is how often Run looks for expired sandboxes; 0 means
	// DefaultSweepInterval.
	SweepInterval time.Duration
	// Logger receives logs; nil means slog.Default().
	Logger *slog.Logger
	// ValidateResponses checks every response against the spec;
	// ResponseChecks does it in the background.
	ValidateResponses bool
	ResponseChecks    *validation.Background
	// OnResponseViolation is called for a response that breaks the spec.
	OnResponseViolation func(r *http.Request, status int, err error)
	// Telemetry counts the requests for /metrics; nil means none.
	Telemetry *telemetry.Telemetry
	// Advance runs a sandbox's due work when its clock moves (clock.go);
	// nil: none.
	Advance Advancer
	// DriveInterval is how often the due work of the real clocks runs; 0
	// means DefaultDriveInterval.
	DriveInterval time.Duration
	// SnapshotLimit is how many snapshots the deployment holds at most; 0
	// means DefaultSnapshotLimit.
	SnapshotLimit int
	// WrongTokens limits the wrong bearer tokens of each source; share the
	// admin API's (admin.Config.WrongTokens) where both are served on one
	// port, so a source's guesses count together. nil means a guard of its
	// own with failguard's defaults.
	WrongTokens *failguard.Guard
	// MaxSandboxes is the most sandboxes the deployment holds, counted in
	// the database (every replica together); 0 means DefaultMaxSandboxes.
	MaxSandboxes int
	// CreatesPerMinute is how many sandboxes one token (the creator's, or
	// the admin's) may create per minute, in bursts of as many; 0 means
	// DefaultCreatesPerMinute.
	CreatesPerMinute int
	// JournalBudget bounds each sandbox's journal; a zero bound means its
	// default (DefaultJournalEntries, DefaultJournalBytes).
	JournalBudget JournalBudget
}

// Server is the sandbox API.
type Server struct {
	cfg        Config
	store      *store
	box        *secretbox.Box
	journal    *Journal
	clocks     *Clocks
	clock      clock.Clock
	logger     *slog.Logger
	adminHash  [32]byte
	creatorSet bool
	creator    [32]byte
	faults     *faultSet
	hooks      hookState
	creates    *ratelimit.Limiter
}

var _ sandboxserver.StrictServerInterface = (*Server)(nil)

// New returns the sandbox API on cfg.DB. Close stops its journal writer.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.DB == nil:
		return nil, errors.New("sandbox: Config.DB is nil")
	case cfg.Tenants == nil:
		return nil, errors.New("sandbox: Config.Tenants is nil")
	case cfg.AdminToken == "":
		return nil, errors.New("sandbox: Config.AdminToken is empty")
	}
	box, err := secretbox.New(cfg.MasterKey)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = DefaultSweepInterval
	}
	if cfg.DriveInterval <= 0 {
		cfg.DriveInterval = DefaultDriveInterval
	}
	if cfg.SnapshotLimit <= 0 {
		cfg.SnapshotLimit = DefaultSnapshotLimit
	}
	if cfg.WrongTokens == nil {
		cfg.WrongTokens = failguard.New(0, 0, nil)
	}
	if cfg.MaxSandboxes <= 0 {
		cfg.MaxSandboxes = DefaultMaxSandboxes
	}
	if cfg.CreatesPerMinute <= 0 {
		cfg.CreatesPerMinute = DefaultCreatesPerMinute
	}
	if cfg.JournalBudget.Entries <= 0 {
		cfg.JournalBudget.Entries = DefaultJournalEntries
	}
	if cfg.JournalBudget.Bytes <= 0 {
		cfg.JournalBudget.Bytes = DefaultJournalBytes
	}
	st := &store{db: cfg.DB, budget: cfg.JournalBudget}
	s := &Server{cfg: cfg, store: st, box: box, clock: cfg.Clock, logger: cfg.Logger,
		adminHash: sha256.Sum256([]byte(cfg.AdminToken))}
	if cfg.CreatorToken != "" {
		s.creatorSet, s.creator = true, sha256.Sum256([]byte(cfg.CreatorToken))
	}
	s.creates = ratelimit.New("creates", cfg.CreatesPerMinute, time.Minute, cfg.Clock, ratelimit.StoreFor(cfg.DB))
	s.journal = newJournal(st, cfg.Clock, cfg.Logger)
	s.clocks = newClocks(cfg.DB, st, cfg.Clock, cfg.Logger)
	s.faults = newFaultSet(st, cfg.Clock, cfg.Logger)
	s.journal.faults, s.journal.clocks = s.faults, s.clocks
	return s, nil
}

// Journal is the journal the APIs write the sandboxes' requests into.
func (s *Server) Journal() *Journal { return s.journal }

// Close commits what the journal holds and stops its writer.
func (s *Server) Close() { s.journal.close() }

// Handler returns the sandbox API's HTTP handler (paths under /sandboxes,
// plus the /healthz, /openapi.yaml and /docs/ every API server has). Who may
// call each operation is read from the spec (x-apistack-roles); a spec that
// does not say it for every operation fails here.
func (s *Server) Handler() (http.Handler, error) {
	spec, err := apiserver.Spec("sandbox", sandboxserver.GetSpec)
	if err != nil {
		return nil, fmt.Errorf("sandbox spec: %w", err)
	}
	table, err := rights.FromSpec(spec)
	if err != nil {
		return nil, err
	}
	return s.handlerWith(table)
}

// handlerWith is Handler with the operations authorized by table.
func (s *Server) handlerWith(table *rights.Table) (http.Handler, error) {
	deps := descriptor.Deps{
		Logger: s.logger, Telemetry: s.cfg.Telemetry, ValidateResponses: s.cfg.ValidateResponses,
		OnResponseViolation: s.cfg.OnResponseViolation, ResponseChecks: s.cfg.ResponseChecks,
	}
	e, err := deps.Echo(apiserver.Config{
		Name:         "sandbox",
		Title:        "apistack sandbox API",
		ErrorHandler: s.errorHandler,
		Before:       []echo.MiddlewareFunc{s.resolve},
		MaxBodyBytes: 1 << 20,
		// An inbound fax's document, base64.
		BodyLimits: map[string]int64{"TriggerInboundFax": MaxInboundDocument*4/3 + 1<<20},
	}, sandboxserver.GetSpec, authenticate)
	if err != nil {
		return nil, err
	}
	sandboxserver.RegisterHandlers(e, sandboxserver.NewStrictHandler(s, []sandboxserver.StrictMiddlewareFunc{authorizeOperations(table)}))
	return e, nil
}

// The kinds of callers: the roles of the spec's role table (on the
// sandboxToken scheme), by the names it gives them.
type role string

const (
	roleAdmin   role = "admin"
	roleCreator role = "sandbox_creator"
	roleSandbox role = "sandbox"
)

// caller is who a request's token stands for.
type caller struct {
	role    role
	sandbox string // roleSandbox: the sandbox's id
	err     error
	// wrong: the request bore a token that is none of those above (not one
	// that could not be checked).
	wrong bool
}

type callerKey struct{}

// resolve looks the bearer token up once per request: the admin token, the
// creator token (both compared by their hashes, in constant time), or a
// ready sandbox's token (found by its hash, then compared in constant time).
// A source that sent too many wrong tokens (Config.WrongTokens) is refused
// 429 before its token is looked at, right or wrong; a wrong token counts
// against its source. Requests without an Authorization header are not
// counted.
func (s *Server) resolve(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Header.Get("Authorization") == "" {
			return s.withCaller(c, next, s.caller(req))
		}
		src := failguard.Source(req)
		if wait, blocked := s.cfg.WrongTokens.Blocked(src); blocked {
			secs := int(math.Ceil(wait.Seconds()))
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			return &apiError{Status: http.StatusTooManyRequests, Name: sandboxapi.ErrorError(sandboxapi.TooManyRequestsErrorErrorTooManyRequests),
				Message: fmt.Sprintf("too many wrong tokens from this address; try again in %d s", secs)}
		}
		cl := s.caller(req)
		if cl.wrong {
			s.cfg.WrongTokens.Fail(src)
		}
		return s.withCaller(c, next, cl)
	}
}

// withCaller runs next with cl as the request's caller.
func (s *Server) withCaller(c echo.Context, next echo.HandlerFunc, cl *caller) error {
	req := c.Request()
	c.SetRequest(req.WithContext(context.WithValue(req.Context(), callerKey{}, cl)))
	return next(c)
}

func (s *Server) caller(req *http.Request) *caller {
	h := req.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return &caller{err: errors.New("an Authorization: Bearer <token> header is required (the admin, sandbox-creator or sandbox token)"), wrong: h != ""}
	}
	hash := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(hash[:], s.adminHash[:]) == 1 {
		return &caller{role: roleAdmin}
	}
	if s.creatorSet && subtle.ConstantTimeCompare(hash[:], s.creator[:]) == 1 {
		return &caller{role: roleCreator}
	}
	r, err := s.store.byToken(req.Context(), hash[:])
	switch {
	case errors.Is(err, errNoSandbox):
	case err != nil:
		s.logger.ErrorContext(req.Context(), "sandbox: look up token", "err", err)
		return &caller{err: errors.New("the token could not be checked; retry later")}
	case subtle.ConstantTimeCompare(r.TokenHash, hash[:]) == 1 && r.State == stateReady:
		return &caller{role: roleSandbox, sandbox: r.ID}
	}
	return &caller{err: errors.New("the token is not valid (a deleted sandbox's token stops working)"), wrong: true}
}

func callerFrom(ctx context.Context) *caller {
	cl, _ := ctx.Value(callerKey{}).(*caller)
	if cl == nil {
		return &caller{err: errors.New("the request was not authenticated")}
	}
	return cl
}

// authenticate is the spec's check of the sandboxToken scheme.
func authenticate(ctx context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecuritySchemeName != "sandboxToken" {
		return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
	}
	return callerFrom(ctx).err
}

// takeCreate spends one create of the calling token's rate: a token over it
// is refused 429, with Retry-After the time until one more is allowed.
func (s *Server) takeCreate(ctx context.Context) error {
	token := "creator"
	if callerFrom(ctx).role == roleAdmin {
		token = "admin"
	}
	d, err := s.creates.Take(ctx, token)
	if err != nil {
		return fmt.Errorf("sandbox create rate: %w", err)
	}
	if d.Allowed {
		return nil
	}
	wait := max(int(math.Ceil(d.RetryAt.Sub(s.clock.Now()).Seconds())), 1)
	return errTooManyRequests(wait, "this token may create %d sandboxes a minute; retry in %d s", d.Limit, wait)
}

// authorizeOperations is the API's one authorization: before an
// operation's handler runs it admits the caller's kind of token by the
// operation's x-apistack-roles, read from the spec at start, and answers
// 403 otherwise. Which sandbox a sandbox's token may touch is the handlers'
// business (mayControl).
func authorizeOperations(table *rights.Table) sandboxserver.StrictMiddlewareFunc {
	return func(next sandboxserver.StrictHandlerFunc, op string) sandboxserver.StrictHandlerFunc {
		return func(c echo.Context, req any) (any, error) {
			if err := admit(c.Request().Context(), table, op); err != nil {
				return nil, err
			}
			return next(c, req)
		}
	}
}

// admit decides whether the request's caller may call op; a map lookup, no
// allocation when it may.
func admit(ctx context.Context, table *rights.Table, op string) error {
	rule, ok := table.Rule(op)
	if !ok {
		return fmt.Errorf("sandbox: operation %s has no rights in the spec", op)
	}
	if rule.Open {
		return nil
	}
	cl := callerFrom(ctx)
	if cl.err != nil {
		return cl.err
	}
	if !rule.Allows(table.Caller(string(cl.role))) {
		return errForbidden("the %s token may not call %s; it needs the %s token", cl.role, op, strings.Join(rule.Names, " or "))
	}
	return nil
}

// mayControl lets the admin token at every sandbox and a sandbox's own
// token at its sandbox; to any other token (one the operation's roles let
// in) the sandbox does not exist.
func mayControl(ctx context.Context, id string) error {
	cl := callerFrom(ctx)
	if cl.role == roleAdmin || (cl.role == roleSandbox && cl.sandbox == id) {
		return nil
	}
	return errNotFound("no sandbox %s", id)
}

// newID returns a fresh sandbox id and token.
func newID() (id, token string) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return IDPrefix + hex.EncodeToString(b), "sbt_" + rand.Text()
}

// parseTTL reads a TTL as the spec allows it.
func parseTTL(s *string) (time.Duration, error) {
	if s == nil {
		return DefaultTTL, nil
	}
	d, err := time.ParseDuration(*s)
	if err != nil {
		return 0, errBadRequest("ttl %q is not a Go duration such as 30m or 1h", *s)
	}
	if d < MinTTL || d > MaxTTL {
		return 0, errBadRequest("ttl %s is out of range: at least %s, at most %s", d, MinTTL, MaxTTL)
	}
	return d, nil
}

// CreateSandbox creates a sandbox: its row first ('creating'), then its
// tenants in every API (seeded, then given the fixture; or copied from a
// snapshot), then its sealed credentials ('ready'). A failure deletes what
// was made.
func (s *Server) CreateSandbox(ctx context.Context, req sandboxserver.CreateSandboxRequestObject) (sandboxserver.CreateSandboxResponseObject, error) {
	body := req.Body
	if body == nil {
		body = &sandboxapi.CreateSandboxRequest{}
	}
	if body.Fixture != nil && body.Snapshot != nil {
		return nil, errBadRequest("give either fixture or snapshot, not both")
	}
	var snap snapshotRecord
	mode := ClockReal
	if body.Snapshot != nil {
		var err error
		if snap, err = s.readySnapshot(ctx, *body.Snapshot); err != nil {
			return nil, err
		}
		mode = snap.Clock
	}
	if body.Clock != nil {
		mode = string(*body.Clock)
	}
	if mode != ClockReal && mode != ClockFrozen {
		return nil, errBadRequest("clock %q is neither frozen nor real", mode)
	}
	ttl, err := parseTTL(body.Ttl)
	if err != nil {
		return nil, err
	}
	sections, err := fixtureSections(body.Fixture)
	if err != nil {
		return nil, err
	}
	// Only a create that would be made spends the token's rate.
	if err := s.takeCreate(ctx); err != nil {
		return nil, err
	}
	id, token := newID()
	tokenHash := sha256.Sum256([]byte(token))
	now := s.clock.Now()
	r := record{ID: id, TokenHash: tokenHash[:], Clock: mode, TTL: ttl, State: stateCreating, CreatedAt: now, LastUsedAt: now, ClockBase: now}
	if body.Snapshot != nil {
		r.ClockBase = snap.ClockTime
	}
	if err := s.store.insertCapped(ctx, r, s.cfg.MaxSandboxes); err != nil {
		return nil, err
	}
	creds, named, err := s.makeTenants(ctx, id, sections, body.Snapshot != nil, snap)
	if err == nil {
		r.Credentials = s.box.Seal(sealLabel(id), creds)
		r.Named, err = s.sealNamed(id, named)
	}
	if err == nil {
		err = s.store.ready(ctx, id, r.Credentials, r.Named)
	}
	if err != nil {
		cleanup := context.WithoutCancel(ctx)
		if rerr := s.remove(cleanup, id); rerr != nil {
			err = errors.Join(err, rerr)
		}
		var fe *descriptor.FixtureError
		if errors.As(err, &fe) {
			return nil, errFixture(fe)
		}
		return nil, fmt.Errorf("create sandbox %s: %w", id, err)
	}
	if body.Snapshot != nil {
		s.faults.changed()
	}
	r.State = stateReady
	out, err := s.view(r)
	if err != nil {
		return nil, err
	}
	return sandboxserver.CreateSandbox201JSONResponse{
		Id: out.Id, Clock: out.Clock, Now: out.Now, Ttl: out.Ttl, CreatedAt: out.CreatedAt, LastUsedAt: out.LastUsedAt,
		ExpiresAt: out.ExpiresAt, Credentials: out.Credentials, FixtureCredentials: out.FixtureCredentials, Token: token,
	}, nil
}

// makeTenants makes the tenants of the new sandbox id: copied from snap
// (fork), or seeded and given the fixture's sections. It returns their
// credentials and the fixture's, by API.
func (s *Server) makeTenants(ctx context.Context, id string, sections map[string]json.RawMessage, fork bool, snap snapshotRecord) (json.RawMessage, map[string]json.RawMessage, error) {
	if fork {
		creds, named, err := s.snapshotCredentials(snap)
		if err != nil {
			return nil, nil, err
		}
		creds, named, _, err = s.cfg.Tenants.Copy(ctx, snapshotSet(snap.ID), id, creds, named)
		if err != nil {
			return nil, nil, err
		}
		return creds, named, s.store.forkFaults(ctx, snap.ID, id)
	}
	creds, err := s.cfg.Tenants.Seed(ctx, id)
	if err != nil || len(sections) == 0 {
		return creds, nil, err
	}
	named, err := s.cfg.Tenants.Fixture(ctx, id, creds, sections)
	return creds, named, err
}

func sealLabel(id string) string { return "sandbox-credentials:" + id }

// view is the sandbox r as the API shows it.
func (s *Server) view(r record) (sandboxapi.Sandbox, error) {
	out := sandboxapi.Sandbox{
		Id: r.ID, Clock: sandboxapi.ClockMode(r.Clock), Ttl: r.TTL.String(),
		CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, ExpiresAt: r.LastUsedAt.Add(r.TTL),
		Now: s.clocks.For(r.ID).Now().UTC(),
	}
	creds, err := s.credentials(r)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(creds, &out.Credentials); err != nil {
		return out, fmt.Errorf("sandbox %s: credentials: %w", r.ID, err)
	}
	named, err := s.openNamed(r.ID, r.Named)
	if err != nil {
		return out, err
	}
	if len(named) > 0 {
		raw, err := json.Marshal(named)
		if err != nil {
			return out, err
		}
		out.FixtureCredentials = new(sandboxapi.FixtureCredentials)
		if err := json.Unmarshal(raw, out.FixtureCredentials); err != nil {
			return out, fmt.Errorf("sandbox %s: fixture credentials: %w", r.ID, err)
		}
	}
	return out, nil
}

func (s *Server) credentials(r record) (json.RawMessage, error) {
	creds, err := s.box.Open(sealLabel(r.ID), r.Credentials)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: open credentials: %w", r.ID, err)
	}
	return creds, nil
}

// ready returns the ready sandbox id the caller controls, recording a use.
func (s *Server) ready(ctx context.Context, id string) (record, error) {
	if err := mayControl(ctx, id); err != nil {
		return record{}, err
	}
	r, err := s.store.get(ctx, id)
	if errors.Is(err, errNoSandbox) || (err == nil && r.State != stateReady) {
		return record{}, errNotFound("no sandbox %s", id)
	}
	if err != nil {
		return record{}, err
	}
	now := s.clock.Now()
	if err := s.store.touch(ctx, id, now); err != nil {
		return record{}, err
	}
	if now.After(r.LastUsedAt) {
		r.LastUsedAt = now
	}
	return r, nil
}

// GetSandbox answers the sandbox (never its token).
func (s *Server) GetSandbox(ctx context.Context, req sandboxserver.GetSandboxRequestObject) (sandboxserver.GetSandboxResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	out, err := s.view(r)
	if err != nil {
		return nil, err
	}
	return sandboxserver.GetSandbox200JSONResponse(out), nil
}

// DeleteSandbox deletes the sandbox, its tenants and its journal.
func (s *Server) DeleteSandbox(ctx context.Context, req sandboxserver.DeleteSandboxRequestObject) (sandboxserver.DeleteSandboxResponseObject, error) {
	if err := mayControl(ctx, req.Id); err != nil {
		return nil, err
	}
	if err := s.Delete(ctx, req.Id); err != nil {
		if errors.Is(err, errNoSandbox) {
			return nil, errNotFound("no sandbox %s", req.Id)
		}
		return nil, err
	}
	return sandboxserver.DeleteSandbox204Response{}, nil
}

// Delete deletes the sandbox id: its token stops working first, then its
// tenants go from every API, then its row and journal. A delete cut short
// is finished by the sweep.
func (s *Server) Delete(ctx context.Context, id string) error {
	if err := s.store.markDeleting(ctx, id); err != nil {
		return err
	}
	return s.remove(ctx, id)
}

// remove deletes the tenants of id and then its row.
func (s *Server) remove(ctx context.Context, id string) error {
	s.journal.Flush(ctx)
	s.hooks.forget(id, false)
	if err := s.cfg.Tenants.Delete(ctx, id); err != nil {
		return fmt.Errorf("delete the tenants of sandbox %s: %w", id, err)
	}
	defer s.clocks.forget(id)
	if err := s.store.remove(ctx, id); err != nil {
		return err
	}
	// The journal's pages go back to the file system (PostgreSQL's rows
	// are gone with the delete; autovacuum reuses their space).
	if err := sqlitedb.ReclaimSpace(ctx, s.cfg.DB.SQL()); err != nil {
		s.logger.WarnContext(ctx, "reclaim the space of a deleted sandbox", "sandbox", id, "err", err)
	}
	return nil
}

// ResetSandbox puts the sandbox back as it was right after its creation.
func (s *Server) ResetSandbox(ctx context.Context, req sandboxserver.ResetSandboxRequestObject) (sandboxserver.ResetSandboxResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	creds, err := s.credentials(r)
	if err != nil {
		return nil, err
	}
	s.journal.Flush(ctx)
	// The clock first: the tenants are seeded again in the sandbox's time
	// of a new sandbox.
	now := s.clock.Now().UTC().Truncate(time.Microsecond)
	if err := s.store.clearJournal(ctx, r.ID, now); err != nil {
		return nil, err
	}
	s.clocks.put(r.ID, clockState{Mode: r.Clock, Base: now, Ref: now})
	if err := s.cfg.Tenants.Reset(ctx, r.ID, creds); err != nil {
		return nil, fmt.Errorf("reset sandbox %s: %w", r.ID, err)
	}
	if err := s.clearFaults(ctx, r.ID); err != nil {
		return nil, err
	}
	r.Named = ""
	out, err := s.view(r)
	if err != nil {
		return nil, err
	}
	return sandboxserver.ResetSandbox200JSONResponse(out), nil
}

// defaultJournalPage is the page size of ListSandboxRequests without limit.
const defaultJournalPage = 100

// ListSandboxRequests answers the sandbox's journal, oldest first.
func (s *Server) ListSandboxRequests(ctx context.Context, req sandboxserver.ListSandboxRequestsRequestObject) (sandboxserver.ListSandboxRequestsResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	s.journal.Flush(ctx)
	f := filterOf(req.Params)
	entries, more, err := s.store.journal(ctx, r.ID, f)
	if err != nil {
		return nil, err
	}
	dropped, err := s.store.journalDropped(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	page := sandboxapi.JournalPage{Data: make([]sandboxapi.JournalEntry, 0, len(entries)), Dropped: &dropped,
		Budget: &sandboxapi.JournalBudget{Entries: s.cfg.JournalBudget.Entries, Bytes: s.cfg.JournalBudget.Bytes}}
	for _, e := range entries {
		page.Data = append(page.Data, entryView(e))
	}
	if more && len(entries) > 0 {
		next := entries[len(entries)-1].Seq
		page.NextAfter = &next
	}
	return sandboxserver.ListSandboxRequests200JSONResponse(page), nil
}

// filterOf is the journal filter of ListSandboxRequests' parameters.
func filterOf(p sandboxapi.ListSandboxRequestsParams) journalFilter {
	f := journalFilter{Limit: defaultJournalPage, Since: p.Since}
	if p.Api != nil {
		f.API = string(*p.Api)
	}
	setIf(&f.Operation, p.Operation)
	setIf(&f.Status, p.Status)
	setIf(&f.After, p.After)
	setIf(&f.Limit, p.Limit)
	return f
}

// setIf sets *dst to *v when v is given (a request's optional field).
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func entryView(e storedEntry) sandboxapi.JournalEntry {
	out := sandboxapi.JournalEntry{
		Seq: e.Seq, Api: sandboxapi.JournalEntryApi(e.API), Operation: e.Operation, Method: e.Method, Path: e.Path,
		Status: e.Status, Time: e.Time, SandboxTime: e.SetTime, DurationMs: float64(e.Duration.Microseconds()) / 1000,
		RequestHeaders: sandboxapi.Headers(e.RequestHeaders), ResponseHeaders: sandboxapi.Headers(e.ResponseHeaders),
		RequestBodyTruncated: e.RequestTruncated, ResponseBodyTruncated: e.ResponseTruncated,
	}
	if e.Query != "" {
		q := e.Query
		out.Query = &q
	}
	out.RequestBody, out.RequestBodyEncoding = bodyText(e.RequestBody, e.RequestTruncated)
	out.ResponseBody, out.ResponseBodyEncoding = bodyText(e.ResponseBody, e.ResponseTruncated)
	out.Violations = make([]sandboxapi.JournalViolation, 0, len(e.Violations))
	for _, v := range e.Violations {
		out.Violations = append(out.Violations, sandboxapi.JournalViolation{In: sandboxapi.JournalViolationIn(v.In), Name: v.Name, Rule: v.Message})
	}
	return out
}

// Run deletes the sandboxes past their TTL every SweepInterval of the
// stack's clock, and runs the due work of their clocks (drive), until ctx
// ends.
func (s *Server) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(2)
	go func() { defer wg.Done(); s.clocks.run(ctx) }()
	go func() { defer wg.Done(); s.drive(ctx) }()
	for {
		t := clock.NewTimerAt(s.clock, s.clock.Now().Add(s.cfg.SweepInterval))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.logger.ErrorContext(ctx, "sandbox: sweep", "err", err)
		}
	}
}

// Sweep deletes, once, every sandbox past its TTL (and finishes deletes and
// creations cut short), and returns how many it deleted.
func (s *Server) Sweep(ctx context.Context) (int, error) {
	ids, err := s.store.due(ctx, s.clock.Now(), staleCreation)
	if err != nil {
		return 0, err
	}
	n, err := deleteDue(ctx, ids, s.Delete, errNoSandbox, func(id string) {
		s.logger.InfoContext(ctx, "sandbox: deleted after its TTL", "sandbox", id)
	})
	if _, serr := s.sweepSnapshots(ctx); serr != nil {
		err = errors.Join(err, serr)
	}
	return n, err
}

// deleteDue deletes each of ids with del until ctx ends, and returns how
// many it deleted (one that del finds gone already, answering gone, counts
// as deleted) with the errors of the others joined. A delete once begun is
// finished, even when ctx ends meanwhile. deleted, when not nil, is told
// each id counted.
func deleteDue(ctx context.Context, ids []string, del func(context.Context, string) error, gone error, deleted func(id string)) (int, error) {
	var errs []error
	n := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		if err := del(context.WithoutCancel(ctx), id); err != nil && !errors.Is(err, gone) {
			errs = append(errs, err)
			continue
		}
		if deleted != nil {
			deleted(id)
		}
		n++
	}
	return n, errors.Join(errs...)
}
