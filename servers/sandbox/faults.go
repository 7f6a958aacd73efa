package sandbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/faults"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// The bounds of a fault's durations (FaultRequest.retry_after, .delay).
const (
	MinRetryAfter = time.Second
	MaxRetryAfter = time.Hour
	MaxDelay      = 30 * time.Second
)

// The webhook fault kinds (the request kinds are faults.Kind's names).
const (
	kindWebhookDuplicate = "webhook-duplicate"
	kindWebhookReorder   = "webhook-reorder"
	kindWebhookFail      = "webhook-fail"
)

// requestKinds maps the request fault kinds to the in-process kit's.
var requestKinds = map[string]faults.Kind{}

func init() {
	for k := faults.RateLimited; k <= faults.Drop; k++ {
		requestKinds[k.String()] = k
	}
}

// faultIDPrefix starts every fault's id.
const faultIDPrefix = "flt-"

// sharePPM is a share's unit: faults keep their share in millionths.
const sharePPM = 1_000_000

// faultDef is a fault as stored.
type faultDef struct {
	ID, SandboxID, Kind, API, Operation string
	Count, SharePPM, Attempt, Taken     int
	RetryAfter, Delay                   time.Duration
	CreatedAt                           time.Time
	// spent is set once this replica saw the fault take its last request:
	// it is offered no more until the cache is refreshed.
	spent atomic.Bool
}

// faultSet is every sandbox's faults, as this replica knows them: a cache of
// the faults not used up, per sandbox, dropped on every change this replica
// makes and every commit another replica makes (sqldb.DB.Follow), so a
// sandbox without faults costs a request no query.
type faultSet struct {
	store  *store
	clock  clock.Clock
	logger *slog.Logger
	cache  *cache.Cache[[]*faultDef]
}

// faultCacheSize bounds the sandboxes whose faults are cached;
// faultCacheTTL how long an entry lives (the replica hears of changes
// anyway).
const (
	faultCacheSize = 4096
	faultCacheTTL  = time.Minute
)

func newFaultSet(st *store, c clock.Clock, logger *slog.Logger) *faultSet {
	fs := &faultSet{store: st, clock: c, logger: logger, cache: cache.New[[]*faultDef](faultCacheSize, faultCacheTTL)}
	st.db.Follow(fs.cache)
	return fs
}

// active returns the faults of sandbox id not used up, oldest first.
func (fs *faultSet) active(ctx context.Context, id string) ([]*faultDef, error) {
	if defs, ok := fs.cache.Get(id); ok {
		return defs, nil
	}
	gen := fs.cache.Generation()
	defs, err := fs.store.faults(ctx, id, true)
	if err != nil {
		return nil, err
	}
	fs.cache.Put(gen, id, defs)
	return defs, nil
}

// changed drops what the cache holds after this replica changed faults.
func (fs *faultSet) changed() { fs.cache.Invalidate() }

// TakeFault offers a request of api made with the credentials of set to
// the sandbox's request faults (apiserver.FaultTaker): the first that takes
// it (its operation, its share, and its count not used up, counted in the
// database so that every replica together takes exactly count) acts on it.
// The demo tenants and other sets are never taken.
func (j *Journal) TakeFault(ctx context.Context, api, set string, operation func() string) apiserver.InjectedFault {
	if j.faults == nil || !strings.HasPrefix(set, IDPrefix) {
		return nil
	}
	defs, err := j.faults.active(ctx, set)
	if err != nil {
		j.logger.WarnContext(ctx, "sandbox faults: read", "sandbox", set, "err", err)
		return nil
	}
	op, known := "", false
	for _, d := range defs {
		if d.API != api || d.spent.Load() {
			continue
		}
		if d.Operation != "" {
			if !known {
				op, known = operation(), true
			}
			if d.Operation != op {
				continue
			}
		}
		if d.SharePPM > 0 && mrand.IntN(sharePPM) >= d.SharePPM {
			continue
		}
		took, err := j.faults.store.takeFault(ctx, d.ID)
		if err != nil {
			j.logger.WarnContext(ctx, "sandbox faults: take", "sandbox", set, "fault", d.ID, "err", err)
			return nil
		}
		if !took {
			d.spent.Store(true)
			continue
		}
		return &takenFault{api: api, fault: faults.Fault{Kind: requestKinds[d.Kind], RetryAfter: d.RetryAfter, Delay: d.Delay},
			now: func() time.Time { return j.sandboxTime(ctx, set, j.faults.clock.Now()) }}
	}
	return nil
}

// takenFault is a request fault that took a request; now is the time on
// the clock of the sandbox whose request it is (PAM's rate-limit headers
// are dated by it, as the sandbox's real limits are).
type takenFault struct {
	api   string
	fault faults.Fault
	now   func() time.Time
}

// Hold waits out a slow fault, which then lets the request be served.
func (t *takenFault) Hold(ctx context.Context) bool {
	if t.fault.Kind == faults.Slow {
		faults.Hold(ctx, t.fault)
		return false
	}
	return true
}

// Drops reports whether the fault drops the connection.
func (t *takenFault) Drops() bool { return t.fault.Kind == faults.Drop }

