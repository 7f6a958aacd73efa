package fax

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"slices"
	"strings"
	"time"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/secretbox"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

// Store errors of the fax store alone (the shared ones are storeerr's).
var (
	// errStale: the fax is no longer in the state the change was computed
	// from (a cancel or delete won the race); the change was not made.
	errStale = errors.New("fax changed concurrently")
)

// migrationFiles are the schema migrations of both dialects (API.Files,
// servers/internal/migrationset).
//
//go:embed migrations
var migrationFiles embed.FS

// store is every SQL statement of the fax service.
type store struct {
	db *sqldb.DB
	// attemptLog wakes the readers of the webhook log waiting for an
	// attempt (webhooklog.go).
	attemptLog signal
	// box seals the server's own secrets in the settings table.
	box *secretbox.Box
	// pages caches pages of faxes listed, dropped after every committed
	// write (a list is read again while no fax moves).
	pages *cache.Cache[faxPage]
	// rendered keeps ListFaxes's answers encoded (renderedFaxListKey),
	// dropped with pages.
	rendered *cache.Cache[[]byte]
	// revoked is called after every committed change that revokes an API
	// key or changes or deletes a fax application: the server drops what it
	// cached about keys and applications.
	revoked func()
	// ownClocks says the sandboxes' accounts run on clocks of their own
	// (Deps.Clocks): the simulator leaves their steps to Advance.
	ownClocks bool
	// attemptBatches commits concurrent deliveries' attempts together
	// (PostgreSQL).
	attemptBatches *sqldb.GroupCommit[*attemptRow]
}

// changed reports a committed change that may revoke access.
func (s *store) changed() {
	if s.revoked != nil {
		s.revoked()
	}
}

// secret returns the server's named secret of size bytes, creating it at
// first use. It is kept sealed (secretbox): a copy of the database alone
// cannot forge webhooks or media links. A secret written before sealing was
// introduced is sealed in place the first time it is read.
func (s *store) secret(ctx context.Context, name string, size int) ([]byte, error) {
	var stored []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&stored)
	switch {
	case err == nil && secretbox.IsSealed(string(stored)):
		key, err := s.box.Open(name, string(stored))
		if err != nil {
			return nil, fmt.Errorf("read setting %s: %w", name, err)
		}
		return key, nil
	case err == nil:
		if len(stored) != size {
			return nil, fmt.Errorf("read setting %s: %d bytes, want %d", name, len(stored), size)
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE settings SET value = ? WHERE name = ?`, []byte(s.box.Seal(name, stored)), name); err != nil {
			return nil, fmt.Errorf("seal setting %s: %w", name, err)
		}
		return stored, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("read setting %s: %w", name, err)
	}
	key := make([]byte, size)
	_, _ = rand.Read(key)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
		name, []byte(s.box.Seal(name, key))); err != nil {
		return nil, fmt.Errorf("store setting %s: %w", name, err)
	}
	return s.secret(ctx, name, size)
}

// LoadOrCreateMasterKey reads the key at path that seals the server's own
// secrets, creating it (random, readable by its owner only) when there is
// none yet.
func LoadOrCreateMasterKey(path string) ([]byte, error) {
	return secretbox.LoadOrCreateKey(path)
}

// account is a tenant of the fax API.
type account struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

func (s *store) createAccount(ctx context.Context, a account) error {
	if err := sqldb.ExecOne(ctx, s.db, storeerr.ErrAlreadyExists,
		`INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		a.ID, a.Name, sqldb.Micros(a.CreatedAt)); err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	return nil
}

func (s *store) accountByName(ctx context.Context, name string) (account, error) {
	return s.scanAccount(s.db.QueryRowContext(ctx, `SELECT id, name, created_at FROM accounts WHERE name = ?`, name))
}

func (s *store) accountByID(ctx context.Context, id string) (account, error) {
	return s.scanAccount(s.db.QueryRowContext(ctx, `SELECT id, name, created_at FROM accounts WHERE id = ?`, id))
}

func (s *store) scanAccount(row *sqldb.Row) (account, error) {
	var a account
	var created int64
	err := row.Scan(&a.ID, &a.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return account{}, storeerr.ErrNotFound
	}
	if err != nil {
		return account{}, fmt.Errorf("read account: %w", err)
	}
	a.CreatedAt = sqldb.Time(created)
	return a, nil
}

func (s *store) insertAPIKey(ctx context.Context, id, accountID string, hash []byte, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, key_hash, created_at) VALUES (?, ?, ?, ?)`,
		id, accountID, hash, sqldb.Micros(now))
	if err != nil {
		return fmt.Errorf("insert api key: %w", err)
	}
	return nil
}

// keyByHash returns the account and stored hash of the key whose hash is hash.
func (s *store) keyByHash(ctx context.Context, hash []byte) (accountID, accountName string, stored []byte, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT k.account_id, a.name, k.key_hash FROM api_keys k JOIN accounts a ON a.id = k.account_id
		WHERE k.key_hash = ?`, hash).Scan(&accountID, &accountName, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil, storeerr.ErrNotFound
	}
	if err != nil {
		return "", "", nil, fmt.Errorf("read api key: %w", err)
	}
	return accountID, accountName, stored, nil
}

