package lifecycledoc_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/lifecycle"
	"github.com/apistack/apistack/internal/lifecycledoc"
)

const ns = lifecycle.Namespace

func readCorpus(t *testing.T, kind, name string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(corpusDir, kind, name+".xml"))
	require.NoError(t, err)
	return body
}

func requireCode(t *testing.T, err error, code, element string) *lifecycledoc.Error {
	t.Helper()
	var le *lifecycledoc.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, code, le.Code, le.Message)
	if element != "" {
		assert.Equal(t, element, le.Element, le.Message)
		assert.Contains(t, le.Message, element, "the message names the element")
	}
	return le
}

func ptr[T any](v T) *T { return &v }

func TestDecode_ReadsTheGeneratedTypes(t *testing.T) {
	cfg, err := lifecycledoc.Decode(readCorpus(t, "valid", "expire-days-filter-prefix"))
	require.NoError(t, err)
	assert.Equal(t, []lifecycle.LifecycleRule{{
		ID:         ptr("expire-logs"),
		Filter:     &lifecycle.LifecycleRuleFilter{Prefix: ptr("logs/")},
		Status:     lifecycle.ExpirationStatusEnabled,
		Expiration: &lifecycle.LifecycleExpiration{Days: ptr(int32(30))},
	}}, cfg.Rules)
}

func TestDecode_SeesExactlyTheValidatedValues(t *testing.T) {
	cfg, err := lifecycledoc.Decode(readCorpus(t, "valid", "signs-zeros-comments-and-collapsed-whitespace"))
	require.NoError(t, err)
	require.Len(t, cfg.Rules, 3)
	assert.Equal(t, int32(30), *cfg.Rules[0].Expiration.Days)
	assert.Equal(t, " spaces are kept in strings ", *cfg.Rules[0].Filter.Prefix)
	assert.Equal(t, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), cfg.Rules[1].Expiration.Date.UTC())
	assert.True(t, *cfg.Rules[2].Expiration.ExpiredObjectDeleteMarker)

	cfg, err = lifecycledoc.Decode(readCorpus(t, "valid", "cdata-and-entities"))
	require.NoError(t, err)
	assert.Equal(t, "a&b<c>", *cfg.Rules[0].ID)
	assert.Equal(t, "q&a/☺/<", *cfg.Rules[0].Filter.Prefix)
}

func TestDecode_ChildOrderDoesNotMatter(t *testing.T) {
	want := lifecycle.LifecycleRule{
		Filter:                         &lifecycle.LifecycleRuleFilter{Prefix: ptr("logs/")},
		Status:                         lifecycle.ExpirationStatusEnabled,
		Expiration:                     &lifecycle.LifecycleExpiration{Days: ptr(int32(30))},
		AbortIncompleteMultipartUpload: &lifecycle.AbortIncompleteMultipartUpload{DaysAfterInitiation: 7},
	}
	for _, file := range []string{"order-seed", "order-aws-sdk", "order-alphabetical"} {
		t.Run(file, func(t *testing.T) {
			cfg, err := lifecycledoc.Decode(readCorpus(t, "valid", file))
			require.NoError(t, err)
			got := cfg.Rules[0]
			require.NotNil(t, got.ID)
			got.ID = nil
			assert.Equal(t, want, got)
		})
	}
	cfg, err := lifecycledoc.Decode(readCorpus(t, "valid", "order-reversed-every-element"))
	require.NoError(t, err)
	r := cfg.Rules[0]
	assert.Equal(t, &lifecycle.Tag{Key: "k", Value: "v"}, r.Filter.Tag)
	assert.Equal(t, &lifecycle.NoncurrentVersionTransition{NoncurrentDays: 30, StorageClass: lifecycle.StorageClassGlacier, NewerNoncurrentVersions: ptr(int32(1))}, r.NoncurrentVersionTransition)
	assert.Equal(t, &lifecycle.NoncurrentVersionExpiration{NoncurrentDays: 60, NewerNoncurrentVersions: ptr(int32(2))}, r.NoncurrentVersionExpiration)
	assert.Equal(t, lifecycle.StorageClassStandardIa, r.Transition.StorageClass)
	assert.Equal(t, "reversed-every-element", *r.ID)
}

