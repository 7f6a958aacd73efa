package sandbox

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/gen/sandboxserver"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// SnapshotIDPrefix starts every snapshot's id.
const SnapshotIDPrefix = "snp-"

// The snapshot TTL's default and the deployment's default cap.
const (
	DefaultSnapshotTTL   = 24 * time.Hour
	DefaultSnapshotLimit = 1000
)

// errNoSnapshot: no such snapshot.
var errNoSnapshot = errors.New("no such snapshot")

// snapshotSet is the tenant set holding the copied rows of snapshot id: a
// sandbox's kind of set (descriptor.SandboxSetPrefix), so that no API runs
// its work on the stack's clock (a fax in flight stays as it was), yet no
// sandbox's: nothing advances its clock and no credentials reach it.
func snapshotSet(id string) string {
	return descriptor.SandboxSetPrefix + id
}

// snapshotRecord is a snapshot as stored.
type snapshotRecord struct {
	ID, SandboxID, State, Clock string
	ClockTime, CreatedAt        time.Time
	TTL                         time.Duration
	APIs                        []string
	Credentials, Named          string // sealed
}

const snapshotColumns = `id, sandbox_id, state, clock, clock_time, ttl_micros, created_at, apis, credentials, named`

func scanSnapshot(row interface{ Scan(...any) error }) (snapshotRecord, error) {
	var r snapshotRecord
	var clockTime, ttl, created int64
	var apis string
	err := row.Scan(&r.ID, &r.SandboxID, &r.State, &r.Clock, &clockTime, &ttl, &created, &apis, &r.Credentials, &r.Named)
	if errors.Is(err, sql.ErrNoRows) {
		return r, errNoSnapshot
	}
	if err != nil {
		return r, fmt.Errorf("read snapshot: %w", err)
	}
	r.ClockTime, r.CreatedAt, r.TTL = sqldb.Time(clockTime), sqldb.Time(created), time.Duration(ttl)*time.Microsecond
	if apis != "" {
		r.APIs = strings.Split(apis, ",")
	}
	return r, nil
}

// insertSnapshot stores r ('creating') unless the deployment already holds
// limit snapshots.
func (s *store) insertSnapshot(ctx context.Context, r snapshotRecord, limit int) (bool, error) {
	return s.changedRow(ctx, "insert snapshot", `INSERT INTO snapshots (`+snapshotColumns+`)
		SELECT ?, ?, ?, ?, ?, ?, ?, '', '', '' WHERE (SELECT COUNT(*) FROM snapshots) < ?`,
		r.ID, r.SandboxID, stateCreating, r.Clock, sqldb.Micros(r.ClockTime), r.TTL.Microseconds(), sqldb.Micros(r.CreatedAt), limit)
}

// snapshotReady stores what the snapshot holds and makes it ready, with
// the faults of its sandbox, in one transaction.
func (s *store) snapshotReady(ctx context.Context, r snapshotRecord) error {
	return s.db.InTx(ctx, func(tx *sqldb.Tx) error {
		return apistore.Run(ctx, tx,
			apistore.Step{Query: `INSERT INTO snapshot_faults (snapshot_id, seq, kind, api, operation, count, share_ppm, retry_after_micros,
				delay_micros, attempt, taken, created_at)
				SELECT ?, seq, kind, api, operation, count, share_ppm, retry_after_micros, delay_micros, attempt, taken, created_at
				FROM faults WHERE sandbox_id = ?`, Args: []any{r.ID, r.SandboxID}},
			apistore.Step{Query: `UPDATE snapshots SET state = ?, apis = ?, credentials = ?, named = ? WHERE id = ? AND state = ?`,
				Args: []any{stateReady, strings.Join(r.APIs, ","), r.Credentials, r.Named, r.ID, stateCreating}})
	})
}

func (s *store) snapshot(ctx context.Context, id string) (snapshotRecord, error) {
	return scanSnapshot(s.db.QueryRowContext(ctx, `SELECT `+snapshotColumns+` FROM snapshots WHERE id = ?`, id))
}

// snapshotsOf lists the ready snapshots of sandbox id, oldest first.
func (s *store) snapshotsOf(ctx context.Context, id string) ([]snapshotRecord, error) {
	out, err := apistore.Collect(ctx, s.db, func(rows *sql.Rows, r *snapshotRecord) error {
		var err error
		*r, err = scanSnapshot(rows)
		return err
	}, `SELECT `+snapshotColumns+` FROM snapshots WHERE sandbox_id = ? AND state = ? ORDER BY created_at, id`, id, stateReady)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	return out, nil
}

