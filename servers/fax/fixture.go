package fax

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// fixture is the fax section of a sandbox's fixture (specs/sandbox,
// FaxFixture): applications, numbers the sandbox allocates for them (phone
// numbers are global), API keys, and outbound faxes in a given status.
type fixture struct {
	Applications []struct {
		Name               string `json:"name"`
		WebhookURL         string `json:"webhook_url"`
		WebhookFailoverURL string `json:"webhook_failover_url"`
	} `json:"applications"`
	Numbers []struct {
		Name        string `json:"name"`
		Application string `json:"application"`
	} `json:"numbers"`
	APIKeys []string `json:"api_keys"`
	Faxes   []struct {
		Application   string `json:"application"`
		From          string `json:"from"`
		To            string `json:"to"`
		Status        string `json:"status"`
		Pages         int    `json:"pages"`
		MediaURL      string `json:"media_url"`
		FailureReason string `json:"failure_reason"`
	} `json:"faxes"`
}

// fixtureCredentials are what the fax section of a fixture made, by the
// fixture's names.
type fixtureCredentials struct {
	Applications map[string]string `json:"applications,omitempty"`
	Numbers      map[string]string `json:"numbers,omitempty"`
	APIKeys      map[string]string `json:"api_keys,omitempty"`
}

// eventsTo are the events the simulator has queued for an outbound fax by
// the time it reaches each status, and whether it has steps left.
var eventsTo = map[faxapi.FaxStatus]struct {
	events   []string
	inFlight bool
}{
	faxapi.FaxStatusQueued:         {[]string{eventQueued}, true},
	faxapi.FaxStatusMediaProcessed: {[]string{eventQueued, eventMediaProcessed}, true},
	faxapi.FaxStatusOriginated:     {[]string{eventQueued, eventMediaProcessed}, true},
	faxapi.FaxStatusSending:        {[]string{eventQueued, eventMediaProcessed, eventSendingStarted}, true},
	faxapi.FaxStatusDelivered:      {[]string{eventQueued, eventMediaProcessed, eventSendingStarted, eventDelivered}, false},
	faxapi.FaxStatusFailed:         {[]string{eventQueued, eventMediaProcessed, eventSendingStarted, eventFailed}, false},
}