func TestMarshal_WritesTheSchemaOrder(t *testing.T) {
	cfg, err := lifecycledoc.Decode(readCorpus(t, "valid", "order-reversed-every-element"))
	require.NoError(t, err)
	out, err := lifecycledoc.Marshal(cfg)
	require.NoError(t, err)
	doc := string(out)
	order := []string{"<ID>", "<Filter>", "<Status>", "<Transition>", "<Expiration>", "<NoncurrentVersionTransition>",
		"<NoncurrentVersionExpiration>", "<AbortIncompleteMultipartUpload>"}
	for i := 1; i < len(order); i++ {
		assert.Less(t, strings.Index(doc, order[i-1]), strings.Index(doc, order[i]), "%s before %s in %s", order[i-1], order[i], doc)
	}
	assert.Contains(t, doc, "<Tag><Key>k</Key><Value>v</Value></Tag>")
	assert.Contains(t, doc, "<Transition><Date>2027-01-01T00:00:00Z</Date><StorageClass>STANDARD_IA</StorageClass></Transition>")
}

func TestDecode_AcceptsAByteOrderMark(t *testing.T) {
	body := append([]byte("\xef\xbb\xbf"), readCorpus(t, "valid", "legacy-prefix")...)
	_, err := lifecycledoc.Decode(body)
	assert.NoError(t, err)
}

func TestDecode_InvalidCorpusIsMalformedOrInvalidArgument(t *testing.T) {
	outOfBounds := map[string]string{
		"days-zero":                     "Days",
		"days-negative":                 "Days",
		"id-256-characters":             "ID",
		"newer-noncurrent-versions-101": "NewerNoncurrentVersions",
		"abort-days-zero":               "DaysAfterInitiation",
		"tag-empty-key":                 "Key",
		"object-size-negative":          "ObjectSizeGreaterThan",
	}
	for _, file := range corpus(t, "invalid") {
		name := strings.TrimSuffix(filepath.Base(file), ".xml")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(file)
			require.NoError(t, err)
			_, err = lifecycledoc.Decode(body)
			if element, ok := outOfBounds[name]; ok {
				requireCode(t, err, lifecycledoc.CodeInvalidArgument, element)
				return
			}
			le := requireCode(t, err, lifecycledoc.CodeMalformedXML, "")
			assert.Equal(t, 400, le.Status)
		})
	}
}

func TestDecode_NamesTheElementAtFault(t *testing.T) {
	tests := map[string]string{
		"unknown-element":           "Priority",
		"unknown-element-in-filter": "Suffix",
		"missing-status":            "Rule",
		"missing-status-aws-order":  "Rule",
		"duplicate-status":          "Rule",
		"noncurrent-days-twice":     "NoncurrentVersionExpiration",
		"status-lowercase":          "Status",
		"days-not-a-number":         "Days",
		"child-in-other-namespace":  "Prefix",
		"attribute-on-rule":         "Rule",
	}
	for name, element := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := lifecycledoc.Decode(readCorpus(t, "invalid", name))
			requireCode(t, err, lifecycledoc.CodeMalformedXML, element)
		})
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestParse_HostileInputIsMalformedXML(t *testing.T) {
	open := `<LifecycleConfiguration xmlns="` + ns + `">`
	rule := `<Rule><ID>r</ID><Filter><Prefix>p/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`
	laughs := `<?xml version="1.0"?>
<!DOCTYPE LifecycleConfiguration [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
` + open + `<Rule><ID>&lol4;</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`
	tests := map[string]string{
		"doctype with entity expansion": laughs,
		"external entity":               `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>` + open + `<Rule><ID>&e;</ID></Rule></LifecycleConfiguration>`,
		"undeclared entity":             open + `<Rule><ID>&e;</ID></Rule></LifecycleConfiguration>`,
		"10,000-deep nesting":           open + strings.Repeat("<Rule>", 10000) + strings.Repeat("</Rule>", 10000) + `</LifecycleConfiguration>`,
		"10,000-deep unknown elements":  open + strings.Repeat("<a>", 10000) + strings.Repeat("</a>", 10000) + `</LifecycleConfiguration>`,
		"invalid UTF-8":                 open + `<Rule><ID>` + "\xff\xfe" + `</ID></Rule></LifecycleConfiguration>`,
		"truncated UTF-8":               open + rule + "</LifecycleConfiguration>\xe2\x82",
		"empty body":                    "",
		"whitespace only":               " \n\t ",
		"trailing garbage":              open + rule + `</LifecycleConfiguration>garbage`,
		"second root":                   open + rule + `</LifecycleConfiguration>` + open + rule + `</LifecycleConfiguration>`,
		"UTF-16 declared":               `<?xml version="1.0" encoding="UTF-16"?>` + open + rule + `</LifecycleConfiguration>`,
		"not XML":                       `{"Rules": []}`,
		"illegal character reference":   open + `<Rule><ID>&#0;</ID></Rule></LifecycleConfiguration>`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := lifecycledoc.Parse(strings.NewReader(body), false)
			requireCode(t, err, lifecycledoc.CodeMalformedXML, "")
		})
	}
}

