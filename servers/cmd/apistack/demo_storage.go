package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apistack/apistack/protocol/sigv4"
)

// demoRulesFile is the lifecycle document `serve --demo` writes beside the
// credentials, for the banner's storage put line to send.
const demoRulesFile = "demo-lifecycle.xml"

// demoRules is a valid document for the demo's unversioned bucket: objects
// under logs/ expire after 30 days, incomplete uploads are aborted after 7.
const demoRules = `<?xml version="1.0" encoding="UTF-8"?>
<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Rule>
    <ID>expire-logs</ID>
    <Filter><Prefix>logs/</Prefix></Filter>
    <Status>Enabled</Status>
    <Expiration><Days>30</Days></Expiration>
  </Rule>
  <Rule>
    <ID>abort-uploads</ID>
    <Filter><Prefix></Prefix></Filter>
    <Status>Enabled</Status>
    <AbortIncompleteMultipartUpload><DaysAfterInitiation>7</DaysAfterInitiation></AbortIncompleteMultipartUpload>
  </Rule>
</LifecycleConfiguration>
`

// writeDemoRules writes the demo's lifecycle document into dir unless it is
// there already: a user may edit it to try other rules.
func writeDemoRules(dir string) error {
	path := filepath.Join(dir, demoRulesFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("demo lifecycle document: %w", err)
	}
	if _, err := f.WriteString(demoRules); err != nil {
		_ = f.Close()
		return fmt.Errorf("demo lifecycle document: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("demo lifecycle document: %w", err)
	}
	return nil
}

// printStorageDemo says where the storage API is and how to call it. The
// requests are signed; curl (7.75 and later) signs them itself when given the
// scheme's names as its provider, "cloud:cloud" (CLOUD4-HMAC-SHA256, X-Cloud-*,
// cloud4_request), with the region and the service s3. The empty "lifecycle="
// value is spelled out for the curl versions that sign a bare "?lifecycle"
// differently. The put line sends rules, the document the demo wrote.
func printStorageDemo(w io.Writer, c *storageCredentials, rules string) {
	if c == nil {
		return
	}
	sign := fmt.Sprintf("curl -s --aws-sigv4 'cloud:cloud:%s:s3' --user '%s:%s'", c.Region, c.KeyID, c.Secret)
	fmt.Fprintf(w, "storage    %s  (docs: %s/docs/)  buckets %s and %s (versioned), region %s\n",
		c.Endpoint, c.Endpoint, c.Bucket, c.VersionedBucket, c.Region)
	fmt.Fprintf(w, "  put:     %s -X PUT -H 'Content-Type: application/xml' -H \"X-Cloud-Content-Sha256: $(sha256sum '%s' | cut -d' ' -f1)\" --data-binary '@%s' '%s/%s?lifecycle='\n",
		sign, rules, rules, c.Endpoint, c.Bucket)
	fmt.Fprintf(w, "  get:     %s -H 'X-Cloud-Content-Sha256: %s' '%s/%s?lifecycle='\n", sign, sigv4.EmptyPayloadHash, c.Endpoint, c.Bucket)
}