// rotateAPIKey inserts a key and deletes the account's key replaced ("":
// none) in one transaction.
func (s *store) rotateAPIKey(ctx context.Context, accountID, id string, hash []byte, replaced string, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("rotate api key: %w", err)
	}
	defer tx.Rollback()
	if replaced != "" {
		if err := sqldb.ExecOne(ctx, tx, fmt.Errorf("api key %s: %w", replaced, storeerr.ErrNotFound), `DELETE FROM api_keys WHERE id = ? AND account_id = ?`, replaced, accountID); err != nil {
			return fmt.Errorf("revoke api key: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, key_hash, created_at) VALUES (?, ?, ?, ?)`,
		id, accountID, hash, sqldb.Micros(now)); err != nil {
		return fmt.Errorf("insert api key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("rotate api key: %w", err)
	}
	s.changed()
	return nil
}

// deleteAPIKey deletes the account's key id.
func (s *store) deleteAPIKey(ctx context.Context, accountID, id string) error {
	if err := sqldb.ExecOne(ctx, s.db, fmt.Errorf("api key %s: %w", id, storeerr.ErrNotFound), `DELETE FROM api_keys WHERE id = ? AND account_id = ?`, id, accountID); err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	s.changed()
	return nil
}

func (s *store) insertVoiceProfile(ctx context.Context, id, accountID, name string, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO outbound_voice_profiles (id, account_id, name, created_at) VALUES (?, ?, ?, ?)`,
		id, accountID, name, sqldb.Micros(now))
	if err != nil {
		return fmt.Errorf("insert outbound voice profile: %w", err)
	}
	return nil
}

func (s *store) voiceProfileExists(ctx context.Context, accountID, id string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbound_voice_profiles WHERE id = ? AND account_id = ?`, id, accountID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read outbound voice profile: %w", err)
	}
	return n > 0, nil
}

// application is a fax application; its id is the connection_id of sends.
type application struct {
	ID                 string
	AccountID          string
	Name               string
	WebhookURL         string
	WebhookFailoverURL string
	VoiceProfileID     *string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

const applicationColumns = `id, account_id, application_name, webhook_url, webhook_failover_url, outbound_voice_profile_id, created_at, updated_at`

func scanApplication(sc interface{ Scan(...any) error }) (application, error) {
	var a application
	var profile sql.NullString
	var created, updated int64
	if err := sc.Scan(&a.ID, &a.AccountID, &a.Name, &a.WebhookURL, &a.WebhookFailoverURL, &profile, &created, &updated); err != nil {
		return application{}, err
	}
	if profile.Valid {
		a.VoiceProfileID = &profile.String
	}
	a.CreatedAt, a.UpdatedAt = sqldb.Time(created), sqldb.Time(updated)
	return a, nil
}

func (s *store) insertApplication(ctx context.Context, a application) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO fax_applications (`+applicationColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.AccountID, a.Name, a.WebhookURL, a.WebhookFailoverURL, a.VoiceProfileID, sqldb.Micros(a.CreatedAt), sqldb.Micros(a.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert fax application: %w", err)
	}
	return nil
}

func (s *store) updateApplication(ctx context.Context, a application) error {
	_, err := s.db.ExecContext(ctx, `UPDATE fax_applications SET application_name = ?, webhook_url = ?, webhook_failover_url = ?,
		outbound_voice_profile_id = ?, updated_at = ? WHERE id = ? AND account_id = ?`,
		a.Name, a.WebhookURL, a.WebhookFailoverURL, a.VoiceProfileID, sqldb.Micros(a.UpdatedAt), a.ID, a.AccountID)
	if err != nil {
		return fmt.Errorf("update fax application: %w", err)
	}
	s.changed()
	return nil
}

// application returns the account's application id; storeerr.ErrNotFound when it is
// missing or another account's.
func (s *store) application(ctx context.Context, accountID, id string) (application, error) {
	a, err := scanApplication(s.db.QueryRowContext(ctx, `SELECT `+applicationColumns+` FROM fax_applications WHERE id = ? AND account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return application{}, storeerr.ErrNotFound
	}
	if err != nil {
		return application{}, fmt.Errorf("read fax application: %w", err)
	}
	return a, nil
}

func (s *store) listApplications(ctx context.Context, accountID string, offset, limit int) ([]application, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM fax_applications WHERE account_id = ?`, accountID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count fax applications: %w", err)
	}
	out, err := apistore.Collect(ctx, s.db, func(rows *sql.Rows, a *application) (err error) {
		*a, err = scanApplication(rows)
		return err
	}, `SELECT `+applicationColumns+` FROM fax_applications WHERE account_id = ?
		ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, accountID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list fax applications: %w", err)
	}
	return out, total, nil
}