// applyFixture creates the fax section's applications (each with an
// outbound voice profile, so it can send), numbers, keys and faxes in the
// set's account, in one transaction. Each fax is as the simulator would have
// left it in its status, its events queued for its application's webhook
// URL; a fax still in flight goes on in the sandbox's time.
func applyFixture(ctx context.Context, s *Server, set descriptor.TenantSet, creds *DemoCredentials, section json.RawMessage) (json.RawMessage, error) {
	var f fixture
	if err := descriptor.DecodeFixture(section, &f); err != nil {
		return nil, err
	}
	inbox := set.WebhookURL
	if inbox == "" {
		inbox = set.URLs["admin"] + InboxPath
	}
	now := s.cfg.ClockFor(set.Name).Now().UTC().Truncate(time.Microsecond)
	out := fixtureCredentials{Applications: map[string]string{}, Numbers: map[string]string{}, APIKeys: map[string]string{}}
	apps := map[string]application{}
	for i, a := range f.Applications {
		at := fmt.Sprintf("/applications/%d", i)
		if a.Name == "" || apps[a.Name].ID != "" {
			return nil, descriptor.Fixturef(at+"/name", "the application name %q is empty or taken", a.Name)
		}
		webhook := a.WebhookURL
		if webhook == "" {
			webhook = inbox
		} else if !httpURL(webhook) {
			return nil, descriptor.Fixturef(at+"/webhook_url", "%q is not an absolute http or https URL", webhook)
		}
		if a.WebhookFailoverURL != "" && !httpURL(a.WebhookFailoverURL) {
			return nil, descriptor.Fixturef(at+"/webhook_failover_url", "%q is not an absolute http or https URL", a.WebhookFailoverURL)
		}
		profile := uuid.NewString()
		apps[a.Name] = application{ID: uuid.NewString(), Name: a.Name, WebhookURL: webhook, WebhookFailoverURL: a.WebhookFailoverURL,
			VoiceProfileID: &profile, CreatedAt: now, UpdatedAt: now}
		out.Applications[a.Name] = apps[a.Name].ID
	}
	for i, n := range f.Numbers {
		at := fmt.Sprintf("/numbers/%d", i)
		if _, dup := out.Numbers[n.Name]; dup || n.Name == "" {
			return nil, descriptor.Fixturef(at+"/name", "the number name %q is empty or taken", n.Name)
		}
		if _, ok := apps[n.Application]; !ok && n.Application != "" {
			return nil, descriptor.Fixturef(at+"/application", "the fixture makes no application %q", n.Application)
		}
		out.Numbers[n.Name] = "" // allocated in the transaction
	}
	for i, k := range f.APIKeys {
		if _, dup := out.APIKeys[k]; dup || k == "" {
			return nil, descriptor.Fixturef(fmt.Sprintf("/api_keys/%d", i), "the key name %q is empty or taken", k)
		}
		out.APIKeys[k] = newAPIKey()
	}
	for i, x := range f.Faxes {
		at := fmt.Sprintf("/faxes/%d", i)
		if _, ok := apps[x.Application]; !ok {
			return nil, descriptor.Fixturef(at+"/application", "the fixture makes no application %q", x.Application)
		}
		if _, ok := out.Numbers[x.From]; !ok {
			return nil, descriptor.Fixturef(at+"/from", "the fixture makes no number named %q", x.From)
		}
		if !slices.ContainsFunc(f.Numbers, func(n struct {
			Name        string `json:"name"`
			Application string `json:"application"`
		}) bool {
			return n.Name == x.From && n.Application == x.Application
		}) {
			return nil, descriptor.Fixturef(at+"/from", "the number %q is not enabled on the application %q", x.From, x.Application)
		}
		if _, ok := e164(x.To); !ok {
			return nil, descriptor.Fixturef(at+"/to", "%q is not a valid phone number in E.164 form (+13125550100)", x.To)
		}
		if _, ok := eventsTo[faxapi.FaxStatus(x.Status)]; !ok {
			return nil, descriptor.Fixturef(at+"/status", "%q is not the status of an outbound fax", x.Status)
		}
		if x.FailureReason != "" && (x.Status != string(faxapi.FaxStatusFailed) || !faxapi.FaxFailureReason(x.FailureReason).Valid()) {
			return nil, descriptor.Fixturef(at+"/failure_reason", "%q is not a failure reason, or the fax did not fail", x.FailureReason)
		}
		if x.MediaURL != "" && !httpURL(x.MediaURL) {
			return nil, descriptor.Fixturef(at+"/media_url", "%q is not an absolute http or https URL", x.MediaURL)
		}
	}
	err := s.store.revokingTx(ctx, func(tx *sqldb.Tx) error {
		var acct string
		if err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name = ?`, set.Name).Scan(&acct); err != nil {
			return fmt.Errorf("read account %q: %w", set.Name, err)
		}
		for _, a := range f.Applications {
			app := apps[a.Name]
			if _, err := tx.ExecContext(ctx, `INSERT INTO outbound_voice_profiles (id, account_id, name, created_at) VALUES (?, ?, ?, ?)`,
				*app.VoiceProfileID, acct, a.Name, sqldb.Micros(now)); err != nil {
				return fmt.Errorf("create profile: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO fax_applications (id, account_id, application_name, webhook_url, webhook_failover_url,
				outbound_voice_profile_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
				app.ID, acct, app.Name, app.WebhookURL, app.WebhookFailoverURL, *app.VoiceProfileID, sqldb.Micros(now), sqldb.Micros(now)); err != nil {
				return fmt.Errorf("create application: %w", err)
			}
		}
		for _, n := range f.Numbers {
			var appID *string
			if n.Application != "" {
				id := apps[n.Application].ID
				appID = &id
			}
			number, err := allocateNumber(ctx, tx, set.Name+"/"+n.Name, acct, appID)
			if err != nil {
				return err
			}
			out.Numbers[n.Name] = number
		}
		for _, k := range f.APIKeys {
			if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, key_hash, created_at) VALUES (?, ?, ?, ?)`,
				uuid.NewString(), acct, hashKey(out.APIKeys[k]), sqldb.Micros(now)); err != nil {
				return fmt.Errorf("create api key: %w", err)
			}
		}
		// The faxes in statements of up to 100 rows (a round trip each on
		// PostgreSQL), then their events.
		var events []outboxEvent
		var args []any
		flush := func(n int) error {
			if n == 0 {
				return nil
			}
			one := "(" + strings.TrimSuffix(strings.Repeat("?, ", 23), ", ") + ")"
			_, err := tx.ExecContext(ctx, `INSERT INTO faxes (`+faxColumns+`) VALUES `+strings.TrimSuffix(strings.Repeat(one+", ", n), ", "), args...)
			args = args[:0]
			if err != nil {
				return fmt.Errorf("create faxes: %w", err)
			}
			return nil
		}
		for i, x := range f.Faxes {
			row, evs, err := s.fixtureFax(acct, apps[x.Application], out.Numbers[x.From], x.To, x.Status, x.Pages, x.MediaURL, x.FailureReason,
				set.URLs["admin"]+SamplePath, now)
			if err != nil {
				return err
			}
			args = append(args, row.ID, row.AccountID, row.ConnectionID, row.Direction, row.From, row.To, row.MediaURL, row.Quality, row.Status,
				row.StoreMedia, row.MediaID, row.PageCount, row.FailureReason, row.PartialContent, row.CallDurationSecs, row.WebhookURL,
				row.WebhookFailoverURL, row.Outcome, row.StepsLeft, sqldb.NullMicros(row.NextStepAt), sqldb.Micros(row.CreatedAt),
				sqldb.Micros(row.UpdatedAt), sqldb.NullMicros(row.DeletedAt))
			events = append(events, evs...)
			if n := i%100 + 1; n == 100 || i == len(f.Faxes)-1 {
				if err := flush(n); err != nil {
					return err
				}
			}
		}
		return insertEvents(ctx, tx, events)
	})
	if err != nil {
		return nil, fmt.Errorf("fax: fixture of %s: %w", set.Name, err)
	}
	if len(f.Faxes) > 0 {
		s.wake()
		s.wakeDelivery()
	}
	if len(out.Applications) == 0 && len(out.Numbers) == 0 && len(out.APIKeys) == 0 {
		return nil, nil
	}
	return json.Marshal(out)
}