func TestParse_TenMegabyteBodyFailsFastWithoutReadingIt(t *testing.T) {
	open := `<LifecycleConfiguration xmlns="` + ns + `">`
	body := open + strings.Repeat(`<Rule><ID>r</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`, 10<<20/90)
	require.Greater(t, len(body), 10<<20)
	r := &countingReader{r: strings.NewReader(body)}
	start := time.Now()
	_, err := lifecycledoc.Parse(r, false)
	le := requireCode(t, err, lifecycledoc.CodeMalformedXML, "")
	assert.Contains(t, le.Message, "larger than 1048576 bytes")
	assert.LessOrEqual(t, r.n, int64(lifecycledoc.MaxBodySize+1), "read no more than the limit")
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestParse_AcceptsABodyOfExactlyTheLimit(t *testing.T) {
	open := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<LifecycleConfiguration xmlns="` + ns + `">`
	rule := `<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`
	closeTag := `</LifecycleConfiguration>`
	body := open + rule + closeTag
	body = strings.Replace(body, closeTag, strings.Repeat(" ", lifecycledoc.MaxBodySize-len(body))+closeTag, 1)
	require.Len(t, body, lifecycledoc.MaxBodySize)
	_, err := lifecycledoc.Parse(strings.NewReader(body), false)
	require.NoError(t, err)
	_, err = lifecycledoc.Parse(strings.NewReader(body+" "), false)
	requireCode(t, err, lifecycledoc.CodeMalformedXML, "")
}

func TestCheck_SupportedElementsAndRules(t *testing.T) {
	tests := []struct {
		file      string
		versioned bool
		code      string
		element   string
	}{
		{"expire-days-filter-prefix", false, "", ""},
		{"legacy-prefix", false, "", ""},
		{"no-id-empty-filter", false, "", ""},
		{"empty-prefix", false, "", ""},
		{"expiration-date", false, "", ""},
		{"expiration-date-offset", false, "", ""},
		{"noncurrent-version-expiration", true, "", ""},
		{"abort-multipart", false, "", ""},
		{"abort-multipart", true, "", ""},
		{"two-rules", false, "", ""},
		{"cdata-and-entities", false, "", ""},
		{"id-255-characters", false, "", ""},
		{"prefixed-namespace", false, "", ""},
		{"no-xml-declaration", false, "", ""},
		{"filter-before-id", false, "", ""},
		{"expiration-before-status", false, "", ""},
		{"order-seed", false, "", ""},
		{"order-aws-sdk", false, "", ""},
		{"order-aws-sdk-versioned", true, "", ""},
		{"order-alphabetical", false, "", ""},
		{"order-alphabetical-every-element", true, lifecycledoc.CodeNotImplemented, "Transition"},
		{"order-reversed-every-element", true, lifecycledoc.CodeNotImplemented, "Transition"},
		{"prefix-and-filter-schema-valid", false, lifecycledoc.CodeMalformedXML, "Filter"},
		{"neither-prefix-nor-filter-schema-valid", false, lifecycledoc.CodeMalformedXML, "Filter"},
		{"transition-days-and-date-schema-valid", false, lifecycledoc.CodeMalformedXML, "Transition"},
		{"transition", false, lifecycledoc.CodeNotImplemented, "Transition"},
		{"transition-date-and-noncurrent-transition", true, lifecycledoc.CodeNotImplemented, "Transition"},
		{"filter-tag", false, lifecycledoc.CodeNotImplemented, "Tag"},
		{"filter-and", false, lifecycledoc.CodeNotImplemented, "And"},
		{"filter-object-size", false, lifecycledoc.CodeNotImplemented, "ObjectSizeLessThan"},
		{"expired-object-delete-marker", true, lifecycledoc.CodeNotImplemented, "ExpiredObjectDeleteMarker"},
		{"boolean-as-digit", false, lifecycledoc.CodeNotImplemented, "ExpiredObjectDeleteMarker"},
		{"duplicate-ids-schema-valid", false, lifecycledoc.CodeInvalidArgument, "ID"},
		{"expire-days-filter-prefix", true, lifecycledoc.CodeInvalidArgument, "Expiration"},
		{"noncurrent-version-expiration", false, lifecycledoc.CodeInvalidArgument, "NoncurrentVersionExpiration"},
		{"all-supported-actions", true, lifecycledoc.CodeInvalidArgument, "Expiration"},
		{"all-supported-actions", false, lifecycledoc.CodeInvalidArgument, "NoncurrentVersionExpiration"},
	}
	for _, tt := range tests {
		name := tt.file
		if tt.versioned {
			name += "/versioned"
		}
		t.Run(name, func(t *testing.T) {
			_, err := lifecycledoc.Parse(bytes.NewReader(readCorpus(t, "valid", tt.file)), tt.versioned)
			if tt.code == "" {
				assert.NoError(t, err)
				return
			}
			le := requireCode(t, err, tt.code, tt.element)
			if tt.code == lifecycledoc.CodeNotImplemented {
				assert.Equal(t, 501, le.Status)
			} else {
				assert.Equal(t, 400, le.Status)
			}
		})
	}
}

func TestCheck_HoldsBuiltConfigurationsToTheSameRules(t *testing.T) {
	rule := func() lifecycle.LifecycleRule {
		return lifecycle.LifecycleRule{
			ID:         ptr("r"),
			Filter:     &lifecycle.LifecycleRuleFilter{Prefix: ptr("p/")},
			Status:     lifecycle.ExpirationStatusEnabled,
			Expiration: &lifecycle.LifecycleExpiration{Days: ptr(int32(1))},
		}
	}
	with := func(change func(*lifecycle.LifecycleRule)) *lifecycle.LifecycleConfiguration {
		r := rule()
		change(&r)
		return &lifecycle.LifecycleConfiguration{Rules: []lifecycle.LifecycleRule{r}}
	}
	midday := time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		cfg     *lifecycle.LifecycleConfiguration
		code    string
		element string
	}{
		{"no rules", &lifecycle.LifecycleConfiguration{}, lifecycledoc.CodeMalformedXML, "Rule"},
		{"1001 rules", &lifecycle.LifecycleConfiguration{Rules: make([]lifecycle.LifecycleRule, 1001)}, lifecycledoc.CodeMalformedXML, "Rule"},
		{"no status", with(func(r *lifecycle.LifecycleRule) { r.Status = "" }), lifecycledoc.CodeMalformedXML, "Status"},
		{"prefix and filter", with(func(r *lifecycle.LifecycleRule) { r.Prefix = ptr("a") }), lifecycledoc.CodeMalformedXML, "Filter"},
		{"neither prefix nor filter", with(func(r *lifecycle.LifecycleRule) { r.Filter = nil }), lifecycledoc.CodeMalformedXML, "Filter"},
		{"long ID", with(func(r *lifecycle.LifecycleRule) { r.ID = ptr(strings.Repeat("x", 256)) }), lifecycledoc.CodeInvalidArgument, "ID"},
		{"long prefix", with(func(r *lifecycle.LifecycleRule) { r.Filter.Prefix = ptr(strings.Repeat("x", 1025)) }), lifecycledoc.CodeInvalidArgument, "Prefix"},
		{"no action", with(func(r *lifecycle.LifecycleRule) { r.Expiration = nil }), lifecycledoc.CodeInvalidArgument, "Rule"},
		{"zero days", with(func(r *lifecycle.LifecycleRule) { r.Expiration.Days = ptr(int32(0)) }), lifecycledoc.CodeInvalidArgument, "Days"},
		{"days and date", with(func(r *lifecycle.LifecycleRule) { r.Expiration.Date = &midday }), lifecycledoc.CodeMalformedXML, "Expiration"},
		{"date at midday", with(func(r *lifecycle.LifecycleRule) { r.Expiration = &lifecycle.LifecycleExpiration{Date: &midday} }), lifecycledoc.CodeInvalidArgument, "Date"},
		{"transition with days and date", with(func(r *lifecycle.LifecycleRule) {
			r.Transition = &lifecycle.Transition{Days: ptr(int32(1)), Date: &midday, StorageClass: lifecycle.StorageClassGlacier}
		}), lifecycledoc.CodeMalformedXML, "Transition"},
		{"abort after zero days", with(func(r *lifecycle.LifecycleRule) {
			r.AbortIncompleteMultipartUpload = &lifecycle.AbortIncompleteMultipartUpload{}
		}), lifecycledoc.CodeInvalidArgument, "DaysAfterInitiation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireCode(t, lifecycledoc.Check(tt.cfg, false), tt.code, tt.element)
		})
	}
	versioned := with(func(r *lifecycle.LifecycleRule) {
		r.Expiration = nil
		r.NoncurrentVersionExpiration = &lifecycle.NoncurrentVersionExpiration{NoncurrentDays: 0}
	})
	requireCode(t, lifecycledoc.Check(versioned, true), lifecycledoc.CodeInvalidArgument, "NoncurrentDays")
	versioned.Rules[0].NoncurrentVersionExpiration = &lifecycle.NoncurrentVersionExpiration{NoncurrentDays: 1, NewerNoncurrentVersions: ptr(int32(101))}
	requireCode(t, lifecycledoc.Check(versioned, true), lifecycledoc.CodeInvalidArgument, "NewerNoncurrentVersions")
}

func TestMarshal_RoundTripsThroughTheValidator(t *testing.T) {
	for _, file := range corpus(t, "valid") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			body, err := os.ReadFile(file)
			require.NoError(t, err)
			cfg, err := lifecycledoc.Decode(body)
			require.NoError(t, err)
			out, err := lifecycledoc.Marshal(cfg)
			require.NoError(t, err)
			again, err := lifecycledoc.Decode(out)
			require.NoError(t, err, "%s", out)
			out2, err := lifecycledoc.Marshal(again)
			require.NoError(t, err)
			assert.Equal(t, string(out), string(out2))
		})
	}
}

func TestValue_IsTheGenericShapeOfTheDocument(t *testing.T) {
	v, err := lifecycledoc.Value(readCorpus(t, "valid", "noncurrent-version-expiration"))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"Rule": []any{map[string]any{
		"ID":     "old-versions",
		"Filter": map[string]any{"Prefix": "docs/"},
		"Status": "Enabled",
		"NoncurrentVersionExpiration": map[string]any{
			"NoncurrentDays": int64(30), "NewerNoncurrentVersions": int64(5),
		},
	}}}, v)
	_, err = lifecycledoc.Value([]byte("<nope/>"))
	requireCode(t, err, lifecycledoc.CodeMalformedXML, "")
}