func (s *store) deleteApplication(ctx context.Context, accountID, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete fax application: %w", err)
	}
	defer tx.Rollback()
	if err := sqldb.ExecOne(ctx, tx, storeerr.ErrNotFound, `DELETE FROM fax_applications WHERE id = ? AND account_id = ?`, id, accountID); err != nil {
		return fmt.Errorf("delete fax application: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE numbers SET application_id = NULL WHERE application_id = ?`, id); err != nil {
		return fmt.Errorf("disable numbers of fax application: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.changed()
	return nil
}

// number is a phone number of an account, enabled on an application or not.
type number struct {
	PhoneNumber   string
	AccountID     string
	ApplicationID *string
}

// upsertNumber gives phoneNumber to accountID, enabled on applicationID (nil:
// none). A number of another account is storeerr.ErrAlreadyExists.
func (s *store) upsertNumber(ctx context.Context, n number) error {
	if err := sqldb.ExecOne(ctx, s.db, storeerr.ErrAlreadyExists, `INSERT INTO numbers (phone_number, account_id, application_id) VALUES (?, ?, ?)
		ON CONFLICT (phone_number) DO UPDATE SET application_id = excluded.application_id WHERE numbers.account_id = excluded.account_id`,
		n.PhoneNumber, n.AccountID, n.ApplicationID); err != nil {
		return fmt.Errorf("upsert number: %w", err)
	}
	return nil
}

func (s *store) number(ctx context.Context, phoneNumber string) (number, error) {
	var n number
	var app sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT phone_number, account_id, application_id FROM numbers WHERE phone_number = ?`, phoneNumber).
		Scan(&n.PhoneNumber, &n.AccountID, &app)
	if errors.Is(err, sql.ErrNoRows) {
		return number{}, storeerr.ErrNotFound
	}
	if err != nil {
		return number{}, fmt.Errorf("read number: %w", err)
	}
	if app.Valid {
		n.ApplicationID = &app.String
	}
	return n, nil
}

// faxRow is a fax with the simulator's state.
type faxRow struct {
	ID                 string
	AccountID          string
	ConnectionID       string
	Direction          string
	From               string
	To                 string
	MediaURL           string
	Quality            string
	Status             string
	StoreMedia         bool
	MediaID            *string
	PageCount          *int
	FailureReason      *string
	PartialContent     *bool
	CallDurationSecs   *int
	WebhookURL         string
	WebhookFailoverURL string
	Outcome            string
	StepsLeft          int
	NextStepAt         *time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
	DeletedAt          *time.Time
}

const faxColumns = `id, account_id, connection_id, direction, from_number, to_number, media_url, quality, status,
	store_media, media_id, page_count, failure_reason, partial_content, call_duration_secs, webhook_url,
	webhook_failover_url, outcome, steps_left, next_step_at, created_at, updated_at, deleted_at`

func scanFax(sc interface{ Scan(...any) error }) (faxRow, error) {
	var f faxRow
	var mediaID, failure sql.NullString
	var pages, duration, next, deleted sql.NullInt64
	var partial sql.NullBool
	var created, updated int64
	err := sc.Scan(&f.ID, &f.AccountID, &f.ConnectionID, &f.Direction, &f.From, &f.To, &f.MediaURL, &f.Quality, &f.Status,
		&f.StoreMedia, &mediaID, &pages, &failure, &partial, &duration, &f.WebhookURL,
		&f.WebhookFailoverURL, &f.Outcome, &f.StepsLeft, &next, &created, &updated, &deleted)
	if err != nil {
		return faxRow{}, err
	}
	if mediaID.Valid {
		f.MediaID = &mediaID.String
	}
	if pages.Valid {
		p := int(pages.Int64)
		f.PageCount = &p
	}
	if failure.Valid {
		f.FailureReason = &failure.String
	}
	if partial.Valid {
		f.PartialContent = &partial.Bool
	}
	if duration.Valid {
		d := int(duration.Int64)
		f.CallDurationSecs = &d
	}
	if next.Valid {
		t := sqldb.Time(next.Int64)
		f.NextStepAt = &t
	}
	if deleted.Valid {
		t := sqldb.Time(deleted.Int64)
		f.DeletedAt = &t
	}
	f.CreatedAt, f.UpdatedAt = sqldb.Time(created), sqldb.Time(updated)
	return f, nil
}

// scanFaxes reads every fax of rows and closes them.
func scanFaxes(rows *sql.Rows) ([]faxRow, error) {
	defer rows.Close()
	var out []faxRow
	for rows.Next() {
		f, err := scanFax(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// outboxEvent is one webhook event to deliver.
type outboxEvent struct {
	Seq         int64
	EventID     string
	FaxID       string
	Type        string
	Data        []byte
	WebhookURL  string
	FailoverURL string
	Attempts    int
	CreatedAt   time.Time
}

func insertEvents(ctx context.Context, tx *sqldb.Tx, events []outboxEvent) error {
	// Many rows a statement (a round trip each on PostgreSQL), in chunks of
	// powers of two so the statements have few distinct texts.
	for len(events) > 0 {
		n := recordChunk
		for n > len(events) {
			n /= 2
		}
		args := make([]any, 0, 7*n)
		for _, e := range events[:n] {
			args = append(args, e.EventID, e.FaxID, e.Type, e.Data, e.WebhookURL, e.FailoverURL, sqldb.Micros(e.CreatedAt))
		}
		if _, err := tx.ExecContext(ctx, insertEventsSQL(n), args...); err != nil {
			return fmt.Errorf("queue events: %w", err)
		}
		events = events[n:]
	}
	return nil
}

// insertEventsSQL is the statement queuing n events.
func insertEventsSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO outbox (event_id, fax_id, event_type, data, webhook_url, failover_url, created_at) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`(?, ?, ?, ?, ?, ?, ?)`)
	}
	return b.String()
}

// insertFax creates f, its document when doc is not nil, and queues its
// events, in one transaction.
func (s *store) insertFax(ctx context.Context, f faxRow, doc []byte, events []outboxEvent) error {
	return s.writeFax(ctx, "insert fax", f, doc, f.CreatedAt, events, func(tx *sqldb.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO faxes (`+faxColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			f.ID, f.AccountID, f.ConnectionID, f.Direction, f.From, f.To, f.MediaURL, f.Quality, f.Status,
			f.StoreMedia, f.MediaID, f.PageCount, f.FailureReason, f.PartialContent, f.CallDurationSecs, f.WebhookURL,
			f.WebhookFailoverURL, f.Outcome, f.StepsLeft, sqldb.NullMicros(f.NextStepAt), sqldb.Micros(f.CreatedAt), sqldb.Micros(f.UpdatedAt), sqldb.NullMicros(f.DeletedAt))
		if err != nil {
			return fmt.Errorf("insert fax: %w", err)
		}
		return nil
	})
}

