package main

import (
	"fmt"
	"io"

	"github.com/apistack/apistack/clients/storage/sigv4"
)

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
