package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apistack/apistack/gen/lifecycle"
	"github.com/apistack/apistack/internal/lifecycledoc"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// The web console's view of the storage service (servers/console): every
// bucket with its versioning and its lifecycle configuration, as a table and
// as the XML document stored.

// ConsoleBucket is a bucket with its lifecycle configuration.
type ConsoleBucket struct {
	Bucket
	// XML is the stored lifecycle document ("" when the bucket has none).
	XML string
	// Rules are its rules, one line each.
	Rules []ConsoleRule
}

// ConsoleRule is one lifecycle rule, summarized.
type ConsoleRule struct {
	ID, Status, Filter string
	// Actions are what the rule does, such as "expire after 30 days".
	Actions []string
}

// Console is what the web console (servers/console) reads of a storage
// server. Server.Console gives a server's.
type Console Server

// Console is the console's view of s.
func (s *Server) Console() *Console { return (*Console)(s) }

// Buckets returns every bucket, by name, with its lifecycle rules.
func (s *Console) Buckets(ctx context.Context) ([]ConsoleBucket, error) {
	buckets, err := s.store.buckets(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ConsoleBucket, 0, len(buckets))
	for _, b := range buckets {
		cb := ConsoleBucket{Bucket: b}
		doc, err := s.store.lifecycle(ctx, b.Name)
		switch {
		case errors.Is(err, storeerr.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			cb.XML = string(doc)
			cfg, err := lifecycledoc.Decode(doc)
			if err != nil {
				return nil, fmt.Errorf("bucket %s: stored lifecycle: %w", b.Name, err)
			}
			for _, r := range cfg.Rules {
				cb.Rules = append(cb.Rules, summarizeRule(r))
			}
		}
		out = append(out, cb)
	}
	return out, nil
}

func summarizeRule(r lifecycle.LifecycleRule) ConsoleRule {
	cr := ConsoleRule{Status: string(r.Status), Filter: "every object"}
	if r.ID != nil {
		cr.ID = *r.ID
	}
	switch {
	case r.Prefix != nil:
		cr.Filter = "prefix " + quote(*r.Prefix)
	case r.Filter != nil:
		cr.Filter = summarizeFilter(*r.Filter)
	}
	days := func(d *int32, date string) string {
		if d != nil {
			return fmt.Sprintf("after %d days", *d)
		}
		return "on " + date
	}
	if t := r.Transition; t != nil {
		date := ""
		if t.Date != nil {
			date = t.Date.Format("2006-01-02")
		}
		cr.Actions = append(cr.Actions, fmt.Sprintf("move to %s %s", t.StorageClass, days(t.Days, date)))
	}
	if e := r.Expiration; e != nil {
		switch {
		case e.Days != nil || e.Date != nil:
			date := ""
			if e.Date != nil {
				date = e.Date.Format("2006-01-02")
			}
			cr.Actions = append(cr.Actions, "expire "+days(e.Days, date))
		case e.ExpiredObjectDeleteMarker != nil && *e.ExpiredObjectDeleteMarker:
			cr.Actions = append(cr.Actions, "remove expired delete markers")
		}
	}
	if t := r.NoncurrentVersionTransition; t != nil {
		cr.Actions = append(cr.Actions, fmt.Sprintf("move noncurrent versions to %s after %d days", t.StorageClass, t.NoncurrentDays))
	}
	if e := r.NoncurrentVersionExpiration; e != nil {
		a := fmt.Sprintf("expire noncurrent versions after %d days", e.NoncurrentDays)
		if e.NewerNoncurrentVersions != nil {
			a += fmt.Sprintf(" (keeping %d newer)", *e.NewerNoncurrentVersions)
		}
		cr.Actions = append(cr.Actions, a)
	}
	if a := r.AbortIncompleteMultipartUpload; a != nil {
		cr.Actions = append(cr.Actions, fmt.Sprintf("abort incomplete uploads after %d days", a.DaysAfterInitiation))
	}
	return cr
}

func summarizeFilter(f lifecycle.LifecycleRuleFilter) string {
	var parts []string
	add := func(prefix *string, tags []lifecycle.Tag, gt, lt *int64) {
		if prefix != nil {
			parts = append(parts, "prefix "+quote(*prefix))
		}
		for _, t := range tags {
			parts = append(parts, fmt.Sprintf("tag %s=%s", t.Key, t.Value))
		}
		if gt != nil {
			parts = append(parts, fmt.Sprintf("size > %d", *gt))
		}
		if lt != nil {
			parts = append(parts, fmt.Sprintf("size < %d", *lt))
		}
	}
	var tags []lifecycle.Tag
	if f.Tag != nil {
		tags = []lifecycle.Tag{*f.Tag}
	}
	add(f.Prefix, tags, f.ObjectSizeGreaterThan, f.ObjectSizeLessThan)
	if a := f.And; a != nil {
		add(a.Prefix, a.Tags, a.ObjectSizeGreaterThan, a.ObjectSizeLessThan)
	}
	if len(parts) == 0 {
		return "every object"
	}
	return strings.Join(parts, " and ")
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