// writeFax runs write, the change of fax f, in one transaction with the
// insert of f's document doc (when doc is not nil, created at docAt) and
// the queueing of events: an event is never committed without its change,
// nor a change without its event. what names the change in its errors.
func (s *store) writeFax(ctx context.Context, what string, f faxRow, doc []byte, docAt time.Time, events []outboxEvent, write func(tx *sqldb.Tx) error) error {
	// InTx: on SQLite the writes arriving together commit together. The
	// errors of the writes say what failed; the transaction's own (its
	// begin, its commit) are named after the change.
	var writeErr error
	err := s.db.InTx(ctx, func(tx *sqldb.Tx) error {
		writeErr = nil
		if doc != nil && f.MediaID != nil {
			if _, err := tx.ExecContext(ctx, `INSERT INTO media (id, account_id, content, created_at) VALUES (?, ?, ?, ?)`,
				*f.MediaID, f.AccountID, doc, sqldb.Micros(docAt)); err != nil {
				writeErr = fmt.Errorf("insert media: %w", err)
				return writeErr
			}
		}
		if writeErr = write(tx); writeErr != nil {
			return writeErr
		}
		writeErr = insertEvents(ctx, tx, events)
		return writeErr
	})
	if err != nil && err != writeErr {
		return fmt.Errorf("%s: %w", what, err)
	}
	return err
}

// faxGuard is the state a change of a fax was computed from: the change is
// made only when the stored fax is still in it.
type faxGuard struct {
	// Status is the fax's state when it was read.
	Status string
	// Claim, when not "", is the replica whose claim on the fax's step the
	// change completes: the change is made only while the claim is still
	// this replica's (another replica may have taken the step over after
	// the lease ended) and StepsLeft is still the fax's, so a step that
	// changes only the steps left is not taken twice either. A change that
	// is not a step (a cancel, a delete) needs the status alone.
	Claim     string
	StepsLeft int
}

// updateFax writes f's mutable columns when the stored fax is still as g
// says and not deleted (errStale otherwise), stores doc when it is not nil,
// and queues events, in one transaction: an event is never committed
// without its state change, nor a state change without its event. The
// fax's claim, whoever holds it, ends with the change.
func (s *store) updateFax(ctx context.Context, f faxRow, g faxGuard, doc []byte, events []outboxEvent) error {
	ctx, cancel, err := settled(ctx)
	if err != nil {
		return fmt.Errorf("update fax: %w", err)
	}
	defer cancel()
	query := `UPDATE faxes SET status = ?, media_url = ?, media_id = ?, page_count = ?, failure_reason = ?,
		partial_content = ?, call_duration_secs = ?, outcome = ?, steps_left = ?, next_step_at = ?, updated_at = ?, deleted_at = ?,
		claimed_by = NULL, lease_until = NULL
		WHERE id = ? AND status = ? AND deleted_at IS NULL`
	args := []any{f.Status, f.MediaURL, f.MediaID, f.PageCount, f.FailureReason,
		f.PartialContent, f.CallDurationSecs, f.Outcome, f.StepsLeft, sqldb.NullMicros(f.NextStepAt), sqldb.Micros(f.UpdatedAt), sqldb.NullMicros(f.DeletedAt),
		f.ID, g.Status}
	if g.Claim != "" {
		query += ` AND claimed_by = ? AND steps_left = ?`
		args = append(args, g.Claim, g.StepsLeft)
	}
	return s.writeFax(ctx, "update fax", f, doc, f.UpdatedAt, events, func(tx *sqldb.Tx) error {
		if err := sqldb.ExecOne(ctx, tx, errStale, query, args...); err != nil {
			return fmt.Errorf("update fax: %w", err)
		}
		return nil
	})
}

