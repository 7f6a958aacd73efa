package linkheader_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/internal/linkheader"
)

type parseCase struct {
	name    string
	headers []string
	want    []linkheader.Link
}

type errorCase struct {
	name       string
	headers    []string
	wantHeader int
	wantOffset int
	wantMsg    string
}

var commaInsideURICases = []parseCase{
	{
		name:    "comma in query",
		headers: []string{`<https://api.example.com/pams?fields=id,name&page=2>; rel="next"`},
		want: []linkheader.Link{
			{URI: "https://api.example.com/pams?fields=id,name&page=2", Rels: []string{"next"}},
		},
	},
	{
		name:    "comma and semicolon in two links",
		headers: []string{`</a?x=1,2;y=3>; rel="next", </b?x=4,5;z>; rel="last"`},
		want: []linkheader.Link{
			{URI: "/a?x=1,2;y=3", Rels: []string{"next"}},
			{URI: "/b?x=4,5;z", Rels: []string{"last"}},
		},
	},
	{
		name:    "quote and angle bracket opener in URI",
		headers: []string{`</q?a="b,c"&d=<e>; rel=next`},
		want:    []linkheader.Link{{URI: `/q?a="b,c"&d=<e`, Rels: []string{"next"}}},
	},
	{
		name:    "empty URI refers to context",
		headers: []string{`<>; rel=self`},
		want:    []linkheader.Link{{URI: "", Rels: []string{"self"}}},
	},
}

var severalRelsCases = []parseCase{
	{
		name:    "two rels",
		headers: []string{`</p/9>; rel="next last"`},
		want:    []linkheader.Link{{URI: "/p/9", Rels: []string{"next", "last"}}},
	},
	{
		name:    "extra spaces and tab between rels",
		headers: []string{"</p/9>; rel=\"  next \t last  \""},
		want:    []linkheader.Link{{URI: "/p/9", Rels: []string{"next", "last"}}},
	},
	{
		name:    "rels are lower-cased",
		headers: []string{`</p/2>; rel="Next PREV"`},
		want:    []linkheader.Link{{URI: "/p/2", Rels: []string{"next", "prev"}}},
	},
	{
		name:    "extension relation type URI",
		headers: []string{`</x>; rel="https://example.com/rels/Thing next"`},
		want:    []linkheader.Link{{URI: "/x", Rels: []string{"https://example.com/rels/thing", "next"}}},
	},
	{
		name:    "first rel wins",
		headers: []string{`</x>; rel=next; rel=prev`},
		want:    []linkheader.Link{{URI: "/x", Rels: []string{"next"}}},
	},
	{
		name:    "empty rel gives no relations",
		headers: []string{`</x>; rel=""`},
		want:    []linkheader.Link{{URI: "/x"}},
	},
}

var paramCases = []parseCase{
	{
		name:    "quoted and unquoted",
		headers: []string{`</x>; rel=next; title="Page 2"; type="application/json"; hreflang=en`},
		want: []linkheader.Link{
			{URI: "/x", Rels: []string{"next"}, Params: map[string]string{"title": "Page 2", "type": "application/json", "hreflang": "en"}},
		},
	},
	{
		name:    "quoted value with comma and semicolon",
		headers: []string{`</x>; rel=next; title="a, b; c", </y>; rel=prev`},
		want: []linkheader.Link{
			{URI: "/x", Rels: []string{"next"}, Params: map[string]string{"title": "a, b; c"}},
			{URI: "/y", Rels: []string{"prev"}},
		},
	},
	{
		name:    "unquoted token",
		headers: []string{`</x>; rel=next; hreflang=en-GB; media=screen`},
		want: []linkheader.Link{
			{URI: "/x", Rels: []string{"next"}, Params: map[string]string{"hreflang": "en-GB", "media": "screen"}},
		},
	},
	{
		name:    "param without value",
		headers: []string{`</font.woff2>; rel=preload; crossorigin; as=font`},
		want: []linkheader.Link{
			{URI: "/font.woff2", Rels: []string{"preload"}, Params: map[string]string{"crossorigin": "", "as": "font"}},
		},
	},
	{
		name:    "case-insensitive names, values kept",
		headers: []string{`</x>; REL="next"; Title="Mixed Case"`},
		want: []linkheader.Link{
			{URI: "/x", Rels: []string{"next"}, Params: map[string]string{"title": "Mixed Case"}},
		},
	},
	{
		name:    "first occurrence wins",
		headers: []string{`</x>; title=one; TITLE="two"; rel=next`},
		want: []linkheader.Link{
			{URI: "/x", Rels: []string{"next"}, Params: map[string]string{"title": "one"}},
		},
	},
	{
		name:    "no params",
		headers: []string{`</x>`},
		want:    []linkheader.Link{{URI: "/x"}},
	},
}

