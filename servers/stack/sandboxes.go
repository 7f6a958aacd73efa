package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/sandbox"
)

// SandboxMigrations are the sandbox API's schema.
var SandboxMigrations = Migrations{Schema: Sandbox, SQLite: sandbox.Migrations(), Postgres: sandbox.PostgresMigrations()}

// openSandboxes opens the sandbox database and builds the sandbox API,
// whose tenants are this stack's (sandboxTenants).
func (st *Stack) openSandboxes(ctx context.Context) error {
	db, err := st.cfg.opener()(ctx, SandboxMigrations)
	if err != nil {
		return fmt.Errorf("%s database: %w", Sandbox, err)
	}
	st.sandboxDB = db
	key, err := st.cfg.masterKey(Sandbox)
	if err != nil {
		return err
	}
	d := st.cfg.env(Sandbox, nil)
	st.Sandboxes, err = sandbox.New(sandbox.Config{
		DB: sqldb.New(db, sqldb.Options{SerializeWrites: true}), MasterKey: key, Tenants: sandboxTenants{st}, Fax: sandboxFax{st}, Webhooks: faxWebhooks{st},
		AdminToken: st.AdminToken, CreatorToken: st.SandboxCreatorToken, Clock: st.cfg.Clock,
		Advance:       sandboxTenants{st}.Advance,
		SweepInterval: st.cfg.SandboxSweepInterval, SnapshotLimit: st.cfg.SnapshotLimit, Logger: st.logger,
		MaxSandboxes: st.cfg.MaxSandboxes, CreatesPerMinute: st.cfg.SandboxCreatesPerMinute, JournalBudget: st.cfg.SandboxJournalBudget,
		ValidateResponses: st.cfg.ValidateResponses, ResponseChecks: st.cfg.ResponseChecks,
		OnResponseViolation: d.OnResponseViolation, Telemetry: st.cfg.Telemetry, WrongTokens: st.wrongTokens,
	})
	return err
}

// withSandboxes serves the sandbox API beside the admin API: every path
// under SandboxesPath, and the sandbox spec at SandboxesPath+"/openapi.yaml".
func (st *Stack) withSandboxes(adminHandler http.Handler) (http.Handler, error) {
	sh, err := st.Sandboxes.Handler()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Sandbox, err)
	}
	inbox, err := st.sandboxInbox()
	if err != nil {
		return nil, fmt.Errorf("%s inbox: %w", Sandbox, err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if id, ok := inboxID(p); ok {
			inbox(id, w, r)
			return
		}
		switch {
		case p == SandboxesPath+"/openapi.yaml":
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/openapi.yaml"
			sh.ServeHTTP(w, r2)
		case p == SandboxesPath || strings.HasPrefix(p, SandboxesPath+"/"):
			sh.ServeHTTP(w, r)
		default:
			adminHandler.ServeHTTP(w, r)
		}
	}), nil
}

// sandboxTenants makes the sandboxes' tenant sets with the stack's APIs.
type sandboxTenants struct{ st *Stack }

// set is the tenant set of the sandbox named name.
func (t sandboxTenants) set(name string) TenantSet {
	size := t.st.cfg.SandboxSampleSize
	if size <= 0 {
		size = DefaultSandboxSampleSize
	}
	return TenantSet{Name: name, URLs: t.st.urls, SampleSize: size, WebhookURL: t.st.urls[Admin] + sandbox.InboxPathOf(name)}
}

// Seed creates the set in every API and returns the sections of its
// credentials.
func (t sandboxTenants) Seed(ctx context.Context, name string) (json.RawMessage, error) {
	if name == descriptor.DemoSet {
		return nil, errors.New("stack: the demo set is not a sandbox's")
	}
	out := map[string]json.RawMessage{}
	for _, a := range t.st.apis {
		creds, err := a.Seed(ctx, a.server, t.set(name), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Name(), err)
		}
		out[a.Name()] = creds
	}
	return json.Marshal(out)
}

// Reset resets the set in every API.
func (t sandboxTenants) Reset(ctx context.Context, name string, creds json.RawMessage) error {
	var sections map[string]json.RawMessage
	if err := json.Unmarshal(creds, &sections); err != nil {
		return fmt.Errorf("stack: the credentials of %s: %w", name, err)
	}
	for _, a := range t.st.apis {
		if err := a.Reset(ctx, a.server, t.set(name), sections[a.Name()]); err != nil {
			return err
		}
	}
	return nil
}