// fax returns a fax of the account that is not deleted.
func (s *store) fax(ctx context.Context, accountID, id string) (faxRow, error) {
	f, err := scanFax(s.db.QueryRowContext(ctx, `SELECT `+faxColumns+` FROM faxes WHERE id = ? AND account_id = ? AND deleted_at IS NULL`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return faxRow{}, storeerr.ErrNotFound
	}
	if err != nil {
		return faxRow{}, fmt.Errorf("read fax: %w", err)
	}
	return f, nil
}

// faxFilter narrows a list of faxes.
type faxFilter struct {
	CreatedGTE, CreatedLTE *time.Time
	Direction, From, To    string
}

func (s *store) listFaxes(ctx context.Context, accountID string, f faxFilter, offset, limit int) ([]faxRow, int, error) {
	where := []string{"account_id = ?", "deleted_at IS NULL"}
	args := []any{accountID}
	if f.CreatedGTE != nil {
		where, args = append(where, "created_at >= ?"), append(args, sqldb.Micros(*f.CreatedGTE))
	}
	if f.CreatedLTE != nil {
		where, args = append(where, "created_at <= ?"), append(args, sqldb.Micros(*f.CreatedLTE))
	}
	if f.Direction != "" {
		where, args = append(where, "direction = ?"), append(args, f.Direction)
	}
	if f.From != "" {
		where, args = append(where, "from_number = ?"), append(args, f.From)
	}
	if f.To != "" {
		where, args = append(where, "to_number = ?"), append(args, f.To)
	}
	cond := strings.Join(where, " AND ")
	key := cond + "\x00" + fmt.Sprintf("%#v|%d|%d", args, offset, limit)
	if p, ok := s.pages.Get(key); ok {
		return p.rows, p.total, nil
	}
	gen := s.pages.Generation()
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM faxes WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count faxes: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+faxColumns+` FROM faxes WHERE `+cond+` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list faxes: %w", err)
	}
	out, err := scanFaxes(rows)
	if err != nil {
		return nil, 0, fmt.Errorf("list faxes: %w", err)
	}
	s.pages.Put(gen, key, faxPage{rows: out, total: total})
	return out, total, nil
}

// faxPage is a page of listFaxes. Its rows are shared by every reader of the
// cache: never modify them.
type faxPage struct {
	rows  []faxRow
	total int
}

// claimDueFaxes claims for replica, until leaseUntil, up to limit faxes
// whose next simulator step is due at now and that no replica holds (or
// whose holder's lease has ended), oldest first; an account has at most
// perAccount faxes claimed at once, whichever replicas hold them, so one
// account's backlog neither holds every worker nor hides another account's
// due faxes.
//
// A claim reads only the faxes it may take, whatever the backlog: the
// accounts with a due fax and room, oldest due first (one index seek per
// account, faxes_due_by_account), at most limit of them, since the limit
// oldest faxes of the claim are among those accounts' oldest; then, in one
// statement, each of those accounts' oldest due faxes up to its room, the
// limit oldest of which it claims. A burst of sends to one account leaves
// thousands due at once, and a claim that ranked all of them would cost
// their number at every step the simulator finishes
// (BenchmarkClaimDueFaxes_Backlog).
//
// Claims of different accounts run in parallel on every replica. Each
// account's claims are decided one at a time: on PostgreSQL the claim first
// takes, without waiting, the lock of each of those accounts (an account
// another replica is claiming for is left to it), then counts their claimed
// faxes and decides, in statements that see every claim committed before,
// for the accounts it holds. On SQLite the transaction runs alone. The
// UPDATE checks the due conditions again on each row, so a fax a concurrent
// step or release changed meanwhile is claimed only while still due and
// free: two replicas never claim one fax.
func (s *store) claimDueFaxes(ctx context.Context, replica string, now, leaseUntil time.Time, perAccount, limit int) ([]faxRow, error) {
	candidates := func(ctx context.Context, tx *sqldb.Tx) ([]string, error) {
		return s.claimableAccounts(ctx, tx, now, perAccount, limit)
	}
	out, err := claimInTx(ctx, s, claimScope{lock: "fax-claim-account", column: "account_id", candidates: candidates},
		func(ctx context.Context, tx *sqldb.Tx, _ string, scopeArgs []any) ([]faxRow, error) {
			var accounts []string
			if len(scopeArgs) == 1 {
				accounts = scopeArgs[0].([]string) // the ones this claim holds the lock of
			} else {
				var err error
				if accounts, err = candidates(ctx, tx); err != nil {
					return nil, err
				}
			}
			return s.claimOf(ctx, tx, accounts, replica, now, leaseUntil, perAccount, limit)
		})
	if err != nil {
		return nil, fmt.Errorf("claim due faxes: %w", err)
	}
	// RETURNING follows no ORDER BY: oldest first again.
	slices.SortFunc(out, func(a, b faxRow) int {
		if c := a.NextStepAt.Compare(*b.NextStepAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// dueAndFree is the condition on a fax of the faxes table (columns
// unqualified) that its step is due at the first argument and no replica
// holds it at the second.
const dueAndFree = `next_step_at IS NOT NULL AND next_step_at <= ? AND deleted_at IS NULL AND (claimed_by IS NULL OR lease_until <= ?)`

// claimableAccounts returns up to limit accounts with a fax due and free at
// now and fewer than perAccount faxes claimed, oldest due first; accounts
// on a sandbox clock of their own are not the stack clock's to step.
func (s *store) claimableAccounts(ctx context.Context, tx *sqldb.Tx, now time.Time, perAccount, limit int) ([]string, error) {
	// Most claims find nothing due (the simulator looks at every commit):
	// one look at the due index's first entry answers those, before a look
	// at every account.
	var due int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM faxes WHERE next_step_at IS NOT NULL AND next_step_at <= ? LIMIT 1) AS d`,
		sqldb.Micros(now)).Scan(&due); err != nil || due == 0 {
		return nil, err
	}
	own := ""
	if s.ownClocks {
		own = ` WHERE a.name NOT LIKE '` + descriptor.SandboxSetPrefix + `%'`
	}
	// Materialized, so each account's oldest due fax is looked up once.
	return queryStrings(ctx, tx, `WITH due AS MATERIALIZED (
			SELECT a.id, (SELECT next_step_at FROM faxes WHERE account_id = a.id AND `+dueAndFree+`
				ORDER BY next_step_at LIMIT 1) AS oldest
			FROM accounts AS a`+own+`
		)
		SELECT id FROM due WHERE oldest IS NOT NULL AND (SELECT COUNT(*) FROM faxes AS busy
			WHERE busy.account_id = due.id AND busy.claimed_by IS NOT NULL AND busy.lease_until > ?) < ?
		ORDER BY oldest, id LIMIT ?`, sqldb.Micros(now), sqldb.Micros(now), sqldb.Micros(now), perAccount, limit)
}