var escapeCases = []parseCase{
	{
		name:    "escaped quote and backslash",
		headers: []string{`</x>; title="say \"hi\" \\ bye"`},
		want:    []linkheader.Link{{URI: "/x", Params: map[string]string{"title": `say "hi" \ bye`}}},
	},
	{
		name:    "escaped ordinary character",
		headers: []string{`</x>; title="\a\,\;"`},
		want:    []linkheader.Link{{URI: "/x", Params: map[string]string{"title": "a,;"}}},
	},
	{
		name:    "escaped quote then comma stays inside value",
		headers: []string{`</x>; title="\", <y>"; rel=next`},
		want:    []linkheader.Link{{URI: "/x", Rels: []string{"next"}, Params: map[string]string{"title": `", <y>`}}},
	},
	{
		name:    "obs-text and UTF-8 pass through",
		headers: []string{"</caf\u00e9>; title=\"na\u00efve \xff\""},
		want:    []linkheader.Link{{URI: "/caf\u00e9", Params: map[string]string{"title": "na\u00efve \xff"}}},
	},
}

var multipleHeaderCases = []parseCase{
	{
		name:    "links in order across headers",
		headers: []string{`</a>; rel=first`, `</b>; rel=next, </c>; rel=last`},
		want: []linkheader.Link{
			{URI: "/a", Rels: []string{"first"}},
			{URI: "/b", Rels: []string{"next"}},
			{URI: "/c", Rels: []string{"last"}},
		},
	},
	{
		name:    "empty header values contribute nothing",
		headers: []string{"", `</a>; rel=next`, "  "},
		want:    []linkheader.Link{{URI: "/a", Rels: []string{"next"}}},
	},
	{
		name:    "no headers",
		headers: nil,
		want:    nil,
	},
}

var listSyntaxCases = []parseCase{
	{
		name:    "empty elements ignored",
		headers: []string{`, ,</a>; rel=next, , ,</b>; rel=prev,,`},
		want: []linkheader.Link{
			{URI: "/a", Rels: []string{"next"}},
			{URI: "/b", Rels: []string{"prev"}},
		},
	},
	{
		name:    "only commas",
		headers: []string{" , ,, "},
		want:    nil,
	},
	{
		name:    "whitespace everywhere allowed",
		headers: []string{"\t </a> \t;\trel = \"next\" ; title\t=\tx ,\t</b>;rel=prev\t"},
		want: []linkheader.Link{
			{URI: "/a", Rels: []string{"next"}, Params: map[string]string{"title": "x"}},
			{URI: "/b", Rels: []string{"prev"}},
		},
	},
	{
		name:    "no whitespace at all",
		headers: []string{`</a>;rel=next;title="t",</b>;rel=prev`},
		want: []linkheader.Link{
			{URI: "/a", Rels: []string{"next"}, Params: map[string]string{"title": "t"}},
			{URI: "/b", Rels: []string{"prev"}},
		},
	},
}

