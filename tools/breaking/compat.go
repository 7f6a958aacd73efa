package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
)

// Spec is one OpenAPI document at one point of its history.
type Spec struct {
	// Path is the spec's path in the repository (specs/pam/openapi.yaml).
	Path string
	// Info is the loaded document.
	Info *load.SpecInfo
}

// Version is the spec's info.version.
func (s *Spec) Version() string { return s.Info.Version }

// LoadSpec parses an OpenAPI document read from path (at some revision).
// External references are refused: every spec of the repository is one file.
func LoadSpec(path string, data []byte) (*Spec, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	info, err := load.NewSpecInfoFromData(loader, data, path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if info.Spec.Info == nil || info.Spec.Info.Version == "" {
		return nil, fmt.Errorf("load %s: no info.version", path)
	}
	return &Spec{Path: path, Info: info}, nil
}

// ConsumerServes reports whether the consumers of the spec at path implement
// its server side: a webhooks spec describes the endpoint a consumer serves
// and the provider calls, so what breaks a consumer is the reverse of what
// breaks a caller (a removed payload field, a new required payload field is
// fine). Such a spec is compared with base and revision swapped.
func ConsumerServes(path string) bool {
	return strings.HasSuffix(path, "webhooks.yaml")
}

// Change is one difference between two versions of a spec, in the words a
// consumer reads.
type Change struct {
	// Rule is oasdiff's rule id (response-property-removed).
	Rule string
	// Level is oasdiff's level: ERR breaks consumers, WARN may, INFO does not.
	Level checker.Level
	// Operation is "GET /path (OperationId)", or empty for a document-wide change.
	Operation string
	// Text says what changed.
	Text string
}

// Breaking reports whether the change breaks consumers.
func (c Change) Breaking() bool { return c.Level >= checker.ERR }

// String is the change on one line: level, operation, location and rule.
func (c Change) String() string {
	op := c.Operation
	if op == "" {
		op = "(document)"
	}
	return fmt.Sprintf("%s %s: %s [%s]", levelName(c.Level), op, c.Text, c.Rule)
}

func levelName(l checker.Level) string {
	switch l {
	case checker.ERR:
		return "breaking"
	case checker.WARN:
		return "warning"
	default:
		return "info"
	}
}

// versioningRules are oasdiff's own version policy findings; Compare applies
// the repository's policy (see MajorBumped) instead.
var versioningRules = []string{checker.APIVersionNotBumpedId, checker.APIVersionDecreasedId, checker.APIMajorVersionNotBumpedId}

// stricter are the rules this repository holds breaking where oasdiff only
// informs: a response property gone is a field some client reads gone,
// whether or not the spec promised it in every response.
var stricter = map[string]checker.Level{
	checker.ResponseOptionalPropertyRemovedId: checker.ERR,
}

// Compare lists the changes from base to revision down to level (checker.ERR
// for the breaking ones only, checker.INFO for a changelog), most severe
// first. For a spec whose consumers serve it (ConsumerServes) the two are
// compared swapped, so a change is judged from the consumer's side.
func Compare(base, revision *Spec, level checker.Level) ([]Change, error) {
	from, to := base, revision
	if ConsumerServes(revision.Path) {
		from, to = revision, base
	}
	d, sources, err := diff.GetWithOperationsSourcesMap(diff.NewConfig(), from.Info, to.Info)
	if err != nil {
		return nil, fmt.Errorf("diff %s: %w", revision.Path, err)
	}
	config := checker.NewConfig(checker.GetAllChecks(), checker.WithSeverityLevels(stricter))
	found := checker.CheckBackwardCompatibilityUntilLevel(config, d, sources, level)
	slices.SortStableFunc(found, checker.CompareChanges)
	l := checker.NewDefaultLocalizer()
	// The rights of the callers are judged from the callers' side, whoever
	// serves the spec, so with base and revision as given.
	roles, err := roleChanges(base, revision)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, c := range found {
		if slices.Contains(versioningRules, c.GetId()) {
			continue
		}
		out = append(out, Change{
			Rule:      c.GetId(),
			Level:     c.GetLevel(),
			Operation: operationName(c),
			Text:      nullNamed(c.GetId(), c.GetUncolorizedText(l)),
		})
	}
	for _, c := range roles {
		if c.Level >= level {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int { return int(b.Level) - int(a.Level) })
	return out, nil
}

func operationName(c checker.Change) string {
	if c.GetOperation() == "" && c.GetPath() == "" {
		return ""
	}
	name := strings.TrimSpace(c.GetOperation() + " " + c.GetPath())
	if id := c.GetOperationId(); id != "" {
		name += " (" + id + ")"
	}
	return name
}

// semver is a parsed MAJOR.MINOR.PATCH; pre-release and build suffixes are
// ignored.
type semver [3]int

func parseSemver(v string) (semver, bool) {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) == 0 || len(parts) > 3 {
		return semver{}, false
	}
	var s semver
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return semver{}, false
		}
		s[i] = n
	}
	return s, true
}