// claimOf claims for replica up to limit of accounts' due and free faxes,
// oldest first, each account's up to its room under perAccount.
func (s *store) claimOf(ctx context.Context, tx *sqldb.Tx, accounts []string, replica string, now, leaseUntil time.Time, perAccount, limit int) ([]faxRow, error) {
	if len(accounts) == 0 {
		return nil, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(accounts)), ", ")
	args := []any{sqldb.Micros(now)}
	for _, a := range accounts {
		args = append(args, a)
	}
	rows, err := tx.QueryContext(ctx, `SELECT account_id, COUNT(*) FROM faxes
		WHERE claimed_by IS NOT NULL AND lease_until > ? AND account_id IN (`+marks+`) GROUP BY account_id`, args...)
	if err != nil {
		return nil, err
	}
	busy := map[string]int{}
	for rows.Next() {
		var a string
		var n int
		if err := rows.Scan(&a, &n); err != nil {
			_ = rows.Close()
			return nil, err
		}
		busy[a] = n
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var branches []string
	args = []any{replica, sqldb.Micros(leaseUntil)}
	for i, a := range accounts {
		room := perAccount - busy[a]
		if room <= 0 {
			continue
		}
		branches = append(branches, fmt.Sprintf(`SELECT id, next_step_at FROM (SELECT id, next_step_at FROM faxes
			WHERE account_id = ? AND %s ORDER BY next_step_at, id LIMIT ?) AS a%d`, dueAndFree, i))
		args = append(args, a, sqldb.Micros(now), sqldb.Micros(now), room)
	}
	if len(branches) == 0 {
		return nil, nil
	}
	args = append(args, limit, sqldb.Micros(now), sqldb.Micros(now))
	rows, err = tx.QueryContext(ctx, `UPDATE faxes SET claimed_by = ?, lease_until = ? WHERE id IN (
			SELECT id FROM (`+strings.Join(branches, "\n\t\t\tUNION ALL ")+`) AS due ORDER BY next_step_at, id LIMIT ?
		) AND `+dueAndFree+`
		RETURNING `+faxColumns, args...)
	if err != nil {
		return nil, err
	}
	return scanFaxes(rows)
}

// claimScope is how a claim of the worker loops narrows itself on
// PostgreSQL, where claims of different replicas run in parallel: it takes,
// without waiting, the lock of each of its candidates (an account, a fax)
// named lock (one another replica holds is left to it), optionally locks
// rows of those it holds (lockRows), and claims only among the rows whose
// column is one of them.
type claimScope struct {
	lock, column string
	candidates   func(ctx context.Context, tx *sqldb.Tx) ([]string, error)
	lockRows     func(ctx context.Context, tx *sqldb.Tx, held []string) error
	// quiet: the claim writes only the outbox, which no cache reads
	// (sqldb.DB.QuietInTx).
	quiet bool
}

// claimInTx runs decide, a claim, in a transaction of settled's context. On
// PostgreSQL decide runs only when sc's locks give it candidates, and is
// given the condition (" AND column = ANY(?)" and its argument) that keeps
// it to them; on SQLite, where the transaction runs alone, it is given
// none.
func claimInTx[T any](ctx context.Context, s *store, sc claimScope, decide func(ctx context.Context, tx *sqldb.Tx, scope string, scopeArgs []any) ([]T, error)) ([]T, error) {
	ctx, cancel, err := settled(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var out []T
	inTx := s.db.InTx
	if sc.quiet {
		inTx = s.db.QuietInTx
	}
	err = inTx(ctx, func(tx *sqldb.Tx) error {
		out = nil
		scope, scopeArgs := "", []any(nil)
		if s.db.Dialect() == sqldb.Postgres {
			held, err := sc.candidates(ctx, tx)
			if err != nil {
				return err
			}
			if held, err = tx.TryLock(ctx, sc.lock, held); err != nil || len(held) == 0 {
				return err
			}
			if sc.lockRows != nil {
				if err := sc.lockRows(ctx, tx, held); err != nil {
					return err
				}
			}
			scope, scopeArgs = " AND "+sc.column+" = ANY(?)", []any{held}
		}
		var err error
		out, err = decide(ctx, tx, scope, scopeArgs)
		return err
	})
	return out, err
}

// settleTimeout bounds a write of the worker loops that runs on after their
// context ended.
const settleTimeout = 10 * time.Second

// settled returns the context a write of the worker loops runs in: ctx's
// values without its end, for at most settleTimeout, and an error when ctx
// has ended already (the write is not started then). A write that has
// started runs to its end, so its fate is known when the loops return. A
// write whose context ends while PostgreSQL runs it, or runs its COMMIT, is
// abandoned by the client at once while the server may still commit it: a
// claim could then appear after Run returned, held by a replica that no
// longer works on it.
func settled(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	return c, cancel, nil
}

// queryStrings runs a query of one text column and returns its values.
func queryStrings(ctx context.Context, tx *sqldb.Tx, query string, args ...any) ([]string, error) {
	return apistore.Collect(ctx, tx, func(rows *sql.Rows, v *string) error { return rows.Scan(v) }, query, args...)
}

// releaseFax ends replica's claim on fax id, so its step is due again at once
// (the step failed for a reason that may pass).
func (s *store) releaseFax(ctx context.Context, id, replica string) error {
	ctx, cancel, err := settled(ctx)
	if err != nil {
		return fmt.Errorf("release fax %s: %w", id, err)
	}
	defer cancel()
	if _, err := s.db.ExecContext(ctx, `UPDATE faxes SET claimed_by = NULL, lease_until = NULL WHERE id = ? AND claimed_by = ?`, id, replica); err != nil {
		return fmt.Errorf("release fax %s: %w", id, err)
	}
	return nil
}

// releaseClaims ends every claim of replica: a replica restarted under the
// same name takes its work back at once instead of after the lease.
func (s *store) releaseClaims(ctx context.Context, replica string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE faxes SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = ?`, replica); err != nil {
		return fmt.Errorf("release claimed faxes: %w", err)
	}
	if _, err := s.db.QuietExecContext(ctx, `UPDATE outbox SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = ?`, replica); err != nil {
		return fmt.Errorf("release claimed events: %w", err)
	}
	return nil
}

// nextDue returns when the earliest simulator step after now is due.
func (s *store) nextDue(ctx context.Context, now time.Time) (*time.Time, error) {
	var next sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT MIN(next_step_at) FROM faxes WHERE next_step_at IS NOT NULL AND next_step_at > ? AND deleted_at IS NULL`, sqldb.Micros(now)).Scan(&next)
	if err != nil {
		return nil, fmt.Errorf("next due fax: %w", err)
	}
	if !next.Valid {
		return nil, nil
	}
	t := sqldb.Time(next.Int64)
	return &t, nil
}

