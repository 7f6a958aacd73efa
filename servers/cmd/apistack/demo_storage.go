package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apistack/apistack/clients/storage/sigv4"
	"github.com/apistack/apistack/servers/storage"
)

// storageCredentials is the storage section of demo-credentials.json.
type storageCredentials struct {
	Endpoint        string `json:"endpoint"`
	Region          string `json:"region"`
	KeyID           string `json:"key_id"`
	Secret          string `json:"secret"`
	Bucket          string `json:"bucket"`
	VersionedBucket string `json:"versioned_bucket"`
}

// The demo buckets: one without versioning (Expiration rules), one versioned
// (NoncurrentVersionExpiration rules).
const (
	demoBucket          = "demo-bucket"
	demoVersionedBucket = "demo-versioned"
)

// bootstrapStorageDemo creates the demo buckets and an access key, all of the
// default account (the one the admin API assigns when none is given). It is
// idempotent: the buckets are created when missing (the versioned one has its
// versioning enabled again if it was suspended), and a key from a previous run
// that still works is kept.
func bootstrapStorageDemo(ctx context.Context, s *storage.Server, previous *storageCredentials) (*storageCredentials, error) {
	for _, b := range []struct {
		name       string
		versioning storage.Versioning
	}{{demoBucket, storage.Unversioned}, {demoVersionedBucket, storage.Enabled}} {
		if _, err := s.CreateBucket(ctx, storage.DefaultAccount, b.name, b.versioning); err != nil && !errors.Is(err, storage.ErrAlreadyExists) {
			return nil, err
		}
	}
	if _, err := s.SetVersioning(ctx, demoVersionedBucket, storage.Enabled); err != nil {
		return nil, err
	}
	for _, name := range []string{demoBucket, demoVersionedBucket} {
		b, err := s.Bucket(ctx, name)
		if err != nil {
			return nil, err
		}
		if b.Account != storage.DefaultAccount {
			return nil, fmt.Errorf("storage demo: the bucket %s belongs to the account %q, not %q; delete it or use another data directory",
				name, b.Account, storage.DefaultAccount)
		}
	}
	c := &storageCredentials{Region: s.Region(), Bucket: demoBucket, VersionedBucket: demoVersionedBucket}
	if previous != nil && s.KeyWorks(ctx, storage.DefaultAccount, previous.KeyID, previous.Secret) {
		c.KeyID, c.Secret = previous.KeyID, previous.Secret
		return c, nil
	}
	k, err := s.CreateKey(ctx, storage.DefaultAccount, "demo")
	if err != nil {
		return nil, err
	}
	c.KeyID, c.Secret = k.KeyID, k.Secret
	return c, nil
}

// printStorageDemo says where the storage API is and how to call it. The
// requests are signed; curl (7.75 and later) signs them itself when given the
// scheme's names as its provider, "cloud:cloud" (CLOUD4-HMAC-SHA256, X-Cloud-*,
// cloud4_request), with the region and the service s3. The empty "lifecycle="
// value is spelled out for the curl versions that sign a bare "?lifecycle"
// differently.
func printStorageDemo(w io.Writer, c *storageCredentials) {
	if c == nil {
		return
	}
	sign := fmt.Sprintf("curl -s --aws-sigv4 'cloud:cloud:%s:s3' --user '%s:%s'", c.Region, c.KeyID, c.Secret)
	fmt.Fprintf(w, "storage    %s  (docs: %s/docs/)  buckets %s and %s (versioned), region %s\n",
		c.Endpoint, c.Endpoint, c.Bucket, c.VersionedBucket, c.Region)
	fmt.Fprintf(w, "  put:     %s -X PUT -H 'Content-Type: application/xml' -H \"X-Cloud-Content-Sha256: $(sha256sum rules.xml | cut -d' ' -f1)\" --data-binary @rules.xml '%s/%s?lifecycle='\n",
		sign, c.Endpoint, c.Bucket)
	fmt.Fprintf(w, "  get:     %s -H 'X-Cloud-Content-Sha256: %s' '%s/%s?lifecycle='\n", sign, sigv4.EmptyPayloadHash, c.Endpoint, c.Bucket)
}
