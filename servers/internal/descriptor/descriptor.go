// Package descriptor is how each API of apistack describes itself to the
// code that assembles the APIs (servers/stack, `apistack serve`, the test
// kit and the per-API test harnesses): its name, its migrations, its
// settings, how to build its server from the dependencies every API shares,
// and how to seed one isolated set of its tenants. Each server package
// exports one API value; the assemblers loop over the list instead of wiring
// each API by hand, so adding a knob to one API touches that API's package
// alone.
package descriptor

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/migrationset"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/validation"
)

// Migrations are one API's schema: its name (the PostgreSQL schema, the
// SQLite file's base name) and its goose migrations in each dialect.
type Migrations struct {
	Schema           string
	SQLite, Postgres fs.FS
}

// Deps are the dependencies every API's server takes alike: each server's
// Config embeds them.
type Deps struct {
	// DB is the API's database, migrated with its Migrations.
	DB *sql.DB
	// Clock tells the time; nil means the system clock.
	Clock clock.Clock
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
	// ValidateResponses checks every response against the spec.
	ValidateResponses bool
	// OnResponseViolation is called for a response that breaks the spec
	// (tests fail on it); nil logs it.
	OnResponseViolation func(r *http.Request, status int, err error)
	// ResponseChecks, when set, checks responses after sending them on its
	// bounded pool, sampling when it is saturated (apistack serve
	// --validate-responses); nil checks each response before sending it, so a
	// test hears of every violation before it sees the answer.
	ResponseChecks *validation.Background
	// Hooks let the in-process test kit inject faults and hear of the
	// requests that break the spec (apistacktest); the zero value does
	// nothing.
	Hooks apiserver.Hooks
	// Telemetry counts the server's requests and events for /metrics and
	// feeds the console's request log; nil records nothing.
	Telemetry *telemetry.Telemetry
	// Journal keeps the requests made with the sandboxes' credentials
	// (servers/sandbox); nil keeps none.
	Journal apiserver.Journal
	// Clocks tells the clock of a tenant set by its name (a sandbox's own
	// clock for its set); nil means Clock for every set. See ClockFor.
	Clocks func(set string) clock.Clock
}

// ClockFor returns the clock of the tenant set named set: what Clocks says
// for it, Clock when Clocks is nil or says nil. What an API does for a
// tenant in time (expiry, windows, its simulators' steps) reads this clock.
func (d Deps) ClockFor(set string) clock.Clock {
	if d.Clocks != nil {
		if c := d.Clocks(set); c != nil {
			return c
		}
	}
	if d.Clock == nil {
		return clock.System{}
	}
	return d.Clock
}

// SandboxSetPrefix starts the name of every sandbox's tenant set.
const SandboxSetPrefix = "sbx-"

// IsSandboxSet reports whether set is a sandbox's tenant set.
func IsSandboxSet(set string) bool { return strings.HasPrefix(set, SandboxSetPrefix) }