// markSnapshotDeleting makes the snapshot fork no more.
func (s *store) markSnapshotDeleting(ctx context.Context, id string) error {
	ok, err := s.changedRow(ctx, "mark snapshot deleted", `UPDATE snapshots SET state = ? WHERE id = ?`, stateDeleting, id)
	if err == nil && !ok {
		err = errNoSnapshot
	}
	return err
}

func (s *store) removeSnapshot(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM snapshots WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete snapshot: %w", err)
	}
	return nil
}

// dueSnapshots lists the snapshots the sweep must delete at now: those past
// their TTL, those whose delete did not finish, and those left 'creating'
// for longer than stale.
func (s *store) dueSnapshots(ctx context.Context, now time.Time, stale time.Duration) ([]string, error) {
	ids, err := apistore.Collect(ctx, s.db, func(rows *sql.Rows, id *string) error { return rows.Scan(id) }, `SELECT id FROM snapshots
		WHERE (state = ? AND created_at + ttl_micros <= ?) OR state = ? OR (state = ? AND created_at <= ?)
		ORDER BY created_at`, stateReady, sqldb.Micros(now), stateDeleting, stateCreating, sqldb.Micros(now.Add(-stale)))
	if err != nil {
		return nil, fmt.Errorf("list expired snapshots: %w", err)
	}
	return ids, nil
}

// forkFaults gives the sandbox id the faults snapshot snap holds, with new
// ids, in one statement.
func (s *store) forkFaults(ctx context.Context, snap, id string) error {
	// A fault's id is its prefix and 16 hex digits: 8 of the fork's, 8 of
	// its seq's (below 2^32: a sandbox never holds that many).
	tag := make([]byte, 4)
	_, _ = rand.Read(tag)
	_, err := s.db.ExecContext(ctx, `INSERT INTO faults (`+faultColumns+`, seq)
		SELECT ? || `+s.hex8(`seq`)+`, ?, kind, api, operation, count, share_ppm, retry_after_micros, delay_micros, attempt, taken, created_at, seq
		FROM snapshot_faults WHERE snapshot_id = ?`, faultIDPrefix+hex.EncodeToString(tag), id, snap)
	if err != nil {
		return fmt.Errorf("copy faults: %w", err)
	}
	return nil
}

// hex8 is the SQL of col's 8 lowest hex digits, in the database's dialect.
func (s *store) hex8(col string) string {
	if s.db.Shared() {
		return `lpad(to_hex(` + col + `), 8, '0')`
	}
	return `substr('0000000' || lower(hex(` + col + `)), -8)`
}

// newSnapshotID returns a fresh snapshot id.
func newSnapshotID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return SnapshotIDPrefix + hex.EncodeToString(b)
}

func snapshotLabel(id string) string { return "snapshot-credentials:" + id }

// sealNamed seals the fixture credentials named (by API) of sandbox id;
// none seals to "".
func (s *Server) sealNamed(id string, named map[string]json.RawMessage) (string, error) {
	if len(named) == 0 {
		return "", nil
	}
	raw, err := json.Marshal(named)
	if err != nil {
		return "", fmt.Errorf("sandbox %s: fixture credentials: %w", id, err)
	}
	return s.box.Seal("sandbox-named:"+id, raw), nil
}

// openNamed opens what sealNamed sealed.
func (s *Server) openNamed(id, sealed string) (map[string]json.RawMessage, error) {
	if sealed == "" {
		return nil, nil
	}
	raw, err := s.box.Open("sandbox-named:"+id, sealed)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: open fixture credentials: %w", id, err)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("sandbox %s: fixture credentials: %w", id, err)
	}
	return out, nil
}

// snapshotCredentials opens the credentials of the tenant set of snap.
func (s *Server) snapshotCredentials(snap snapshotRecord) (json.RawMessage, map[string]json.RawMessage, error) {
	creds, err := s.box.Open(snapshotLabel(snap.ID), snap.Credentials)
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot %s: open credentials: %w", snap.ID, err)
	}
	named, err := s.openNamed(snapshotSet(snap.ID), snap.Named)
	return creds, named, err
}

