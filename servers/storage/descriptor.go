package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/apistack/apistack/servers/internal/descriptor"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// apiName is the storage API's name.
const apiName = "storage"

// API describes the storage API to the assemblers (servers/stack, `apistack
// serve`, the test kit, storagetest).
var API = descriptor.API[Settings, *Server, DemoCredentials]{
	Name: apiName, Files: migrationFiles, SealsSecrets: true, New: newFromEnv, Seed: seedTenants,
	Reset: resetTenants, Delete: deleteTenants, Fixture: applyFixture, Copy: copyTenants,
}

// newFromEnv is the storage server of an assembler.
func newFromEnv(_ context.Context, e descriptor.Env, s Settings) (*Server, error) {
	return New(Config{Deps: e.Deps, MasterKey: e.MasterKey, Settings: s})
}

// DemoCredentials is the storage section of demo-credentials.json.
type DemoCredentials struct {
	Endpoint        string `json:"endpoint"`
	Region          string `json:"region"`
	KeyID           string `json:"key_id"`
	Secret          string `json:"secret"`
	Bucket          string `json:"bucket"`
	VersionedBucket string `json:"versioned_bucket"`
}

// setAccount is the account of the set's buckets and key: DefaultAccount
// (the one the admin API assigns when none is given) for the demo set, the
// set's name for the others.
func setAccount(set string) string {
	if set == descriptor.DemoSet {
		return DefaultAccount
	}
	return set
}

// seedTenants creates the set's buckets, <set>-bucket without versioning
// (Expiration rules) and <set>-versioned with it (NoncurrentVersionExpiration
// rules), and an access key, all of the set's account. It is idempotent: the
// buckets are created when missing (the versioned one has its versioning
// enabled again if it was suspended), and a key from a previous run that
// still works is kept.
func seedTenants(ctx context.Context, srv *Server, set descriptor.TenantSet, previous *DemoCredentials) (*DemoCredentials, error) {
	s := srv.Operator()
	account := setAccount(set.Name)
	plain, versioned := set.Name+"-bucket", set.Name+"-versioned"
	for _, b := range []struct {
		name       string
		versioning Versioning
	}{{plain, Unversioned}, {versioned, Enabled}} {
		if _, err := s.CreateBucket(ctx, account, b.name, b.versioning); err != nil && !errors.Is(err, storeerr.ErrAlreadyExists) {
			return nil, err
		}
	}
	if _, err := s.SetVersioning(ctx, versioned, Enabled); err != nil {
		return nil, err
	}
	for _, name := range []string{plain, versioned} {
		b, err := s.Bucket(ctx, name)
		if err != nil {
			return nil, err
		}
		if b.Account != account {
			return nil, fmt.Errorf("storage demo: the bucket %s belongs to the account %q, not %q; delete it or use another data directory",
				name, b.Account, account)
		}
	}
	c := &DemoCredentials{Endpoint: set.URLs[apiName], Region: s.Region(), Bucket: plain, VersionedBucket: versioned}
	if previous != nil && s.KeyWorks(ctx, account, previous.KeyID, previous.Secret) {
		c.KeyID, c.Secret = previous.KeyID, previous.Secret
		return c, nil
	}
	k, err := s.CreateKey(ctx, account, set.Name)
	if err != nil {
		return nil, err
	}
	c.KeyID, c.Secret = k.KeyID, k.Secret
	return c, nil
}