var malformedCases = []errorCase{
	{name: "missing <", headers: []string{`https://x/p/2; rel=next`}, wantOffset: 0, wantMsg: "expected '<'"},
	{name: "missing < in second link", headers: []string{`</a>; rel=next, /b; rel=prev`}, wantOffset: 16, wantMsg: "expected '<'"},
	{name: "unterminated URI", headers: []string{`</a?x=1,2; rel=next`}, wantOffset: 0, wantMsg: "unterminated URI"},
	{name: "unterminated quoted string", headers: []string{`</a>; title="abc, </b>; rel=next`}, wantOffset: 12, wantMsg: "unterminated quoted-string"},
	{name: "quoted string ends in backslash", headers: []string{`</a>; title="abc\`}, wantOffset: 12, wantMsg: "unterminated quoted-string"},
	{name: "garbage after URI", headers: []string{`</a> junk`}, wantOffset: 5, wantMsg: "after link-value"},
	{name: "garbage after quoted value", headers: []string{`</a>; rel="next"x`}, wantOffset: 16, wantMsg: "after link-value"},
	{name: "garbage after token value", headers: []string{`</a>; type=application/json`}, wantOffset: 22, wantMsg: "after link-value"},
	{name: "second link without comma", headers: []string{`</a>; rel=next </b>; rel=prev`}, wantOffset: 15, wantMsg: "after link-value"},
	{name: "trailing semicolon", headers: []string{`</a>; rel=next;`}, wantOffset: 15, wantMsg: "expected parameter name"},
	{name: "empty parameter", headers: []string{`</a>; ; rel=next`}, wantOffset: 6, wantMsg: "expected parameter name"},
	{name: "missing value after =", headers: []string{`</a>; rel=; title=x`}, wantOffset: 10, wantMsg: `value for parameter "rel"`},
	{name: "control character in quoted string", headers: []string{"</a>; title=\"a\x01b\""}, wantOffset: 14, wantMsg: "control character"},
	{name: "escaped control character", headers: []string{"</a>; title=\"a\\\x00\""}, wantOffset: 15, wantMsg: "invalid escaped character"},
	{name: "control character in URI", headers: []string{"</a\nb>; rel=next"}, wantOffset: 3, wantMsg: "control character"},
	{name: "error in second header", headers: []string{`</a>; rel=next`, `</b`}, wantHeader: 1, wantOffset: 0, wantMsg: "unterminated URI"},
}

func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := linkheader.Parse(tc.headers...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParse_CommaInsideURI(t *testing.T) { runParseCases(t, commaInsideURICases) }

func TestParse_SeveralRels(t *testing.T) { runParseCases(t, severalRelsCases) }

func TestParse_QuotedAndUnquotedParams(t *testing.T) { runParseCases(t, paramCases) }

func TestParse_BackslashEscapesInQuotedStrings(t *testing.T) { runParseCases(t, escapeCases) }

func TestParse_MultipleHeadersConcatenate(t *testing.T) { runParseCases(t, multipleHeaderCases) }

func TestParse_ListSyntaxEmptyElementsAndWhitespace(t *testing.T) { runParseCases(t, listSyntaxCases) }

func TestParse_MalformedInputReturnsPositionedError(t *testing.T) {
	for _, tc := range malformedCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := linkheader.Parse(tc.headers...)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.ErrorIs(t, err, linkheader.ErrSyntax)
			assert.ErrorContains(t, err, tc.wantMsg)

			var se *linkheader.SyntaxError
			require.True(t, errors.As(err, &se), "want *SyntaxError, got %T", err)
			assert.Equal(t, tc.wantHeader, se.Header, "header index")
			assert.Equal(t, tc.wantOffset, se.Offset, "byte offset")
		})
	}
}

func TestFind_ReturnsFirstLinkWithRelation(t *testing.T) {
	links := []linkheader.Link{
		{URI: "/first", Rels: []string{"first"}},
		{URI: "/p/3", Rels: []string{"next", "last"}},
		{URI: "/p/4", Rels: []string{"next"}},
		{URI: "/hand-built", Rels: []string{"Prev"}},
	}
	tests := []struct {
		rel     string
		wantURI string
		wantOK  bool
	}{
		{rel: "next", wantURI: "/p/3", wantOK: true},
		{rel: "last", wantURI: "/p/3", wantOK: true},
		{rel: "NEXT", wantURI: "/p/3", wantOK: true},
		{rel: "prev", wantURI: "/hand-built", wantOK: true},
		{rel: "self", wantOK: false},
		{rel: "", wantOK: false},
	}
	for _, tc := range tests {
		t.Run(tc.rel, func(t *testing.T) {
			got, ok := linkheader.Find(links, tc.rel)
			assert.Equal(t, tc.wantOK, ok)
			assert.Equal(t, tc.wantURI, got.URI)
		})
	}

	_, ok := linkheader.Find(nil, "next")
	assert.False(t, ok, "no links, nothing found")
}

func TestFormat_QuotesOnlyWhenNeeded(t *testing.T) {
	tests := []struct {
		name  string
		links []linkheader.Link
		want  string
	}{
		{name: "nothing", links: nil, want: ""},
		{
			name: "pagination pair",
			links: []linkheader.Link{
				{URI: "/pams?cursor=abc&fields=id,name", Rels: []string{"next"}},
				{URI: "/pams?cursor=xyz", Rels: []string{"prev"}},
			},
			want: `</pams?cursor=abc&fields=id,name>; rel="next", </pams?cursor=xyz>; rel="prev"`,
		},
		{
			name:  "several rels",
			links: []linkheader.Link{{URI: "/p/9", Rels: []string{"next", "last"}}},
			want:  `</p/9>; rel="next last"`,
		},
		{
			name: "params sorted, tokens bare, others quoted and escaped",
			links: []linkheader.Link{{
				URI:    "/x",
				Rels:   []string{"next"},
				Params: map[string]string{"title": `a "b", c\d`, "hreflang": "en", "crossorigin": "", "type": "text/html"},
			}},
			want: `</x>; rel="next"; crossorigin; hreflang=en; title="a \"b\", c\\d"; type="text/html"`,
		},
		{
			name:  "no rel",
			links: []linkheader.Link{{URI: "/x", Params: map[string]string{"a": "b"}}},
			want:  `</x>; a=b`,
		},
		{
			name:  "angle bracket in URI is percent-encoded",
			links: []linkheader.Link{{URI: "/x?a=>b", Rels: []string{"next"}}},
			want:  `</x?a=%3Eb>; rel="next"`,
		},
		{
			name:  "unrepresentable param names omitted",
			links: []linkheader.Link{{URI: "/x", Rels: []string{"next"}, Params: map[string]string{"Rel": "prev", "bad name": "v", "": "v"}}},
			want:  `</x>; rel="next"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, linkheader.Format(tc.links...))
		})
	}
}