// fixtureFax is an outbound fax of app from the number from to the number
// to, as the simulator would have left it in status, with the events it
// would have queued on the way.
func (s *Server) fixtureFax(acct string, app application, from, to, status string, pages int, mediaURL, reason, sample string, now time.Time) (faxRow, []outboxEvent, error) {
	to, _ = e164(to)
	if pages <= 0 {
		pages = 1
	}
	if mediaURL == "" {
		mediaURL = sample
	}
	o := outcomeFor(to)
	f := faxRow{ID: uuid.NewString(), AccountID: acct, ConnectionID: app.ID, Direction: "outbound", From: from, To: to,
		MediaURL: mediaURL, Quality: string(faxapi.FaxQualityNormal), WebhookURL: app.WebhookURL, WebhookFailoverURL: app.WebhookFailoverURL,
		Outcome: o.name, CreatedAt: now, UpdatedAt: now}
	path := eventsTo[faxapi.FaxStatus(status)]
	var events []outboxEvent
	for _, typ := range path.events {
		// The fax as it was when the simulator queued typ.
		switch typ {
		case eventQueued:
			f.Status = string(faxapi.FaxStatusQueued)
		case eventMediaProcessed:
			f.Status, f.PageCount = string(faxapi.FaxStatusMediaProcessed), &pages
		case eventSendingStarted:
			f.Status, f.StepsLeft = string(faxapi.FaxStatusSending), max(o.sendingSteps, 1)
		case eventDelivered:
			d := callDuration(pages, o.sendingSteps)
			f.Status, f.CallDurationSecs, f.StepsLeft = string(faxapi.FaxStatusDelivered), &d, 0
		case eventFailed:
			if reason == "" {
				reason = string(faxapi.FaxFailureReasonReceiverNoAnswer)
			}
			f.Status, f.FailureReason, f.StepsLeft = string(faxapi.FaxStatusFailed), &reason, 0
		}
		ev, err := s.newEvent(f, typ, now)
		if err != nil {
			return f, nil, err
		}
		events = append(events, ev)
	}
	f.Status = status
	if path.inFlight {
		f.NextStepAt = &now
	}
	return f, events, nil
}

