package storage

import (
	"encoding/xml"
	"fmt"
	"time"
)

// Configuration returns a lifecycle configuration holding rules.
func Configuration(rules ...Rule) *LifecycleConfiguration {
	return &LifecycleConfiguration{Rules: rules}
}

func rule(id, prefix string) Rule {
	r := Rule{Filter: &Filter{Prefix: &prefix}, Status: RuleEnabled}
	if id != "" {
		r.ID = &id
	}
	return r
}

// ExpireAfterDays returns an enabled rule that expires the objects whose key
// starts with prefix ("" for every object) days after their creation. It is for
// a bucket without versioning. id names the rule; "" lets the service leave it
// unnamed.
func ExpireAfterDays(id, prefix string, days int32) Rule {
	r := rule(id, prefix)
	r.Expiration = &Expiration{Days: &days}
	return r
}

// ExpireOn returns an enabled rule that expires the objects under prefix on the
// given day; the service requires midnight UTC, so only date's UTC day is used.
// It is for a bucket without versioning.
func ExpireOn(id, prefix string, date time.Time) Rule {
	y, m, d := date.UTC().Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	r := rule(id, prefix)
	r.Expiration = &Expiration{Date: &day}
	return r
}

// ExpireNoncurrentAfterDays returns an enabled rule that expires the versions
// under prefix days after they became noncurrent. keepNewer, when positive, is
// the number of newer noncurrent versions kept regardless of age (at most 100).
// It is for a versioned bucket.
func ExpireNoncurrentAfterDays(id, prefix string, days, keepNewer int32) Rule {
	r := rule(id, prefix)
	r.NoncurrentVersionExpiration = &NoncurrentVersionExpiration{NoncurrentDays: days}
	if keepNewer > 0 {
		r.NoncurrentVersionExpiration.NewerNoncurrentVersions = &keepNewer
	}
	return r
}

// AbortIncompleteUploadsAfterDays returns an enabled rule that aborts the
// multipart uploads under prefix still incomplete days after they started. It
// suits a bucket with or without versioning.
func AbortIncompleteUploadsAfterDays(id, prefix string, days int32) Rule {
	r := rule(id, prefix)
	r.AbortIncompleteMultipartUpload = &AbortIncompleteMultipartUpload{DaysAfterInitiation: days}
	return r
}

// MarshalConfiguration writes cfg as the request body of PutLifecycle: the XML
// declaration and the document, children in the order the schema declares them
// (the server accepts any order).
func MarshalConfiguration(cfg *LifecycleConfiguration) ([]byte, error) {
	out, err := xml.Marshal(toWire(cfg))
	if err != nil {
		return nil, fmt.Errorf("storage: marshalling the lifecycle configuration: %w", err)
	}
	return append([]byte(xml.Header), out...), nil
}
