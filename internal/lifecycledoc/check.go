package lifecycledoc

import (
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/apistack/apistack/gen/lifecycle"
)

// Limits of the protocol that Check enforces on values however they were built.
const (
	// MaxRules is the most rules a configuration holds.
	MaxRules = 1000
	// MaxIDLength is the longest rule ID, in characters.
	MaxIDLength = 255
	// MaxPrefixLength is the longest prefix, in characters.
	MaxPrefixLength = 1024
	// MaxNewerNoncurrentVersions is the largest NewerNoncurrentVersions.
	MaxNewerNoncurrentVersions = 100
)

const supported = "ID, Status, Prefix, Filter/Prefix, Expiration (Days or Date), NoncurrentVersionExpiration and AbortIncompleteMultipartUpload"

func notImplemented(rule, element string) *Error {
	return &Error{Code: CodeNotImplemented, Status: http.StatusNotImplemented, Element: element,
		Message: fmt.Sprintf("%s: %s is valid but not supported by this service; supported are %s", rule, element, supported)}
}

func invalid(element, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Status: http.StatusBadRequest, Element: element, Message: fmt.Sprintf(format, args...)}
}

// Check applies the second layer to a configuration, for a bucket with or
// without versioning: first the structure the schema's xs:all groups cannot
// express (MalformedXML: a Prefix or a Filter but not both, a Transition's Date
// or Days but not both), then what the service supports (NotImplemented), then
// the rules on values (InvalidArgument). It also re-checks what the schema guarantees for a decoded
// document (counts, choices, bounds), so that a configuration built in Go is held
// to the same rules before it is sent or stored.
func Check(cfg *lifecycle.LifecycleConfiguration, versioned bool) error {
	if cfg == nil || len(cfg.Rules) == 0 {
		return malformed("Rule", nil, "a LifecycleConfiguration needs at least one Rule")
	}
	if len(cfg.Rules) > MaxRules {
		return malformed("Rule", nil, "a LifecycleConfiguration holds at most %d Rule elements, not %d", MaxRules, len(cfg.Rules))
	}
	ids := map[string]int{}
	for i := range cfg.Rules {
		r := &cfg.Rules[i]
		name := ruleName(i, r)
		if err := checkStructure(name, r); err != nil {
			return err
		}
		if err := checkSupported(name, r); err != nil {
			return err
		}
		if err := checkRule(name, r, versioned); err != nil {
			return err
		}
		if r.ID != nil && *r.ID != "" {
			if first, ok := ids[*r.ID]; ok {
				return invalid("ID", "%s: the ID is already used by rule %d; rule IDs must be unique", name, first+1)
			}
			ids[*r.ID] = i
		}
	}
	return nil
}

func ruleName(i int, r *lifecycle.LifecycleRule) string {
	if r.ID != nil && *r.ID != "" && utf8.RuneCountInString(*r.ID) <= MaxIDLength {
		return "Rule " + strconv.Quote(*r.ID)
	}
	return "Rule " + strconv.Itoa(i+1)
}

func checkSupported(name string, r *lifecycle.LifecycleRule) error {
	switch {
	case r.Transition != nil:
		return notImplemented(name, "Transition")
	case r.NoncurrentVersionTransition != nil:
		return notImplemented(name, "NoncurrentVersionTransition")
	}
	if f := r.Filter; f != nil {
		switch {
		case f.Tag != nil:
			return notImplemented(name, "Tag")
		case f.And != nil:
			return notImplemented(name, "And")
		case f.ObjectSizeGreaterThan != nil:
			return notImplemented(name, "ObjectSizeGreaterThan")
		case f.ObjectSizeLessThan != nil:
			return notImplemented(name, "ObjectSizeLessThan")
		}
	}
	if e := r.Expiration; e != nil && e.ExpiredObjectDeleteMarker != nil {
		return notImplemented(name, "ExpiredObjectDeleteMarker")
	}
	return nil
}