// allocateNumber gives the account a free number of the sets' range, the
// first free one from the one seed chooses, enabled on app (nil: none).
func allocateNumber(ctx context.Context, tx *sqldb.Tx, seed, acct string, app *string) (string, error) {
	n := senderNumber(seed)
	for range senderNumbersInRange {
		res, err := tx.ExecContext(ctx, `INSERT INTO numbers (phone_number, account_id, application_id) VALUES (?, ?, ?) ON CONFLICT (phone_number) DO NOTHING`,
			n, acct, app)
		if err != nil {
			return "", fmt.Errorf("allocate a number: %w", err)
		}
		if k, err := res.RowsAffected(); err == nil && k == 1 {
			return n, nil
		}
		n = nextSenderNumber(n)
	}
	return "", errors.New("allocate a number: every number of the sets' range is taken")
}

// copiedEvent is the SQL of the outbox event id in col as a copy tagged by
// the statement's next argument gives it: the event's UUID made new as
// descriptor.CopiedID makes it, then whatever follows the UUID kept, so that a
// redelivery's row (its original's id and "/redelivery/n") stays distinct
// from its original's, and names the original's new id, as the redelivery
// that made it named the old.
func copiedEvent(col string) string {
	return `substr(` + col + `, 1, 24) || ? || substr(` + col + `, 37)`
}

// frozenClaim claims the pending events of a snapshot's set for ever, so
// that no sender delivers them; a fork of it takes them unclaimed.
const frozenClaim = "snapshot"

