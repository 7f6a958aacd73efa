package storage_test

import (
	"fmt"

	"github.com/apistack/apistack/clients/storage"
)

// Build the configuration of a bucket without versioning: logs expire after 30
// days, and uploads left incomplete are aborted after a week.
func ExampleConfiguration() {
	cfg := storage.Configuration(
		storage.ExpireAfterDays("expire-logs", "logs/", 30),
		storage.AbortIncompleteUploadsAfterDays("abort-uploads", "", 7),
	)
	body, err := storage.MarshalConfiguration(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body))
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>expire-logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule><Rule><ID>abort-uploads</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>7</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>
}

// On a versioned bucket, noncurrent versions expire instead of objects.
func ExampleExpireNoncurrentAfterDays() {
	r := storage.ExpireNoncurrentAfterDays("old-versions", "docs/", 30, 3)
	fmt.Println(r.NoncurrentVersionExpiration.NoncurrentDays, *r.NoncurrentVersionExpiration.NewerNoncurrentVersions)
	// Output: 30 3
}