// Delete deletes the set from every API.
func (t sandboxTenants) Delete(ctx context.Context, name string) error {
	if name == descriptor.DemoSet {
		return errors.New("stack: the demo set is never deleted")
	}
	var errs []error
	for _, a := range t.st.apis {
		errs = append(errs, a.Delete(ctx, a.server, t.set(name)))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// The space of the set's rows goes back to the file system.
	for _, a := range t.st.apis {
		if db := t.st.DB(a.Name()); db != nil {
			if err := sqlitedb.ReclaimSpace(ctx, db); err != nil {
				t.st.logger.WarnContext(ctx, "reclaim the space of a deleted sandbox", "api", a.Name(), "err", err)
			}
		}
	}
	return nil
}

// Advance runs the set's work due at now (its clock moved there) in every
// API.
func (t sandboxTenants) Advance(ctx context.Context, name string, now time.Time) error {
	for _, a := range t.st.apis {
		if err := a.Advance(ctx, a.server, t.set(name), now); err != nil {
			return fmt.Errorf("%s: %w", a.Name(), err)
		}
	}
	return nil
}

// sandboxFax is the stack's fax server, for the sandboxes' inbound-fax
// trigger.
type sandboxFax struct{ st *Stack }

// InjectInbound makes an inbound fax arrive.
func (f sandboxFax) InjectInbound(ctx context.Context, in fax.InboundFax) (string, error) {
	if f.st.Fax == nil {
		return "", errors.New("stack: the fax API is not served")
	}
	return f.st.Fax.Operator().InjectInbound(ctx, in)
}

// Fixture applies the sections of a fixture (by API name) to the sandbox's
// set whose credentials creds are (sandbox.Tenants).
func (t sandboxTenants) Fixture(ctx context.Context, name string, creds json.RawMessage, sections map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	var have map[string]json.RawMessage
	if err := json.Unmarshal(creds, &have); err != nil {
		return nil, fmt.Errorf("stack: the credentials of %s: %w", name, err)
	}
	return t.st.fixture(ctx, t.set(name), have, sections)
}

// Fixture applies a fixture document (specs/sandbox, Fixture: a section
// per API, by name) to the tenant set set whose credentials creds are (what
// Seed returned), each API's section in its own transaction, in the order
// the stack starts the APIs, and returns the credentials each section made,
// by the fixture's names, by API. A section that breaks a rule answers a
// *descriptor.FixtureError whose pointer is within the document.
func (st *Stack) Fixture(ctx context.Context, set TenantSet, creds Credentials, fixture json.RawMessage) (map[string]json.RawMessage, error) {
	have, err := sections(creds)
	if err != nil {
		return nil, err
	}
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(fixture, &parts); err != nil {
		return nil, descriptor.Fixturef("", "a fixture is a JSON object of sections by API name: %v", err)
	}
	return st.fixture(ctx, set, have, parts)
}

// fixture applies the sections to set, whose credentials are have, by API.
// A section for an API the stack does not serve is refused.
func (st *Stack) fixture(ctx context.Context, set TenantSet, have, sections map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	served := map[string]bool{}
	for _, a := range st.apis {
		served[a.Name()] = true
	}
	for api := range sections {
		if !served[api] {
			return nil, descriptor.Fixturef("/"+api, "this stack serves no %s API", api)
		}
	}
	named := map[string]json.RawMessage{}
	for _, a := range st.apis {
		section, ok := sections[a.Name()]
		if !ok || len(section) == 0 || string(section) == "null" {
			continue
		}
		out, err := a.Fixture(ctx, a.server, set, have[a.Name()], section)
		var fe *descriptor.FixtureError
		if errors.As(err, &fe) {
			return nil, &descriptor.FixtureError{Pointer: "/" + a.Name() + fe.Pointer, Message: fe.Message}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: fixture: %w", a.Name(), err)
		}
		if len(out) > 0 {
			named[a.Name()] = out
		}
	}
	return named, nil
}

// Copy copies the tenants of set from into set to in every API that can
// copy its rows (each API's copy is one transaction inside its database),
// and seeds fresh tenants of to in the others. creds and named are from's
// credentials and fixture credentials; it returns to's, and the APIs whose
// rows it copied.
func (t sandboxTenants) Copy(ctx context.Context, from, to string, creds json.RawMessage, named map[string]json.RawMessage) (json.RawMessage, map[string]json.RawMessage, []string, error) {
	var have map[string]json.RawMessage
	if err := json.Unmarshal(creds, &have); err != nil {
		return nil, nil, nil, fmt.Errorf("stack: the credentials of %s: %w", from, err)
	}
	out := map[string]json.RawMessage{}
	outNamed := map[string]json.RawMessage{}
	var copied []string
	for _, a := range t.st.apis {
		if !a.Copies() {
			c, err := a.Seed(ctx, a.server, t.set(to), nil)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%s: %w", a.Name(), err)
			}
			out[a.Name()] = c
			continue
		}
		c, n, err := a.Copy(ctx, a.server, t.set(from), t.set(to), have[a.Name()], named[a.Name()])
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: copy %s to %s: %w", a.Name(), from, to, err)
		}
		out[a.Name()] = c
		if len(n) > 0 {
			outNamed[a.Name()] = n
		}
		copied = append(copied, a.Name())
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, nil, nil, err
	}
	return raw, outNamed, copied, nil
}

// DemoRestaurantMenuItems is the size of the demo restaurant's generated
// configuration (the benchmarks of fixtures and forks hold one as large).
const DemoRestaurantMenuItems = demoRestaurantMenuItems