// WithDefaults returns d with a nil Clock and Logger set to the system
// clock and slog.Default().
func (d Deps) WithDefaults() Deps {
	if d.Clock == nil {
		d.Clock = clock.System{}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return d
}

// Env is what an assembler gives an API's constructor: the shared
// dependencies, and those only some APIs take.
type Env struct {
	Deps
	// MasterKey seals the API's secrets at rest (APIs with SealsSecrets).
	MasterKey []byte
	// WebhookTransport, when set, wraps the transport of the webhooks the
	// server sends (the test kit's fault injection; fax).
	WebhookTransport func(http.RoundTripper) http.RoundTripper
	// DisableValidation turns the spec validation of requests and
	// responses off, to measure what it costs (benchmarks; PAM only:
	// pam.Config.DisableValidation).
	DisableValidation bool
}

// Server is what every API's server is to the assemblers.
type Server interface {
	// Handler returns the server's HTTP handler.
	Handler() (http.Handler, error)
}

// TenantSet names one isolated set of tenants, one in each API, with the
// credentials of each in a section of demo-credentials.json.
type TenantSet struct {
	// Name names the set; each API derives its tenants' names from it. The
	// set named DemoSet is `apistack serve --demo`'s.
	Name string
	// URLs are the base URL of every API by name; each API writes its own
	// into its credentials.
	URLs map[string]string
	// WebhookURL is where the set's webhooks go; "" means the admin port's
	// inbox (URLs["admin"]).
	WebhookURL string
	// SampleSize is the size of the sample data generated for the set (the
	// restaurant's menu items); 0 generates none.
	SampleSize int
}

// DemoSet is the name of the demo tenants' set.
const DemoSet = "demo"

// API describes one API: S is its settings, Srv its server, C its section of
// demo-credentials.json.
type API[S any, Srv Server, C any] struct {
	// Name is the API's, as the specs, ports and credentials name it, and
	// its schema's (Migrations).
	Name string
	// Files holds the API's goose migrations, as the API embeds them
	// (//go:embed migrations): those both dialects share in migrations/,
	// each dialect's own in migrations/sqlite/ and migrations/postgres/
	// (servers/internal/migrationset).
	Files fs.FS
	// SealsSecrets says the server needs Deps.MasterKey.
	SealsSecrets bool
	// New builds the server on e with settings s (zero fields: defaults).
	New func(ctx context.Context, e Env, s S) (Srv, error)
	// Seed creates the tenants of set in srv, idempotently: what previous
	// (the set's credentials of an earlier run, or nil) names and still
	// works is kept. It returns the set's credentials.
	Seed func(ctx context.Context, srv Srv, set TenantSet, previous *C) (*C, error)
	// Reset puts the set's tenants back as Seed left them: creds (what Seed
	// returned) keep working, everything made since is gone.
	Reset func(ctx context.Context, srv Srv, set TenantSet, creds *C) error
	// Delete removes the set's tenants with all their data; their
	// credentials stop working at once. Deleting a set that is (partly)
	// gone is not an error.
	Delete func(ctx context.Context, srv Srv, set TenantSet) error
	// Advance runs, before it returns, the work of the set's tenants that
	// is due at now on the set's clock (a sandbox's clock was moved to
	// now): the steps of the API's simulators, its deliveries. It must be
	// safe to run on several replicas at once and again after a crash
	// (claims). nil: the API has no work in time of its own.
	Advance func(ctx context.Context, srv Srv, set TenantSet, now time.Time) error
	// Fixture applies section, the API's part of a sandbox's fixture
	// document (JSON), to the set's tenants as Seed made them (creds), in
	// one transaction: all of it or, with an error, nothing. It returns the
	// credentials it made by the names the section gave them (JSON; nil for
	// none). A section that breaks a rule answers a *FixtureError. nil: the
	// API takes no part in fixtures.
	Fixture func(ctx context.Context, srv Srv, set TenantSet, creds *C, section json.RawMessage) (json.RawMessage, error)
	// Copy copies every row of the tenants of set from into new tenants of
	// set to, inside the database and in one transaction, ids remapped in
	// the statements that copy them, and gives the copy new credentials:
	// what worked on from does not work on to. creds are from's, named the
	// credentials a fixture made in from (Fixture's answer, or nil); it
	// returns to's, both alike. nil: the API's rows are not copied (a
	// snapshot does not hold them; a fork seeds fresh tenants).
	Copy func(ctx context.Context, srv Srv, from, to TenantSet, creds *C, named json.RawMessage) (*C, json.RawMessage, error)
}

// FixtureError is a fixture section that breaks a rule: Pointer is the JSON
// pointer of the field at fault within the section ("/groups/1/name").
type FixtureError struct {
	Pointer string
	Message string
}

func (e *FixtureError) Error() string { return e.Pointer + ": " + e.Message }

// Fixturef returns a *FixtureError at pointer.
func Fixturef(pointer, format string, args ...any) *FixtureError {
	return &FixtureError{Pointer: pointer, Message: fmt.Sprintf(format, args...)}
}

// Bound is an API with its settings, as an assembler loops over it.
type Bound interface {
	// Name is the API's.
	Name() string
	// Migrations are the API's schema.
	Migrations() Migrations
	// SealsSecrets says the server needs Deps.MasterKey.
	SealsSecrets() bool
	// Open builds the server on e.
	Open(ctx context.Context, e Env) (Server, error)
	// Seed runs the API's Seed on srv (a server Open returned); previous
	// and the result are the API's section of demo-credentials.json.
	Seed(ctx context.Context, srv Server, set TenantSet, previous json.RawMessage) (json.RawMessage, error)
	// Reset runs the API's Reset on srv with creds, the API's section of
	// the set's credentials.
	Reset(ctx context.Context, srv Server, set TenantSet, creds json.RawMessage) error
	// Delete runs the API's Delete on srv.
	Delete(ctx context.Context, srv Server, set TenantSet) error
	// Advance runs the API's Advance on srv (nothing when it has none).
	Advance(ctx context.Context, srv Server, set TenantSet, now time.Time) error
	// Fixture runs the API's Fixture on srv with creds, the API's section
	// of the set's credentials; an API without one refuses any section.
	Fixture(ctx context.Context, srv Server, set TenantSet, creds, section json.RawMessage) (json.RawMessage, error)
	// Copies says the API has a Copy.
	Copies() bool
	// Copy runs the API's Copy on srv; creds and named are from's, the
	// answers to's.
	Copy(ctx context.Context, srv Server, from, to TenantSet, creds, named json.RawMessage) (json.RawMessage, json.RawMessage, error)
}

// Migrations are the API's schema.
func (a API[S, Srv, C]) Migrations() Migrations {
	return Migrations{
		Schema:   a.Name,
		SQLite:   migrationset.Must(a.Files, "migrations", migrationset.SQLite),
		Postgres: migrationset.Must(a.Files, "migrations", migrationset.Postgres),
	}
}

// Bind binds a to its settings (read when Open is called) and to where Open
// puts the server it builds (nil: nowhere).
func (a API[S, Srv, C]) Bind(settings *S, server *Srv) Bound {
	return bound[S, Srv, C]{api: a, settings: settings, server: server}
}

type bound[S any, Srv Server, C any] struct {
	api      API[S, Srv, C]
	settings *S
	server   *Srv
}

func (b bound[S, Srv, C]) Name() string           { return b.api.Name }
func (b bound[S, Srv, C]) Migrations() Migrations { return b.api.Migrations() }
func (b bound[S, Srv, C]) SealsSecrets() bool     { return b.api.SealsSecrets }

func (b bound[S, Srv, C]) Open(ctx context.Context, e Env) (Server, error) {
	var s S
	if b.settings != nil {
		s = *b.settings
	}
	srv, err := b.api.New(ctx, e, s)
	if err != nil {
		return nil, err
	}
	if b.server != nil {
		*b.server = srv
	}
	return srv, nil
}

func (b bound[S, Srv, C]) Seed(ctx context.Context, srv Server, set TenantSet, previous json.RawMessage) (json.RawMessage, error) {
	typed, ok := srv.(Srv)
	if !ok {
		return nil, fmt.Errorf("%s: seed: a %T is not this API's server", b.api.Name, srv)
	}
	var prev *C
	if len(previous) > 0 && string(previous) != "null" {
		prev = new(C)
		if err := json.Unmarshal(previous, prev); err != nil {
			prev = nil // damaged: the seed issues fresh credentials
		}
	}
	creds, err := b.api.Seed(ctx, typed, set, prev)
	if err != nil {
		return nil, err
	}
	return json.Marshal(creds)
}

func (b bound[S, Srv, C]) typed(srv Server, op string) (Srv, error) {
	typed, ok := srv.(Srv)
	if !ok {
		return typed, fmt.Errorf("%s: %s: a %T is not this API's server", b.api.Name, op, srv)
	}
	return typed, nil
}

func (b bound[S, Srv, C]) Reset(ctx context.Context, srv Server, set TenantSet, creds json.RawMessage) error {
	typed, err := b.typed(srv, "reset")
	if err != nil {
		return err
	}
	c := new(C)
	if err := json.Unmarshal(creds, c); err != nil {
		return fmt.Errorf("%s: reset: the set's credentials: %w", b.api.Name, err)
	}
	return b.api.Reset(ctx, typed, set, c)
}

func (b bound[S, Srv, C]) Delete(ctx context.Context, srv Server, set TenantSet) error {
	typed, err := b.typed(srv, "delete")
	if err != nil {
		return err
	}
	return b.api.Delete(ctx, typed, set)
}

// Echo builds an API's echo server on these dependencies. c says what is the
// API's own (its name, title, error handler, middleware and body limits, and
// Validation.Skip); Echo adds the rest, alike for every API: the spec, parsed
// once per process by load; the validation of requests, whose credentials
// auth checks, and of responses as ValidateResponses, ResponseChecks and
// OnResponseViolation say; the logger, the hooks, the telemetry's observer
// and the journal.
func (d Deps) Echo(c apiserver.Config, load func() (*openapi3.T, error), auth openapi3filter.AuthenticationFunc) (*echo.Echo, error) {
	spec, err := apiserver.Spec(c.Name, load)
	if err != nil {
		return nil, fmt.Errorf("%s: load spec: %w", c.Name, err)
	}
	c.Validation = validation.Options{
		Spec:                spec,
		Authenticate:        auth,
		ValidateResponses:   d.ValidateResponses,
		OnResponseViolation: d.OnResponseViolation,
		Background:          d.ResponseChecks,
		Skip:                c.Validation.Skip,
		StreamedBodies:      c.Validation.StreamedBodies,
	}
	c.Logger, c.Hooks, c.Journal = d.Logger, d.Hooks, d.Journal
	c.Observer = d.Telemetry.Observer()
	return apiserver.New(c)
}

func (b bound[S, Srv, C]) Advance(ctx context.Context, srv Server, set TenantSet, now time.Time) error {
	if b.api.Advance == nil {
		return nil
	}
	typed, err := b.typed(srv, "advance")
	if err != nil {
		return err
	}
	return b.api.Advance(ctx, typed, set, now)
}

func (b bound[S, Srv, C]) Fixture(ctx context.Context, srv Server, set TenantSet, creds, section json.RawMessage) (json.RawMessage, error) {
	if b.api.Fixture == nil {
		return nil, Fixturef("", "the %s API takes no part in fixtures", b.api.Name)
	}
	typed, err := b.typed(srv, "fixture")
	if err != nil {
		return nil, err
	}
	c := new(C)
	if err := json.Unmarshal(creds, c); err != nil {
		return nil, fmt.Errorf("%s: fixture: the set's credentials: %w", b.api.Name, err)
	}
	return b.api.Fixture(ctx, typed, set, c, section)
}

func (b bound[S, Srv, C]) Copies() bool { return b.api.Copy != nil }

func (b bound[S, Srv, C]) Copy(ctx context.Context, srv Server, from, to TenantSet, creds, named json.RawMessage) (json.RawMessage, json.RawMessage, error) {
	if b.api.Copy == nil {
		return nil, nil, fmt.Errorf("%s: the API has no copy", b.api.Name)
	}
	typed, err := b.typed(srv, "copy")
	if err != nil {
		return nil, nil, err
	}
	c := new(C)
	if err := json.Unmarshal(creds, c); err != nil {
		return nil, nil, fmt.Errorf("%s: copy: the set's credentials: %w", b.api.Name, err)
	}
	out, outNamed, err := b.api.Copy(ctx, typed, from, to, c, named)
	if err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: copy: %w", b.api.Name, err)
	}
	return raw, outNamed, nil
}
