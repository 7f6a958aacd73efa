package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/apistack/apistack/internal/lifecycledoc"
	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// fixture is the storage section of a sandbox's fixture (specs/sandbox,
// StorageFixture): buckets with their versioning and lifecycle
// configuration, and access keys named by the fixture.
type fixture struct {
	Buckets []struct {
		Name       string `json:"name"`
		Versioning string `json:"versioning"`
		Lifecycle  string `json:"lifecycle"`
	} `json:"buckets"`
	Keys []string `json:"keys"`
}

// FixtureKey is an access key a fixture made.
type FixtureKey struct {
	KeyID  string `json:"key_id"`
	Secret string `json:"secret"`
}

// fixtureCredentials are what the storage section of a fixture made, by the
// fixture's names: bucket names are global, so each of its buckets is named
// after the set (<set>-<name>).
type fixtureCredentials struct {
	Buckets map[string]string     `json:"buckets,omitempty"`
	Keys    map[string]FixtureKey `json:"keys,omitempty"`
}

// fixtureBucketName is what a fixture may call a bucket: the set's name and
// a hyphen come before it, within a bucket name's 63 characters.
var fixtureBucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{0,36}[a-z0-9]$`)

// applyFixture creates the storage section's buckets (named <set>-<name>),
// their versioning and lifecycle configurations, and its keys, in the set's
// account, in one transaction.
func applyFixture(ctx context.Context, s *Server, set descriptor.TenantSet, _ *DemoCredentials, section json.RawMessage) (json.RawMessage, error) {
	var f fixture
	if err := descriptor.DecodeFixture(section, &f); err != nil {
		return nil, err
	}
	out := fixtureCredentials{Buckets: map[string]string{}, Keys: map[string]FixtureKey{}}
	docs := make([][]byte, len(f.Buckets))
	for i, b := range f.Buckets {
		at := fmt.Sprintf("/buckets/%d", i)
		if !fixtureBucketName.MatchString(b.Name) {
			return nil, descriptor.Fixturef(at+"/name", "%q is not a bucket name of 2 to 38 lowercase letters, digits, dots and hyphens", b.Name)
		}
		if _, dup := out.Buckets[b.Name]; dup || b.Name == "bucket" || b.Name == "versioned" {
			return nil, descriptor.Fixturef(at+"/name", "the bucket %q is there already", b.Name)
		}
		out.Buckets[b.Name] = set.Name + "-" + b.Name
		switch Versioning(b.Versioning) {
		case "":
			f.Buckets[i].Versioning = string(Unversioned)
		case Unversioned, Enabled, Suspended:
		default:
			return nil, descriptor.Fixturef(at+"/versioning", "%q is none of Unversioned, Enabled, Suspended", b.Versioning)
		}
		if b.Lifecycle == "" {
			continue
		}
		cfg, err := lifecycledoc.Parse(strings.NewReader(b.Lifecycle), Versioning(f.Buckets[i].Versioning).Versioned())
		if err != nil {
			return nil, descriptor.Fixturef(at+"/lifecycle", "%v", err)
		}
		if docs[i], err = lifecycledoc.Marshal(cfg); err != nil {
			return nil, fmt.Errorf("storage: fixture: %w", err)
		}
	}
	for i, k := range f.Keys {
		if _, dup := out.Keys[k]; dup || k == "" {
			return nil, descriptor.Fixturef(fmt.Sprintf("/keys/%d", i), "the key name %q is taken or empty", k)
		}
		out.Keys[k] = FixtureKey{KeyID: newKeyID(), Secret: newSecret()}
	}
	account := setAccount(set.Name)
	now := sqldb.Micros(s.clock.Now())
	err := s.store.inTx(ctx, func(tx *sqldb.Tx) error {
		for i, b := range f.Buckets {
			name := out.Buckets[b.Name]
			res, err := tx.ExecContext(ctx, `INSERT INTO buckets (name, account, versioning, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
				name, account, f.Buckets[i].Versioning, now)
			if err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return descriptor.Fixturef(fmt.Sprintf("/buckets/%d/name", i), "the bucket %s exists", name)
			}
			if docs[i] != nil {
				if _, err := tx.ExecContext(ctx, `INSERT INTO lifecycle_configurations (bucket, document, updated_at) VALUES (?, ?, ?)`,
					name, string(docs[i]), now); err != nil {
					return fmt.Errorf("store the lifecycle of %s: %w", name, err)
				}
			}
		}
		for _, name := range f.Keys {
			k := out.Keys[name]
			if _, err := tx.ExecContext(ctx, `INSERT INTO access_keys (key_id, secret, account, description, created_at) VALUES (?, ?, ?, ?, ?)`,
				k.KeyID, s.store.box.Seal(k.KeyID, []byte(k.Secret)), account, name, now); err != nil {
				return fmt.Errorf("create key %s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		var fe *descriptor.FixtureError
		if errors.As(err, &fe) {
			return nil, fe
		}
		return nil, fmt.Errorf("storage: fixture of %s: %w", set.Name, err)
	}
	if len(out.Buckets) == 0 && len(out.Keys) == 0 {
		return nil, nil
	}
	return json.Marshal(out)
}

// copyTenants copies the account of set from (its buckets with their
// versioning and lifecycle configurations) into the account of set to, in
// one transaction: a bucket named <from>-<rest> becomes <to>-<rest> (bucket
// names are global), any other <to>-<name>. Every key of from's account is
// copied with a new id and secret.
func copyTenants(ctx context.Context, s *Server, from, to descriptor.TenantSet, creds *DemoCredentials, named json.RawMessage) (*DemoCredentials, json.RawMessage, error) {
	var names fixtureCredentials
	if len(named) > 0 {
		if err := json.Unmarshal(named, &names); err != nil {
			return nil, nil, fmt.Errorf("storage: copy: the fixture's credentials: %w", err)
		}
	}
	fromAccount, toAccount := setAccount(from.Name), setAccount(to.Name)
	prefix := from.Name + "-"
	// The new name of a bucket, in SQL and in Go alike.
	rename := `CASE WHEN substr(%[1]s, 1, ?) = ? THEN ? || substr(%[1]s, ?) ELSE ? || %[1]s END`
	renameArgs := []any{len(prefix), prefix, to.Name + "-", len(prefix) + 1, to.Name + "-"}
	renamed := func(name string) string {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			return to.Name + "-" + rest
		}
		return to.Name + "-" + name
	}
	newKeys := map[string]FixtureKey{} // by the old key id
	err := s.store.inTx(ctx, func(tx *sqldb.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO buckets (name, account, versioning, created_at)
			SELECT `+fmt.Sprintf(rename, "name")+`, ?, versioning, created_at FROM buckets WHERE account = ?`,
			append(renameArgs, toAccount, fromAccount)...); err != nil {
			return fmt.Errorf("copy buckets: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO lifecycle_configurations (bucket, document, updated_at)
			SELECT `+fmt.Sprintf(rename, "l.bucket")+`, l.document, l.updated_at
			FROM lifecycle_configurations l JOIN buckets b ON b.name = l.bucket WHERE b.account = ?`,
			append(renameArgs, fromAccount)...); err != nil {
			return fmt.Errorf("copy lifecycle configurations: %w", err)
		}
		type key struct{ id, description string }
		keys, err := apistore.Collect(ctx, tx, func(rows *sql.Rows, k *key) error { return rows.Scan(&k.id, &k.description) },
			`SELECT key_id, description FROM access_keys WHERE account = ? ORDER BY created_at, key_id`, fromAccount)
		if err != nil {
			return fmt.Errorf("read keys: %w", err)
		}
		now := sqldb.Micros(s.clock.Now())
		for _, k := range keys {
			nk := FixtureKey{KeyID: newKeyID(), Secret: newSecret()}
			newKeys[k.id] = nk
			if _, err := tx.ExecContext(ctx, `INSERT INTO access_keys (key_id, secret, account, description, created_at) VALUES (?, ?, ?, ?, ?)`,
				nk.KeyID, s.store.box.Seal(nk.KeyID, []byte(nk.Secret)), toAccount, k.description, now); err != nil {
				return fmt.Errorf("copy key: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("storage: copy %s to %s: %w", from.Name, to.Name, err)
	}
	k := newKeys[creds.KeyID]
	out := &DemoCredentials{Endpoint: to.URLs[apiName], Region: creds.Region, KeyID: k.KeyID, Secret: k.Secret,
		Bucket: renamed(creds.Bucket), VersionedBucket: renamed(creds.VersionedBucket)}
	if len(names.Buckets) == 0 && len(names.Keys) == 0 {
		return out, nil, nil
	}
	outNames := fixtureCredentials{Buckets: map[string]string{}, Keys: map[string]FixtureKey{}}
	for name, b := range names.Buckets {
		outNames.Buckets[name] = renamed(b)
	}
	for name, old := range names.Keys {
		outNames.Keys[name] = newKeys[old.KeyID]
	}
	raw, err := json.Marshal(outNames)
	return out, raw, err
}