// copyTenants copies the account of set from into a new account of set to,
// in one transaction inside the database: its profiles, applications,
// documents, faxes, events and delivery attempts (ids remapped in the
// statements that copy them, from's webhook inbox replaced by to's, each
// attempt signed again over its new body), its
// numbers (each given a free number of the sets' range, since numbers are
// global; the faxes and events name the new ones), and its API keys (each
// a new key).
func copyTenants(ctx context.Context, s *Server, from, to descriptor.TenantSet, creds *DemoCredentials, named json.RawMessage) (*DemoCredentials, json.RawMessage, error) {
	var names fixtureCredentials
	if len(named) > 0 {
		if err := json.Unmarshal(named, &names); err != nil {
			return nil, nil, fmt.Errorf("fax: copy: the fixture's credentials: %w", err)
		}
	}
	tag, acct := descriptor.CopyTag(), uuid.NewString()
	fromInbox, toInbox := from.WebhookURL, to.WebhookURL
	numbers := map[string]string{} // old -> new
	keys := map[string]string{}    // old hash (hex) -> new key
	pg := s.store.db.Dialect() == sqldb.Postgres
	err := s.store.revokingTx(ctx, func(tx *sqldb.Tx) error {
		var old string
		if err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE name = ?`, from.Name).Scan(&old); err != nil {
			return fmt.Errorf("read account %q: %w", from.Name, err)
		}
		if err := s.store.lockFaxes(ctx, tx, old); err != nil {
			return err
		}
		type num struct {
			phone string
			app   *string
		}
		nums, err := apistore.Collect(ctx, tx, func(rows *sql.Rows, n *num) error { return rows.Scan(&n.phone, &n.app) },
			`SELECT phone_number, application_id FROM numbers WHERE account_id = ? ORDER BY phone_number`, old)
		if err != nil {
			return fmt.Errorf("read numbers: %w", err)
		}
		// The account first: the numbers' rows name it.
		if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, created_at) SELECT ?, ?, created_at FROM accounts WHERE id = ?`,
			acct, to.Name, old); err != nil {
			return fmt.Errorf("copy account: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbound_voice_profiles (id, account_id, name, created_at)
			SELECT substr(id, 1, 24) || ?, ?, CASE WHEN name = ? THEN ? ELSE name END, created_at FROM outbound_voice_profiles WHERE account_id = ?`,
			tag, acct, from.Name, to.Name, old); err != nil {
			return fmt.Errorf("copy profiles: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO fax_applications (id, account_id, application_name, webhook_url, webhook_failover_url,
			outbound_voice_profile_id, created_at, updated_at)
			SELECT substr(id, 1, 24) || ?, ?, CASE WHEN application_name = ? THEN ? ELSE application_name END, replace(webhook_url, ?, ?),
			replace(webhook_failover_url, ?, ?), substr(outbound_voice_profile_id, 1, 24) || ?, created_at, updated_at
			FROM fax_applications WHERE account_id = ?`,
			tag, acct, from.Name, to.Name, fromInbox, toInbox, fromInbox, toInbox, tag, old); err != nil {
			return fmt.Errorf("copy applications: %w", err)
		}
		for _, n := range nums {
			var app *string
			if n.app != nil {
				id := descriptor.CopiedID(*n.app, tag)
				app = &id
			}
			seed := to.Name
			if n.phone != senderNumber(from.Name) && n.phone != creds.From {
				seed = to.Name + "/" + n.phone
			}
			got, err := allocateNumber(ctx, tx, seed, acct, app)
			if err != nil {
				return err
			}
			numbers[n.phone] = got
		}
		// The faxes and their events name the numbers, the fax, event,
		// account and application ids, and the webhook inbox: each is
		// mapped in the statement that copies them.
		numberOf := func(col string) string {
			expr := col
			for o, n := range numbers {
				expr = `CASE WHEN ` + col + ` = '` + o + `' THEN '` + n + `' ELSE ` + expr + ` END`
			}
			return expr
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO media (id, account_id, content, created_at)
			SELECT substr(id, 1, 24) || ?, ?, content, created_at FROM media WHERE account_id = ?`, tag, acct, old); err != nil {
			return fmt.Errorf("copy documents: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO faxes (`+faxColumns+`)
			SELECT substr(id, 1, 24) || ?, ?, substr(connection_id, 1, 24) || ?, direction, `+numberOf("from_number")+`, `+numberOf("to_number")+`,
			media_url, quality, status, store_media, substr(media_id, 1, 24) || ?, page_count, failure_reason, partial_content,
			call_duration_secs, replace(webhook_url, ?, ?), replace(webhook_failover_url, ?, ?), outcome, steps_left, next_step_at,
			created_at, updated_at, deleted_at FROM faxes WHERE account_id = ?`,
			tag, acct, tag, tag, fromInbox, toInbox, fromInbox, toInbox, old); err != nil {
			return fmt.Errorf("copy faxes: %w", err)
		}
		// An event's data names its fax, its id, the account (user_id), the
		// application (connection_id) and the numbers.
		data := textOf(pg, "o.data")
		// A redelivery's body carries its original's id, not its row's.
		data = `replace(replace(replace(replace(` + data + `, o.fax_id, substr(o.fax_id, 1, 24) || ?), substr(o.event_id, 1, 36), substr(o.event_id, 1, 24) || ?), ?, ?),
			f.connection_id, substr(f.connection_id, 1, 24) || ?)`
		dataArgs := []any{tag, tag, old, acct, tag}
		for o, n := range numbers {
			data = `replace(` + data + `, ?, ?)`
			dataArgs = append(dataArgs, o, n)
		}
		claim, lease := "NULL", "NULL"
		if isSnapshotSet(to.Name) {
			claim, lease = `CASE WHEN o.delivered_at IS NULL AND o.abandoned_at IS NULL THEN '`+frozenClaim+`' END`,
				`CASE WHEN o.delivered_at IS NULL AND o.abandoned_at IS NULL THEN 9223372036854775807 END`
		}
		args := append([]any{tag, tag}, dataArgs...)
		args = append(args, fromInbox, toInbox, fromInbox, toInbox, fromInbox, toInbox, old)
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox (event_id, fax_id, event_type, data, webhook_url, failover_url, attempts,
			created_at, delivered_at, delivered_to, abandoned_at, claimed_by, lease_until, redelivery_of)
			SELECT `+copiedEvent("o.event_id")+`, substr(o.fax_id, 1, 24) || ?, o.event_type, `+blobOf(pg, data)+`, replace(o.webhook_url, ?, ?),
			replace(o.failover_url, ?, ?), o.attempts, o.created_at, o.delivered_at, replace(o.delivered_to, ?, ?), o.abandoned_at, `+claim+`, `+lease+`, o.redelivery_of
			FROM outbox o JOIN faxes f ON f.id = o.fax_id WHERE f.account_id = ? ORDER BY o.seq`,
			args...); err != nil {
			return fmt.Errorf("copy events: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET redelivery_of = (SELECT n.seq FROM outbox r JOIN outbox n ON n.event_id = `+copiedEvent("r.event_id")+`
			WHERE r.seq = outbox.redelivery_of) WHERE redelivery_of IS NOT NULL AND fax_id IN (SELECT id FROM faxes WHERE account_id = ?)`, tag, acct); err != nil {
			return fmt.Errorf("copy redeliveries: %w", err)
		}
		body := strings.ReplaceAll(data, "o.data", "a.body")
		if _, err := tx.ExecContext(ctx, `INSERT INTO delivery_attempts (event_seq, fax_id, attempt, target, attempted_at, status_code, error,
			latency_micros, next_retry_at, headers, succeeded, body)
			SELECT n.seq, n.fax_id, a.attempt, replace(a.target, ?, ?), a.attempted_at, a.status_code, a.error, a.latency_micros, a.next_retry_at,
			a.headers, a.succeeded, `+blobOf(pg, body)+`
			FROM delivery_attempts a JOIN outbox o ON o.seq = a.event_seq JOIN faxes f ON f.id = o.fax_id
			JOIN outbox n ON n.event_id = `+copiedEvent("o.event_id")+` WHERE f.account_id = ? ORDER BY a.id`,
			append(append([]any{fromInbox, toInbox}, dataArgs...), tag, old)...); err != nil {
			return fmt.Errorf("copy delivery attempts: %w", err)
		}
		if err := s.resignCopiedAttempts(ctx, tx, acct); err != nil {
			return err
		}
		// Every key is new.
		hashes, err := queryStrings(ctx, tx, `SELECT id FROM api_keys WHERE account_id = ? ORDER BY created_at, id`, old)
		if err != nil {
			return fmt.Errorf("read keys: %w", err)
		}
		now := sqldb.Micros(s.now())
		for _, id := range hashes {
			var hash []byte
			if err := tx.QueryRowContext(ctx, `SELECT key_hash FROM api_keys WHERE id = ?`, id).Scan(&hash); err != nil {
				return fmt.Errorf("read key: %w", err)
			}
			key := newAPIKey()
			keys[hex.EncodeToString(hash)] = key
			if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, key_hash, created_at) VALUES (?, ?, ?, ?)`,
				descriptor.CopiedID(id, tag), acct, hashKey(key), now); err != nil {
				return fmt.Errorf("copy key: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("fax: copy %s to %s: %w", from.Name, to.Name, err)
	}
	if !isSnapshotSet(to.Name) {
		s.wake()
		s.wakeDelivery()
	}
	out := &DemoCredentials{BaseURL: to.URLs[apiName], APIKey: keys[hex.EncodeToString(hashKey(creds.APIKey))],
		ConnectionID: descriptor.CopiedID(creds.ConnectionID, tag), From: numbers[creds.From], WebhookPublicKey: creds.WebhookPublicKey}
	if len(names.Applications) == 0 && len(names.Numbers) == 0 && len(names.APIKeys) == 0 {
		return out, nil, nil
	}
	outNames := fixtureCredentials{Applications: map[string]string{}, Numbers: map[string]string{}, APIKeys: map[string]string{}}
	for name, id := range names.Applications {
		outNames.Applications[name] = descriptor.CopiedID(id, tag)
	}
	for name, n := range names.Numbers {
		outNames.Numbers[name] = numbers[n]
	}
	for name, k := range names.APIKeys {
		outNames.APIKeys[name] = keys[hex.EncodeToString(hashKey(k))]
	}
	raw, err := json.Marshal(outNames)
	return out, raw, err
}

// resignCopiedAttempts signs again the delivery attempts copied into
// account acct: a copied body names the copy's ids, so the signature it was
// sent with no longer holds for it. Each is signed over its new body with
// its own timestamp, as the sender would have signed it, so a receiver (or
// a test) checking the copy's log verifies it as it verified the
// original's.
func (s *Server) resignCopiedAttempts(ctx context.Context, tx *sqldb.Tx, acct string) error {
	type attempt struct {
		id      int64
		headers string
		body    []byte
	}
	attempts, err := apistore.Collect(ctx, tx, func(rows *sql.Rows, a *attempt) error { return rows.Scan(&a.id, &a.headers, &a.body) },
		`SELECT a.id, a.headers, a.body FROM delivery_attempts a JOIN faxes f ON f.id = a.fax_id
		WHERE f.account_id = ? AND a.body IS NOT NULL ORDER BY a.id`, acct)
	if err != nil {
		return fmt.Errorf("read copied delivery attempts: %w", err)
	}
	for _, a := range attempts {
		var headers map[string]string
		if err := json.Unmarshal([]byte(a.headers), &headers); err != nil {
			return fmt.Errorf("read delivery attempt %d's headers: %w", a.id, err)
		}
		ts := headers[HeaderTimestamp]
		if headers[HeaderSignature] == "" || ts == "" {
			continue
		}
		headers[HeaderSignature] = s.sign(ts, a.body)
		data, err := json.Marshal(headers)
		if err != nil {
			return fmt.Errorf("sign delivery attempt %d again: %w", a.id, err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE delivery_attempts SET headers = ? WHERE id = ?`, string(data), a.id); err != nil {
			return fmt.Errorf("sign delivery attempt %d again: %w", a.id, err)
		}
	}
	return nil
}

// textOf is the SQL of the bytes column col as text; blobOf of the text
// expr as bytes.
func textOf(pg bool, col string) string {
	if pg {
		return `convert_from(` + col + `, 'UTF8')`
	}
	return `CAST(` + col + ` AS TEXT)`
}

func blobOf(pg bool, expr string) string {
	if pg {
		return `convert_to(` + expr + `, 'UTF8')`
	}
	return `CAST(` + expr + ` AS BLOB)`
}

// isSnapshotSet reports whether set holds a sandbox snapshot's rows
// (servers/sandbox): no credentials reach it and nothing of it runs.
func isSnapshotSet(set string) bool {
	return strings.HasPrefix(set, descriptor.SandboxSetPrefix+"snp-")
}