// MajorBumped reports whether revision's info.version has a greater major
// version than base's, which is what allows a breaking change.
func MajorBumped(base, revision string) bool {
	b, okB := parseSemver(base)
	r, okR := parseSemver(revision)
	return okB && okR && r[0] > b[0]
}

// Verdict is the outcome of comparing one spec.
type Verdict struct {
	// Path is the spec's path.
	Path string
	// BaseVersion and Version are info.version at the base and now ("" when
	// the spec is new or gone).
	BaseVersion, Version string
	// Changes are the breaking and possibly breaking changes found.
	Changes []Change
	// Failed is true when a breaking change came without a new major version.
	Failed bool
	// Bump is the info.version to write when the interface changed (an
	// addition, or a break) and info.version did not move up enough: the
	// next minor version for additions, the next major one for a break; ""
	// when the version is right.
	Bump string
	// Changed counts the interface changes, additions included.
	Changed int
}

// Judge compares one spec at base with its revision. A nil base is a new
// spec (it passes); a nil revision is a spec removed, which breaks every
// consumer.
func Judge(path string, base, revision *Spec) (Verdict, error) {
	v := Verdict{Path: path}
	switch {
	case base == nil && revision == nil:
		return v, nil
	case base == nil:
		v.Version = revision.Version()
		return v, nil
	case revision == nil:
		v.BaseVersion = base.Version()
		v.Changes = []Change{{Rule: "spec-removed", Level: checker.ERR, Text: "the whole spec was removed"}}
		v.Failed = true
		return v, nil
	}
	v.BaseVersion, v.Version = base.Version(), revision.Version()
	changes, err := Compare(base, revision, checker.WARN)
	if err != nil {
		return v, err
	}
	v.Changes = changes
	breaking := slices.ContainsFunc(changes, Change.Breaking)
	if breaking && !MajorBumped(v.BaseVersion, v.Version) {
		v.Failed = true
		v.Bump = NextVersion(v.BaseVersion, true)
	}
	if !breaking && !VersionIncreased(v.BaseVersion, v.Version) {
		// Additions are INFO changes, which the check above leaves out:
		// the changelog's own comparison says whether there were any.
		all, err := compareForward(base, revision)
		if err != nil {
			return v, err
		}
		if v.Changed = len(all); v.Changed > 0 {
			v.Bump = NextVersion(v.BaseVersion, false)
		}
	}
	return v, nil
}

// VersionIncreased reports whether revision is a later semantic version
// than base.
func VersionIncreased(base, revision string) bool {
	b, okB := parseSemver(base)
	r, okR := parseSemver(revision)
	if !okB || !okR {
		return false
	}
	for i := range b {
		if r[i] != b[i] {
			return r[i] > b[i]
		}
	}
	return false
}

// NextVersion is the version after base: the next major one for a break,
// else the next minor one. A base that is not a semantic version has none.
func NextVersion(base string, breaking bool) string {
	b, ok := parseSemver(base)
	if !ok {
		return "a version after " + base
	}
	if breaking {
		return fmt.Sprintf("%d.0.0", b[0]+1)
	}
	return fmt.Sprintf("%d.%d.0", b[0], b[1]+1)
}

// nullNamed names null as null in an enum rule's text (oasdiff writes a null
// enum value as "undefined").
func nullNamed(rule, text string) string {
	if strings.Contains(rule, "enum-value") {
		return strings.ReplaceAll(text, "`undefined` enum value", "`null` enum value")
	}
	return text
}