// Answer writes the fault's answer as the in-process kit does, or drops
// the connection.
func (t *takenFault) Answer(c echo.Context) error {
	if t.fault.Kind == faults.Drop {
		return faults.DropConnection(c)
	}
	return faults.Answer(c, t.api, t.fault, t.now())
}

// parseBound reads a Go duration within [lo, hi].
func parseBound(field, text string, lo, hi time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, errBadRequest("%s %q is not a Go duration such as 500ms or 2s", field, text)
	}
	if d < lo || d > hi {
		return 0, errBadRequest("%s %s is out of range: at least %s, at most %s", field, d, lo, hi)
	}
	return d, nil
}

// faultFrom checks a fault definition and returns it as stored.
func faultFrom(sandboxID string, b *sandboxapi.FaultRequest) (*faultDef, error) {
	if b == nil {
		return nil, errBadRequest("the body is missing: a fault needs at least kind")
	}
	d := &faultDef{SandboxID: sandboxID, Kind: string(b.Kind)}
	if b.Count != nil {
		d.Count = *b.Count
	}
	if b.Share != nil {
		if *b.Share <= 0 || *b.Share > 1 {
			return nil, errBadRequest("share %v is out of range: above 0, at most 1", *b.Share)
		}
		d.SharePPM = max(int(*b.Share*sharePPM), 1)
	}
	if b.Api != nil {
		d.API = string(*b.Api)
	}
	if b.Operation != nil {
		d.Operation = *b.Operation
	}
	_, request := requestKinds[d.Kind]
	switch {
	case request:
		if d.API == "" {
			return nil, errBadRequest("api is required for a %s fault: one of pam, fax, storage, restaurant", d.Kind)
		}
		if err := faults.CheckOperation(d.API, d.Operation); err != nil {
			return nil, errBadRequest("operation %q is not an operationId of the %s API's spec", d.Operation, d.API)
		}
		if b.Attempt != nil {
			return nil, errBadRequest("attempt is for webhook-fail faults only, not %s", d.Kind)
		}
	case d.Kind == kindWebhookDuplicate || d.Kind == kindWebhookReorder || d.Kind == kindWebhookFail:
		switch {
		case d.API != "":
			return nil, errBadRequest("api is for request faults only: a %s fault acts on the fax account's webhook deliveries", d.Kind)
		case d.Operation != "":
			return nil, errBadRequest("operation is for request faults only, not %s", d.Kind)
		case d.SharePPM != 0:
			return nil, errBadRequest("share is for request faults only, not %s: use count", d.Kind)
		case b.Attempt != nil && d.Kind != kindWebhookFail:
			return nil, errBadRequest("attempt is for webhook-fail faults only, not %s", d.Kind)
		}
		d.Attempt = 1
		if b.Attempt != nil {
			d.Attempt = *b.Attempt
		}
	default:
		return nil, errBadRequest("kind %q is not a fault kind", d.Kind)
	}
	if b.RetryAfter != nil {
		if d.Kind != faults.RateLimited.String() && d.Kind != faults.Unavailable.String() {
			return nil, errBadRequest("retry_after is for rate-limited and unavailable faults only, not %s", d.Kind)
		}
		var err error
		if d.RetryAfter, err = parseBound("retry_after", *b.RetryAfter, MinRetryAfter, MaxRetryAfter); err != nil {
			return nil, err
		}
	}
	if b.Delay != nil {
		if d.Kind != faults.Slow.String() {
			return nil, errBadRequest("delay is for slow faults only, not %s", d.Kind)
		}
		var err error
		if d.Delay, err = parseBound("delay", *b.Delay, time.Millisecond, MaxDelay); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// faultView is the fault as the API shows it.
func faultView(d *faultDef) sandboxapi.Fault {
	out := sandboxapi.Fault{Id: d.ID, Kind: sandboxapi.FaultKind(d.Kind), Count: d.Count, Taken: d.Taken, CreatedAt: d.CreatedAt}
	if d.API != "" {
		api := sandboxapi.FaultAPI(d.API)
		out.Api = &api
	}
	if d.Operation != "" {
		out.Operation = &d.Operation
	}
	if d.SharePPM != 0 {
		share := float64(d.SharePPM) / sharePPM
		out.Share = &share
	}
	if d.RetryAfter != 0 {
		text := d.RetryAfter.String()
		out.RetryAfter = &text
	}
	if d.Delay != 0 {
		text := d.Delay.String()
		out.Delay = &text
	}
	if d.Kind == kindWebhookFail {
		out.Attempt = &d.Attempt
	}
	return out
}

// AddSandboxFault stores a fault of the sandbox.
func (s *Server) AddSandboxFault(ctx context.Context, req sandboxserver.AddSandboxFaultRequestObject) (sandboxserver.AddSandboxFaultResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	d, err := faultFrom(r.ID, req.Body)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	d.ID, d.CreatedAt = faultIDPrefix+hex.EncodeToString(b), s.clock.Now()
	if err := s.store.insertFault(ctx, d); err != nil {
		return nil, err
	}
	s.faults.changed()
	return sandboxserver.AddSandboxFault201JSONResponse(faultView(d)), nil
}

// ListSandboxFaults answers the sandbox's faults with what each took.
func (s *Server) ListSandboxFaults(ctx context.Context, req sandboxserver.ListSandboxFaultsRequestObject) (sandboxserver.ListSandboxFaultsResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	defs, err := s.store.faults(ctx, r.ID, false)
	if err != nil {
		return nil, err
	}
	out := sandboxapi.FaultList{Data: make([]sandboxapi.Fault, 0, len(defs))}
	for _, d := range defs {
		out.Data = append(out.Data, faultView(d))
	}
	return sandboxserver.ListSandboxFaults200JSONResponse(out), nil
}

// DeleteSandboxFault deletes one fault of the sandbox.
func (s *Server) DeleteSandboxFault(ctx context.Context, req sandboxserver.DeleteSandboxFaultRequestObject) (sandboxserver.DeleteSandboxFaultResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	n, err := s.store.deleteFaults(ctx, r.ID, req.FaultId)
	if err != nil {
		return nil, err
	}
	s.faults.changed()
	if n == 0 {
		return nil, errNotFound("sandbox %s has no fault %s", r.ID, req.FaultId)
	}
	return sandboxserver.DeleteSandboxFault204Response{}, nil
}

// ClearSandboxFaults deletes every fault of the sandbox.
func (s *Server) ClearSandboxFaults(ctx context.Context, req sandboxserver.ClearSandboxFaultsRequestObject) (sandboxserver.ClearSandboxFaultsResponseObject, error) {
	r, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	if err := s.clearFaults(ctx, r.ID); err != nil {
		return nil, err
	}
	return sandboxserver.ClearSandboxFaults204Response{}, nil
}

// clearFaults deletes every fault of the sandbox id and sends the delivery
// a reorder fault holds back on this replica, if any.
func (s *Server) clearFaults(ctx context.Context, id string) error {
	if _, err := s.store.deleteFaults(ctx, id, ""); err != nil {
		return err
	}
	s.faults.changed()
	s.hooks.forget(id, true)
	return nil
}

const faultColumns = `id, sandbox_id, kind, api, operation, count, share_ppm, retry_after_micros, delay_micros, attempt, taken, created_at`

func (s *store) insertFault(ctx context.Context, d *faultDef) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO faults (`+faultColumns+`, seq)
		SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, COALESCE(MAX(seq), 0) + 1 FROM faults WHERE sandbox_id = ?`,
		d.ID, d.SandboxID, d.Kind, d.API, d.Operation, d.Count, d.SharePPM, d.RetryAfter.Microseconds(), d.Delay.Microseconds(),
		d.Attempt, sqldb.Micros(d.CreatedAt), d.SandboxID)
	if err != nil {
		return fmt.Errorf("insert fault: %w", err)
	}
	return nil
}

// faults lists the sandbox's faults, oldest first; active: only those not
// used up.
func (s *store) faults(ctx context.Context, sandboxID string, active bool) ([]*faultDef, error) {
	q := `SELECT ` + faultColumns + ` FROM faults WHERE sandbox_id = ?`
	if active {
		q += ` AND (count = 0 OR taken < count)`
	}
	out, err := apistore.Collect(ctx, s.db, func(rows *sql.Rows, out **faultDef) error {
		d := &faultDef{}
		var retry, delay int64
		if err := rows.Scan(&d.ID, &d.SandboxID, &d.Kind, &d.API, &d.Operation, &d.Count, &d.SharePPM, &retry, &delay,
			&d.Attempt, &d.Taken, sqldb.TimeInto(&d.CreatedAt)); err != nil {
			return err
		}
		d.RetryAfter, d.Delay = time.Duration(retry)*time.Microsecond, time.Duration(delay)*time.Microsecond
		*out = d
		return nil
	}, q+` ORDER BY seq, id`, sandboxID)
	if err != nil {
		return nil, fmt.Errorf("read faults: %w", err)
	}
	return out, nil
}

// takeFault counts one more request taken by fault id, unless its count
// is used up (or it is gone): one statement, so that replicas sharing the
// database together take exactly count.
func (s *store) takeFault(ctx context.Context, id string) (bool, error) {
	return s.changedRow(ctx, "take fault", `UPDATE faults SET taken = taken + 1 WHERE id = ? AND (count = 0 OR taken < count)`, id)
}

// deleteFaults deletes the sandbox's fault id, or all its faults when id is
// "", and returns how many went.
func (s *store) deleteFaults(ctx context.Context, sandboxID, id string) (int64, error) {
	var res sql.Result
	var err error
	if id == "" {
		res, err = s.db.ExecContext(ctx, `DELETE FROM faults WHERE sandbox_id = ?`, sandboxID)
	} else {
		res, err = s.db.ExecContext(ctx, `DELETE FROM faults WHERE sandbox_id = ? AND id = ?`, sandboxID, id)
	}
	if err != nil {
		return 0, fmt.Errorf("delete faults: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("delete faults: %w", err)
	}
	return n, nil
}
