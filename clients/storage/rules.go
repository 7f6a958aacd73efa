package storage

import (
	"encoding/xml"
	"fmt"
	"time"

	"github.com/apistack/apistack/gen/lifecycle"
)

// Configuration returns a lifecycle configuration holding rules.
func Configuration(rules ...lifecycle.LifecycleRule) *lifecycle.LifecycleConfiguration {
	return &lifecycle.LifecycleConfiguration{Rules: rules}
}

func rule(id, prefix string) lifecycle.LifecycleRule {
	r := lifecycle.LifecycleRule{
		Filter: &lifecycle.LifecycleRuleFilter{Prefix: &prefix},
		Status: lifecycle.ExpirationStatusEnabled,
	}
	if id != "" {
		r.ID = &id
	}
	return r
}

// ExpireAfterDays returns an enabled rule that expires the objects whose key
// starts with prefix ("" for every object) days after their creation. It is for
// a bucket without versioning. id names the rule; "" lets the service leave it
// unnamed.
func ExpireAfterDays(id, prefix string, days int32) lifecycle.LifecycleRule {
	r := rule(id, prefix)
	r.Expiration = &lifecycle.LifecycleExpiration{Days: &days}
	return r
}

// ExpireOn returns an enabled rule that expires the objects under prefix on the
// given day; the service requires midnight UTC, so only date's UTC day is used.
// It is for a bucket without versioning.
func ExpireOn(id, prefix string, date time.Time) lifecycle.LifecycleRule {
	y, m, d := date.UTC().Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	r := rule(id, prefix)
	r.Expiration = &lifecycle.LifecycleExpiration{Date: &day}
	return r
}

// ExpireNoncurrentAfterDays returns an enabled rule that expires the versions
// under prefix days after they became noncurrent. keepNewer, when positive, is
// the number of newer noncurrent versions kept regardless of age (at most 100).
// It is for a versioned bucket.
func ExpireNoncurrentAfterDays(id, prefix string, days, keepNewer int32) lifecycle.LifecycleRule {
	r := rule(id, prefix)
	r.NoncurrentVersionExpiration = &lifecycle.NoncurrentVersionExpiration{NoncurrentDays: days}
	if keepNewer > 0 {
		r.NoncurrentVersionExpiration.NewerNoncurrentVersions = &keepNewer
	}
	return r
}

// AbortIncompleteUploadsAfterDays returns an enabled rule that aborts the
// multipart uploads under prefix still incomplete days after they started. It
// suits a bucket with or without versioning.
func AbortIncompleteUploadsAfterDays(id, prefix string, days int32) lifecycle.LifecycleRule {
	r := rule(id, prefix)
	r.AbortIncompleteMultipartUpload = &lifecycle.AbortIncompleteMultipartUpload{DaysAfterInitiation: days}
	return r
}

// MarshalConfiguration writes cfg as the request body of PutLifecycle: the XML
// declaration and the document, children in the order the schema declares them
// (the server accepts any order).
func MarshalConfiguration(cfg *lifecycle.LifecycleConfiguration) ([]byte, error) {
	out, err := xml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("storage: marshalling the lifecycle configuration: %w", err)
	}
	return append([]byte(xml.Header), out...), nil
}