// checkStructure checks what the schema says for a Go-built rule (Status) and
// what its xs:all groups cannot say: a rule's children come in any order, each at
// most once, and the schema leaves "Prefix or Filter" and a Transition's "Date or
// Days" to this layer. Failures are MalformedXML, as a schema failure would be.
func checkStructure(name string, r *lifecycle.LifecycleRule) error {
	switch r.Status {
	case lifecycle.ExpirationStatusEnabled, lifecycle.ExpirationStatusDisabled:
	default:
		return malformed("Status", nil, "%s: Status must be Enabled or Disabled, not %q", name, r.Status)
	}
	switch {
	case r.Prefix != nil && r.Filter != nil:
		return malformed("Filter", nil, "%s: a rule has either a Prefix or a Filter, not both", name)
	case r.Prefix == nil && r.Filter == nil:
		return malformed("Filter", nil, "%s: a rule needs a Filter (or the legacy Prefix)", name)
	}
	if t := r.Transition; t != nil && t.Date != nil && t.Days != nil {
		return malformed("Transition", nil, "%s: a Transition has either a Date or Days, not both", name)
	}
	return nil
}

func checkRule(name string, r *lifecycle.LifecycleRule, versioned bool) error {
	if r.ID != nil && utf8.RuneCountInString(*r.ID) > MaxIDLength {
		return invalid("ID", "%s: the ID is %d characters long; the maximum is %d", name, utf8.RuneCountInString(*r.ID), MaxIDLength)
	}
	prefix := r.Prefix
	if r.Filter != nil {
		prefix = r.Filter.Prefix
	}
	if prefix != nil && utf8.RuneCountInString(*prefix) > MaxPrefixLength {
		return invalid("Prefix", "%s: the Prefix is longer than %d characters", name, MaxPrefixLength)
	}
	if r.Expiration == nil && r.NoncurrentVersionExpiration == nil && r.AbortIncompleteMultipartUpload == nil {
		return invalid("Rule", "%s: a rule needs at least one action: Expiration, NoncurrentVersionExpiration or AbortIncompleteMultipartUpload", name)
	}
	if e := r.Expiration; e != nil {
		if err := checkExpiration(name, e, versioned); err != nil {
			return err
		}
	}
	if n := r.NoncurrentVersionExpiration; n != nil {
		if !versioned {
			return invalid("NoncurrentVersionExpiration",
				"%s: NoncurrentVersionExpiration applies to a versioned bucket, and this bucket has no versioning; use Expiration", name)
		}
		if n.NoncurrentDays < 1 {
			return invalid("NoncurrentDays", "%s: NoncurrentDays must be a positive integer, not %d", name, n.NoncurrentDays)
		}
		if v := n.NewerNoncurrentVersions; v != nil && (*v < 1 || *v > MaxNewerNoncurrentVersions) {
			return invalid("NewerNoncurrentVersions", "%s: NewerNoncurrentVersions must be 1 to %d, not %d", name, MaxNewerNoncurrentVersions, *v)
		}
	}
	if a := r.AbortIncompleteMultipartUpload; a != nil && a.DaysAfterInitiation < 1 {
		return invalid("DaysAfterInitiation", "%s: DaysAfterInitiation must be a positive integer, not %d", name, a.DaysAfterInitiation)
	}
	return nil
}

func checkExpiration(name string, e *lifecycle.LifecycleExpiration, versioned bool) error {
	set := 0
	for _, present := range []bool{e.Days != nil, e.Date != nil, e.ExpiredObjectDeleteMarker != nil} {
		if present {
			set++
		}
	}
	if set != 1 {
		return malformed("Expiration", nil, "%s: Expiration holds exactly one of Days, Date or ExpiredObjectDeleteMarker", name)
	}
	if versioned {
		return invalid("Expiration",
			"%s: Expiration applies to a bucket without versioning, and this bucket is versioned; use NoncurrentVersionExpiration", name)
	}
	if e.Days != nil && *e.Days < 1 {
		return invalid("Days", "%s: Days must be a positive integer, not %d", name, *e.Days)
	}
	if d := e.Date; d != nil {
		u := d.UTC()
		if u.Hour() != 0 || u.Minute() != 0 || u.Second() != 0 || u.Nanosecond() != 0 {
			return invalid("Date", "%s: the Date must be at midnight UTC, not %s", name, d.Format("2006-01-02T15:04:05.999999999Z07:00"))
		}
	}
	return nil
}
