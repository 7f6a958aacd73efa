package storage

import (
	"time"

	"github.com/apistack/apistack/gen/lifecycle"
)

// The client's own types for the lifecycle document. They mirror the types
// generated from specs/storage/lifecycle.xsd (gen/lifecycle), which encode
// and decode the XML: PutLifecycle and GetLifecycle convert at the edge, so
// neither the generator's naming nor a regeneration becomes this package's
// API. TestOwnTypes_MirrorTheSchema keeps every element of the schema here.

// LifecycleConfiguration is the lifecycle configuration of a bucket: one to
// 1000 rules, applied independently of each other.
type LifecycleConfiguration struct {
	Rules []Rule
}

// Rule selects objects by key prefix (or, in the protocol, by tags and size)
// and says what happens to them and when.
type Rule struct {
	// ID identifies the rule; unique within the configuration, at most 255
	// characters; nil leaves the rule unnamed.
	ID *string
	// Prefix is the legacy form of Filter.Prefix. A rule has a Prefix or a
	// Filter, not both.
	Prefix *string
	// Filter selects the objects the rule applies to; an empty Filter selects
	// every object.
	Filter *Filter
	// Status says whether the rule is applied.
	Status RuleStatus
	// Transition moves current versions to another storage class.
	Transition *Transition
	// Expiration expires the current version of matching objects.
	Expiration *Expiration
	// NoncurrentVersionTransition moves noncurrent versions to another
	// storage class.
	NoncurrentVersionTransition *NoncurrentVersionTransition
	// NoncurrentVersionExpiration expires noncurrent versions of matching
	// objects.
	NoncurrentVersionExpiration *NoncurrentVersionExpiration
	// AbortIncompleteMultipartUpload aborts multipart uploads left incomplete.
	AbortIncompleteMultipartUpload *AbortIncompleteMultipartUpload
}

// Filter holds at most one predicate; And combines several.
type Filter struct {
	// Prefix selects the objects whose key starts with it.
	Prefix *string
	// Tag selects the objects carrying this tag.
	Tag *Tag
	// ObjectSizeGreaterThan selects the objects larger than this many bytes.
	ObjectSizeGreaterThan *int64
	// ObjectSizeLessThan selects the objects smaller than this many bytes.
	ObjectSizeLessThan *int64
	// And selects the objects matching every predicate it holds.
	And *And
}

// And is the conjunction of a prefix, tags and size bounds.
type And struct {
	// Prefix selects the objects whose key starts with it.
	Prefix *string
	// Tags select the objects carrying every one of them.
	Tags []Tag
	// ObjectSizeGreaterThan selects the objects larger than this many bytes.
	ObjectSizeGreaterThan *int64
	// ObjectSizeLessThan selects the objects smaller than this many bytes.
	ObjectSizeLessThan *int64
}

// Tag is an object tag: a key and a value.
type Tag struct {
	Key, Value string
}

// Expiration says when current versions expire: after a number of days, on a
// date, or (on a versioned bucket) when only a delete marker is left.
type Expiration struct {
	// Date is the day, at midnight UTC, on which matching objects expire.
	Date *time.Time
	// Days is the number of days after creation after which matching objects
	// expire.
	Days *int32
	// ExpiredObjectDeleteMarker removes delete markers that have no
	// noncurrent version left.
	ExpiredObjectDeleteMarker *bool
}

// NoncurrentVersionExpiration says when noncurrent versions expire.
type NoncurrentVersionExpiration struct {
	// NoncurrentDays is the number of days a version stays noncurrent before
	// it expires.
	NoncurrentDays int32
	// NewerNoncurrentVersions is how many newer noncurrent versions are kept
	// regardless of age.
	NewerNoncurrentVersions *int32
}

// AbortIncompleteMultipartUpload says when an incomplete multipart upload is
// aborted.
type AbortIncompleteMultipartUpload struct {
	// DaysAfterInitiation is the number of days after its start after which
	// an incomplete upload is aborted.
	DaysAfterInitiation int32
}

// Transition moves current versions to another storage class on a date or
// after a number of days (one of the two).
type Transition struct {
	// Date is the day, at midnight UTC, of the transition.
	Date *time.Time
	// Days is the number of days after creation of the transition.
	Days *int32
	// StorageClass is the class objects move to.
	StorageClass StorageClass
}

// NoncurrentVersionTransition moves noncurrent versions to another storage
// class.
type NoncurrentVersionTransition struct {
	// NoncurrentDays is the number of days a version stays noncurrent before
	// it moves.
	NoncurrentDays int32
	// StorageClass is the class noncurrent versions move to.
	StorageClass StorageClass
	// NewerNoncurrentVersions is how many newer noncurrent versions stay
	// where they are.
	NewerNoncurrentVersions *int32
}

// RuleStatus says whether a rule is applied.
type RuleStatus string

