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
		SweepInterval: st.cfg.SandboxSweepInterval, Logger: st.logger,
		MaxSandboxes: st.cfg.MaxSandboxes, CreatesPerMinute: st.cfg.SandboxCreatesPerMinute, JournalBudget: st.cfg.SandboxJournalBudget,
		ValidateResponses: st.cfg.ValidateResponses, ResponseChecks: st.cfg.ResponseChecks,
		OnResponseViolation: d.OnResponseViolation, Telemetry: st.cfg.Telemetry,
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