func TestFormat_ParseRoundTrips(t *testing.T) {
	for _, tc := range allParseCases() {
		if tc.want == nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			header := linkheader.Format(tc.want...)
			got, err := linkheader.Parse(header)
			require.NoError(t, err, "header %q", header)
			assert.Equal(t, tc.want, got, "header %q", header)
		})
	}
}

func allParseCases() []parseCase {
	var all []parseCase
	for _, cases := range [][]parseCase{
		commaInsideURICases, severalRelsCases, paramCases, escapeCases, multipleHeaderCases, listSyntaxCases,
	} {
		all = append(all, cases...)
	}
	return all
}

// FuzzParse splits its input on newlines into several header values, which
// a real header value cannot contain, so one string covers multi-header
// responses too.
func FuzzParse(f *testing.F) {
	for _, tc := range allParseCases() {
		f.Add(strings.Join(tc.headers, "\n"))
	}
	for _, tc := range malformedCases {
		f.Add(strings.Join(tc.headers, "\n"))
	}
	f.Fuzz(func(t *testing.T, in string) {
		links, err := linkheader.Parse(strings.Split(in, "\n")...)
		if err != nil {
			require.ErrorIs(t, err, linkheader.ErrSyntax)
			return
		}
		header := linkheader.Format(links...)
		again, err := linkheader.Parse(header)
		require.NoError(t, err, "Format produced unparsable %q from %q", header, in)
		require.Equal(t, links, again, "round trip through %q", header)
		require.Equal(t, header, linkheader.Format(again...), "Format is not stable")
	})
}