func (s *store) media(ctx context.Context, id string) ([]byte, error) {
	var content []byte
	err := s.db.QueryRowContext(ctx, `SELECT content FROM media WHERE id = ?`, id).Scan(&content)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storeerr.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read media: %w", err)
	}
	return content, nil
}

// claimEvents claims for replica, until leaseUntil, up to limit pending
// events, in seq order, of the faxes none of whose pending events a replica
// holds (or whose holder's lease has ended): a fax's events are held by one
// replica at a time, which sends them in order.
//
// Claims of different faxes run in parallel on every replica. On
// PostgreSQL the claim takes, without waiting, the lock of each fax with
// pending events among the first limit (a fax another replica is claiming
// for is left to it), then locks those faxes' pending events, so a holder's
// renewal or a recorded outcome of them is either committed before the
// decision or made after it (and then finds the claim is no longer its
// holder's), then decides in a statement that sees all of that. On SQLite
// the transaction runs alone.
func (s *store) claimEvents(ctx context.Context, replica string, now, leaseUntil time.Time, limit int) ([]outboxEvent, error) {
	out, err := claimInTx(ctx, s, claimScope{
		lock: "fax-claim-events", column: "fax_id", quiet: true,
		candidates: func(ctx context.Context, tx *sqldb.Tx) ([]string, error) {
			return queryStrings(ctx, tx, `SELECT DISTINCT fax_id FROM (
					SELECT fax_id FROM outbox WHERE delivered_at IS NULL AND abandoned_at IS NULL AND fax_id NOT IN (
						SELECT fax_id FROM outbox WHERE delivered_at IS NULL AND abandoned_at IS NULL
							AND claimed_by IS NOT NULL AND lease_until > ?
					) ORDER BY seq LIMIT ?
				) AS pending`, sqldb.Micros(now), limit)
		},
		lockRows: func(ctx context.Context, tx *sqldb.Tx, faxes []string) error {
			_, err := tx.LockRows(ctx, `SELECT seq FROM outbox WHERE fax_id = ANY(?) AND delivered_at IS NULL AND abandoned_at IS NULL ORDER BY seq`, faxes)
			return err
		},
	}, func(ctx context.Context, tx *sqldb.Tx, scope string, scopeArgs []any) ([]outboxEvent, error) {
		args := append([]any{replica, sqldb.Micros(leaseUntil)}, scopeArgs...)
		args = append(args, sqldb.Micros(now), limit)
		return apistore.Collect(ctx, tx, func(rows *sql.Rows, e *outboxEvent) error {
			var created int64
			if err := rows.Scan(&e.Seq, &e.EventID, &e.FaxID, &e.Type, &e.Data, &e.WebhookURL, &e.FailoverURL, &e.Attempts, &created); err != nil {
				return err
			}
			e.CreatedAt = sqldb.Time(created)
			return nil
		}, `UPDATE outbox SET claimed_by = ?, lease_until = ? WHERE seq IN (
				SELECT seq FROM outbox WHERE delivered_at IS NULL AND abandoned_at IS NULL`+scope+` AND fax_id NOT IN (
					SELECT fax_id FROM outbox WHERE delivered_at IS NULL AND abandoned_at IS NULL
						AND claimed_by IS NOT NULL AND lease_until > ?
				) ORDER BY seq LIMIT ?
			) RETURNING seq, event_id, fax_id, event_type, data, webhook_url, failover_url, attempts, created_at`, args...)
	})
	if err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	// RETURNING follows no ORDER BY: seq order again.
	slices.SortFunc(out, func(a, b outboxEvent) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// deliveryOutcome is what became of one event.
type deliveryOutcome struct {
	Seq         int64
	Attempts    int
	DeliveredTo string // empty: abandoned
	At          time.Time
}

// recordOutcomes marks events delivered or abandoned, in one transaction,
// ending their claims. An outcome is recorded whoever holds the event now: a
// delivery is a fact even when a slow replica's lease ended meanwhile.
func (s *store) recordOutcomes(ctx context.Context, outcomes []deliveryOutcome) error {
	// In InTx: on PostgreSQL a concurrent claim locking some of these
	// events may deadlock with it (each locks many rows), and the
	// transaction is then run again.
	if s.db.Dialect() == sqldb.Postgres {
		return s.recordOutcomesArrays(ctx, outcomes)
	}
	err := s.db.QuietInTx(ctx, func(tx *sqldb.Tx) error {
		// A few statements of many rows each, not a statement per event: on
		// PostgreSQL each statement is a round trip. The chunks have sizes of
		// powers of two, so the statements have few distinct texts.
		for left := outcomes; len(left) > 0; {
			n := recordChunk
			for n > len(left) {
				n /= 2
			}
			args := make([]any, 0, 4*n)
			for _, o := range left[:n] {
				args = append(args, o.Seq, o.Attempts, sqldb.Micros(o.At), o.DeliveredTo)
			}
			if _, err := tx.ExecContext(ctx, recordOutcomesSQL(n), args...); err != nil {
				return err
			}
			left = left[n:]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record deliveries: %w", err)
	}
	return nil
}

// recordOutcomesArrays is recordOutcomes on PostgreSQL: one statement
// whatever the number of outcomes, its rows given as arrays. The events
// are found through the primary key by their seqs (seq = ANY): a join on a
// VALUES list let the planner, misled by an outbox whose statistics lag its
// churn, walk every pending event for each batch (tens of milliseconds).
func (s *store) recordOutcomesArrays(ctx context.Context, outcomes []deliveryOutcome) error {
	seqs, attempts, at, to := make([]int64, len(outcomes)), make([]int64, len(outcomes)), make([]int64, len(outcomes)), make([]string, len(outcomes))
	for i, o := range outcomes {
		seqs[i], attempts[i], at[i], to[i] = o.Seq, int64(o.Attempts), sqldb.Micros(o.At), o.DeliveredTo
	}
	// One statement, its own transaction, which a Pipeline runs again when
	// it deadlocked with a concurrent claim (as InTx would).
	err := s.db.QuietPipeline(ctx, sqldb.Statement{SQL: `UPDATE outbox SET attempts = o.attempts,
			delivered_at = CASE WHEN o.url = '' THEN NULL ELSE o.at END,
			delivered_to = NULLIF(o.url, ''),
			abandoned_at = CASE WHEN o.url = '' THEN o.at ELSE NULL END,
			claimed_by = NULL, lease_until = NULL
			FROM unnest(CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[])) AS o(seq, attempts, at, url)
			WHERE outbox.seq = o.seq AND outbox.seq = ANY(CAST(? AS BIGINT[]))
				AND outbox.delivered_at IS NULL AND outbox.abandoned_at IS NULL`,
		Args: []any{seqs, attempts, at, to, seqs}})
	if err != nil {
		return fmt.Errorf("record deliveries: %w", err)
	}
	return nil
}

// recordChunk is the most outcomes one statement records.
const recordChunk = 64

// recordOutcomesSQL is the statement recording n outcomes, each given as
// seq, attempts, the instant and the URL that acknowledged it ("":
// abandoned). The VALUES columns are column1... on both engines.
func recordOutcomesSQL(n int) string {
	var b strings.Builder
	b.WriteString(`UPDATE outbox SET attempts = o.column2,
		delivered_at = CASE WHEN o.column4 = '' THEN NULL ELSE o.column3 END,
		delivered_to = NULLIF(o.column4, ''),
		abandoned_at = CASE WHEN o.column4 = '' THEN o.column3 ELSE NULL END,
		claimed_by = NULL, lease_until = NULL
		FROM (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`(CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS TEXT))`)
	}
	b.WriteString(`) AS o WHERE outbox.seq = o.column1 AND outbox.delivered_at IS NULL AND outbox.abandoned_at IS NULL`)
	return b.String()
}

// recordAttempts stores how many attempts an undelivered event has had, so
// meta.attempt keeps counting across a restart or a takeover, and extends
// replica's claim on the pending events of the event's fax to leaseUntil.
// held is false when the claim is no longer replica's.
func (s *store) recordAttempts(ctx context.Context, e outboxEvent, attempts int, replica string, leaseUntil time.Time) (held bool, err error) {
	ctx, cancel, err := settled(ctx)
	if err != nil {
		return false, fmt.Errorf("record attempts of event %d: %w", e.Seq, err)
	}
	defer cancel()
	res, err := s.db.QuietExecContext(ctx, `UPDATE outbox SET lease_until = ?, attempts = CASE WHEN seq = ? THEN ? ELSE attempts END
		WHERE fax_id = ? AND claimed_by = ? AND delivered_at IS NULL AND abandoned_at IS NULL`,
		sqldb.Micros(leaseUntil), e.Seq, attempts, e.FaxID, replica)
	if err != nil {
		return false, fmt.Errorf("record attempts of event %d: %w", e.Seq, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("record attempts of event %d: %w", e.Seq, err)
	}
	return n > 0, nil
}

// renewEvents extends replica's claim on the pending events of fax faxID to
// leaseUntil. held is false when the claim is no longer replica's.
func (s *store) renewEvents(ctx context.Context, faxID, replica string, leaseUntil time.Time) (held bool, err error) {
	ctx, cancel, err := settled(ctx)
	if err != nil {
		return false, fmt.Errorf("renew the claim on the events of fax %s: %w", faxID, err)
	}
	defer cancel()
	res, err := s.db.QuietExecContext(ctx, `UPDATE outbox SET lease_until = ?
		WHERE fax_id = ? AND claimed_by = ? AND delivered_at IS NULL AND abandoned_at IS NULL`, sqldb.Micros(leaseUntil), faxID, replica)
	if err != nil {
		return false, fmt.Errorf("renew the claim on the events of fax %s: %w", faxID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("renew the claim on the events of fax %s: %w", faxID, err)
	}
	return n > 0, nil
}

// eventStats counts the outbox's events by fate (for operators and tests).
func (s *store) eventStats(ctx context.Context) (pending, delivered, abandoned int, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(CASE WHEN delivered_at IS NULL AND abandoned_at IS NULL THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN delivered_at IS NOT NULL THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN abandoned_at IS NOT NULL THEN 1 ELSE 0 END), 0) FROM outbox`).Scan(&pending, &delivered, &abandoned)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("event stats: %w", err)
	}
	return pending, delivered, abandoned, nil
}

// OpenDB opens (creating when needed) the fax database at path and brings
// its schema up to date.
func OpenDB(ctx context.Context, path string, opts ...sqlitedb.Option) (*sql.DB, error) {
	db, err := sqlitedb.Open(ctx, path, API.Migrations().SQLite, opts...)
	if err != nil {
		return nil, fmt.Errorf("fax database: %w", err)
	}
	return db, nil
}