// The values of RuleStatus.
const (
	RuleEnabled  RuleStatus = "Enabled"
	RuleDisabled RuleStatus = "Disabled"
)

// StorageClass is a storage class a transition moves objects to.
type StorageClass string

// The values of StorageClass.
const (
	StorageClassGlacier            StorageClass = "GLACIER"
	StorageClassStandardIA         StorageClass = "STANDARD_IA"
	StorageClassOneZoneIA          StorageClass = "ONEZONE_IA"
	StorageClassIntelligentTiering StorageClass = "INTELLIGENT_TIERING"
	StorageClassDeepArchive        StorageClass = "DEEP_ARCHIVE"
	StorageClassGlacierIR          StorageClass = "GLACIER_IR"
)

// toWire converts cfg to the generated type that encodes the XML.
func toWire(cfg *LifecycleConfiguration) *lifecycle.LifecycleConfiguration {
	if cfg == nil {
		return nil
	}
	out := &lifecycle.LifecycleConfiguration{}
	for _, r := range cfg.Rules {
		w := lifecycle.LifecycleRule{
			ID: r.ID, Prefix: r.Prefix, Status: lifecycle.ExpirationStatus(r.Status),
			Expiration:                     (*lifecycle.LifecycleExpiration)(r.Expiration),
			NoncurrentVersionExpiration:    (*lifecycle.NoncurrentVersionExpiration)(r.NoncurrentVersionExpiration),
			AbortIncompleteMultipartUpload: (*lifecycle.AbortIncompleteMultipartUpload)(r.AbortIncompleteMultipartUpload),
		}
		if f := r.Filter; f != nil {
			w.Filter = &lifecycle.LifecycleRuleFilter{
				Prefix: f.Prefix, Tag: (*lifecycle.Tag)(f.Tag),
				ObjectSizeGreaterThan: f.ObjectSizeGreaterThan, ObjectSizeLessThan: f.ObjectSizeLessThan,
			}
			if a := f.And; a != nil {
				w.Filter.And = &lifecycle.LifecycleRuleAndOperator{
					Prefix: a.Prefix, ObjectSizeGreaterThan: a.ObjectSizeGreaterThan, ObjectSizeLessThan: a.ObjectSizeLessThan,
				}
				for _, t := range a.Tags {
					w.Filter.And.Tags = append(w.Filter.And.Tags, lifecycle.Tag(t))
				}
			}
		}
		if t := r.Transition; t != nil {
			w.Transition = &lifecycle.Transition{Date: t.Date, Days: t.Days, StorageClass: lifecycle.StorageClass(t.StorageClass)}
		}
		if t := r.NoncurrentVersionTransition; t != nil {
			w.NoncurrentVersionTransition = &lifecycle.NoncurrentVersionTransition{
				NoncurrentDays: t.NoncurrentDays, StorageClass: lifecycle.StorageClass(t.StorageClass),
				NewerNoncurrentVersions: t.NewerNoncurrentVersions,
			}
		}
		out.Rules = append(out.Rules, w)
	}
	return out
}

// fromWire converts the decoded XML to the client's own type.
func fromWire(cfg *lifecycle.LifecycleConfiguration) *LifecycleConfiguration {
	out := &LifecycleConfiguration{}
	for _, w := range cfg.Rules {
		r := Rule{
			ID: w.ID, Prefix: w.Prefix, Status: RuleStatus(w.Status),
			Expiration:                     (*Expiration)(w.Expiration),
			NoncurrentVersionExpiration:    (*NoncurrentVersionExpiration)(w.NoncurrentVersionExpiration),
			AbortIncompleteMultipartUpload: (*AbortIncompleteMultipartUpload)(w.AbortIncompleteMultipartUpload),
		}
		if f := w.Filter; f != nil {
			r.Filter = &Filter{
				Prefix: f.Prefix, Tag: (*Tag)(f.Tag),
				ObjectSizeGreaterThan: f.ObjectSizeGreaterThan, ObjectSizeLessThan: f.ObjectSizeLessThan,
			}
			if a := f.And; a != nil {
				r.Filter.And = &And{Prefix: a.Prefix, ObjectSizeGreaterThan: a.ObjectSizeGreaterThan, ObjectSizeLessThan: a.ObjectSizeLessThan}
				for _, t := range a.Tags {
					r.Filter.And.Tags = append(r.Filter.And.Tags, Tag(t))
				}
			}
		}
		if t := w.Transition; t != nil {
			r.Transition = &Transition{Date: t.Date, Days: t.Days, StorageClass: StorageClass(t.StorageClass)}
		}
		if t := w.NoncurrentVersionTransition; t != nil {
			r.NoncurrentVersionTransition = &NoncurrentVersionTransition{
				NoncurrentDays: t.NoncurrentDays, StorageClass: StorageClass(t.StorageClass),
				NewerNoncurrentVersions: t.NewerNoncurrentVersions,
			}
		}
		out.Rules = append(out.Rules, r)
	}
	return out
}