// readySnapshot is the ready snapshot id, not past its TTL.
func (s *Server) readySnapshot(ctx context.Context, id string) (snapshotRecord, error) {
	r, err := s.store.snapshot(ctx, id)
	if errors.Is(err, errNoSnapshot) || (err == nil && (r.State != stateReady || !s.clock.Now().Before(r.CreatedAt.Add(r.TTL)))) {
		return r, errNotFound("no snapshot %s", id)
	}
	return r, err
}

// CreateSandboxSnapshot copies the sandbox's tenants into a snapshot's set,
// with its clock and faults.
func (s *Server) CreateSandboxSnapshot(ctx context.Context, req sandboxserver.CreateSandboxSnapshotRequestObject) (sandboxserver.CreateSandboxSnapshotResponseObject, error) {
	sb, err := s.ready(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	ttl := DefaultSnapshotTTL
	if req.Body != nil && req.Body.Ttl != nil {
		if ttl, err = parseTTL(req.Body.Ttl); err != nil {
			return nil, err
		}
	}
	snap, err := s.snapshot(ctx, sb, ttl)
	if err != nil {
		return nil, err
	}
	return sandboxserver.CreateSandboxSnapshot201JSONResponse(snapshotView(snap)), nil
}

// snapshot makes a snapshot of the ready sandbox sb that lives for ttl.
func (s *Server) snapshot(ctx context.Context, sb record, ttl time.Duration) (snapshotRecord, error) {
	now := s.clock.Now()
	snap := snapshotRecord{ID: newSnapshotID(), SandboxID: sb.ID, Clock: sb.Clock, TTL: ttl, CreatedAt: now,
		ClockTime: s.clocks.For(sb.ID).Now().Truncate(time.Microsecond), State: stateReady}
	ok, err := s.store.insertSnapshot(ctx, snap, s.cfg.SnapshotLimit)
	if err != nil {
		return snap, err
	}
	if !ok {
		return snap, &apiError{Status: http.StatusConflict, Name: sandboxapi.ErrorError(sandboxapi.LimitReachedErrorErrorLimitReached), Message: fmt.Sprintf("the deployment holds %d snapshots, as many as it may: delete one or wait for one to expire", s.cfg.SnapshotLimit)}
	}
	err = s.fillSnapshot(ctx, sb, &snap)
	if err != nil {
		cleanup := context.WithoutCancel(ctx)
		return snap, errors.Join(fmt.Errorf("snapshot sandbox %s: %w", sb.ID, err), s.removeSnapshot(cleanup, snap.ID))
	}
	return snap, nil
}

// fillSnapshot copies the tenants of sb into snap's set and makes snap
// ready.
func (s *Server) fillSnapshot(ctx context.Context, sb record, snap *snapshotRecord) error {
	creds, err := s.credentials(sb)
	if err != nil {
		return err
	}
	named, err := s.openNamed(sb.ID, sb.Named)
	if err != nil {
		return err
	}
	set := snapshotSet(snap.ID)
	copied, copiedNamed, apis, err := s.cfg.Tenants.Copy(ctx, sb.ID, set, creds, named)
	if err != nil {
		return err
	}
	snap.APIs = apis
	snap.Credentials = s.box.Seal(snapshotLabel(snap.ID), copied)
	if snap.Named, err = s.sealNamed(set, copiedNamed); err != nil {
		return err
	}
	return s.store.snapshotReady(ctx, *snap)
}

// removeSnapshot deletes the tenants of snapshot id and then its row.
func (s *Server) removeSnapshot(ctx context.Context, id string) error {
	if err := s.cfg.Tenants.Delete(ctx, snapshotSet(id)); err != nil {
		return fmt.Errorf("delete the tenants of snapshot %s: %w", id, err)
	}
	return s.store.removeSnapshot(ctx, id)
}

// DeleteSnapshot deletes snapshot id: it forks no more at once, then its
// rows go from every API. A delete cut short is finished by the sweep.
func (s *Server) DeleteSnapshot(ctx context.Context, id string) error {
	if err := s.store.markSnapshotDeleting(ctx, id); err != nil {
		return err
	}
	return s.removeSnapshot(ctx, id)
}

func snapshotView(r snapshotRecord) sandboxapi.Snapshot {
	apis := r.APIs
	if apis == nil {
		apis = []string{}
	}
	return sandboxapi.Snapshot{Id: r.ID, SandboxId: r.SandboxID, Clock: sandboxapi.ClockMode(r.Clock), Now: r.ClockTime.UTC(),
		Ttl: r.TTL.String(), CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.CreatedAt.Add(r.TTL).UTC(), Apis: apis}
}

// snapshotOf is the ready snapshot id of sandbox sb, as the caller may see
// it: the sandbox's own token while the sandbox lives, the admin token
// always.
func (s *Server) snapshotOf(ctx context.Context, sb, id string) (snapshotRecord, error) {
	if err := s.maySeeSnapshots(ctx, sb); err != nil {
		return snapshotRecord{}, err
	}
	r, err := s.readySnapshot(ctx, id)
	if err != nil {
		return r, err
	}
	if r.SandboxID != sb {
		return r, errNotFound("no snapshot %s of sandbox %s", id, sb)
	}
	return r, nil
}

// maySeeSnapshots refuses all but the admin token and the token of the
// ready sandbox sb.
func (s *Server) maySeeSnapshots(ctx context.Context, sb string) error {
	if callerFrom(ctx).role == roleAdmin {
		return nil
	}
	_, err := s.ready(ctx, sb)
	return err
}

// ListSandboxSnapshots lists the sandbox's snapshots.
func (s *Server) ListSandboxSnapshots(ctx context.Context, req sandboxserver.ListSandboxSnapshotsRequestObject) (sandboxserver.ListSandboxSnapshotsResponseObject, error) {
	if err := s.maySeeSnapshots(ctx, req.Id); err != nil {
		return nil, err
	}
	rs, err := s.store.snapshotsOf(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	out := sandboxapi.SnapshotList{Data: make([]sandboxapi.Snapshot, 0, len(rs))}
	now := s.clock.Now()
	for _, r := range rs {
		if now.Before(r.CreatedAt.Add(r.TTL)) {
			out.Data = append(out.Data, snapshotView(r))
		}
	}
	return sandboxserver.ListSandboxSnapshots200JSONResponse(out), nil
}

// GetSandboxSnapshot answers one snapshot of the sandbox.
func (s *Server) GetSandboxSnapshot(ctx context.Context, req sandboxserver.GetSandboxSnapshotRequestObject) (sandboxserver.GetSandboxSnapshotResponseObject, error) {
	r, err := s.snapshotOf(ctx, req.Id, req.SnapshotId)
	if err != nil {
		return nil, err
	}
	return sandboxserver.GetSandboxSnapshot200JSONResponse(snapshotView(r)), nil
}

// DeleteSandboxSnapshot deletes one snapshot of the sandbox.
func (s *Server) DeleteSandboxSnapshot(ctx context.Context, req sandboxserver.DeleteSandboxSnapshotRequestObject) (sandboxserver.DeleteSandboxSnapshotResponseObject, error) {
	if _, err := s.snapshotOf(ctx, req.Id, req.SnapshotId); err != nil {
		return nil, err
	}
	if err := s.DeleteSnapshot(ctx, req.SnapshotId); err != nil {
		if errors.Is(err, errNoSnapshot) {
			return nil, errNotFound("no snapshot %s", req.SnapshotId)
		}
		return nil, err
	}
	return sandboxserver.DeleteSandboxSnapshot204Response{}, nil
}

// sweepSnapshots deletes the snapshots past their TTL (and finishes those
// cut short), and returns how many it deleted.
func (s *Server) sweepSnapshots(ctx context.Context) (int, error) {
	ids, err := s.store.dueSnapshots(ctx, s.clock.Now(), staleCreation)
	if err != nil {
		return 0, err
	}
	return deleteDue(ctx, ids, s.DeleteSnapshot, errNoSnapshot, nil)
}

// fixtureSections splits a fixture into its sections by API name, as JSON.
func fixtureSections(f *sandboxapi.Fixture) (map[string]json.RawMessage, error) {
	if f == nil {
		return nil, nil
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	return out, nil
}

// errFixture answers a fixture that breaks a rule: 400 naming the pointer.
func errFixture(fe *descriptor.FixtureError) *apiError {
	return &apiError{Status: http.StatusBadRequest, Name: sandboxapi.ErrorErrorInvalidRequest,
		Message: "fixture" + fe.Pointer + ": " + fe.Message, Extra: errorExtra{Pointer: "/fixture" + fe.Pointer}}
}
