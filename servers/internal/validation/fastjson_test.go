package validation

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeJSON_ReadsWhatEncodingJSONReads(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b":[true,false,null,"x",-0.5e+3,0,1E2],"c":{}}`,
		` [ ] `, `"caf\u00e9 \"q\" \n"`, `"\ud83d\ude00"`, "\"caf\xc3\xa9\"", "\"bad \xff utf-8\"",
		`{"nested":{"deeper":[[1],[2,[3]]]}}`, `123`, `-0`, `1.5`,
	} {
		var want any
		require.NoError(t, json.Unmarshal([]byte(in), &want), in)
		got, err := decodeJSON([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func TestDecodeJSON_RefusesWhatIsNotJSON(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `.5`, `1e`, `-`, `+1`, `tru`, `nul`,
		`"unterminated`, "\"ctl \x01\"", `{"a":1}x`, `{"a":1} {"a":2}`, `{a:1}`, `"bad \x escape"`, `1e400`,
		`{"a":1,"a":2}`, strings.Repeat("[", maxResponseDepth+2) + strings.Repeat("]", maxResponseDepth+2),
	} {
		_, err := decodeJSON([]byte(in))
		assert.Error(t, err, "%q", in)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,[2,[3]]]`, `"x\u0041"`, `{"a":{"b":[]}}x`, "\"\xff\"", `-1.5e-7`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeJSON(data)
		var want any
		stdErr := json.Unmarshal(data, &want)
		if err != nil {
			return // refusing more (duplicate keys) is allowed
		}
		require.NoError(t, stdErr, "decodeJSON accepted what encoding/json refuses: %q", data)
		assert.Equal(t, want, got, "%q", data)
	})
}

func BenchmarkDecodeJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"list":[`)
	for i := range 100 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"id":"5f0c6a3e-1b2c-4d5e-8f9a-%012d","name":"group-%d","roles":["pam_admin","end_user"],"deleted_at":null}`, i, i)
	}
	sb.WriteString(`]}`)
	data := []byte(sb.String())
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeJSON(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestDecodeStrictJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    any
		wantErr string
	}{
		{"object", `{"a":1,"b":[true,null,"x"]}`, map[string]any{"a": 1.0, "b": []any{true, nil, "x"}}, ""},
		{"duplicate key", `{"a":1,"a":2}`, nil, `duplicate key "a"`},
		{"duplicate nested key", `{"a":{"b":1,"b":1}}`, nil, `duplicate key "b"`},
		{"keys differing in case are distinct", `{"a":1,"A":2}`, map[string]any{"a": 1.0, "A": 2.0}, ""},
		{"trailing data", `{"a":1} {"a":2}`, nil, "unexpected data after the value"},
		{"trailing garbage", `{"a":1}x`, nil, "invalid JSON"},
		{"truncated", `{"a":`, nil, "unexpected end of input"},
		{"empty", ``, nil, "unexpected end of input"},
		{"too deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), nil, "nested deeper than 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeStrictJSON([]byte(tt.in))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func FuzzDecodeStrictJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1,"a":2}`, `[1,[2,[3]]]`, `"x"`, `{"a":{"b":[]}}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeStrictJSON(data)
		if err != nil {
			return
		}
		// Whatever the strict decoder accepts, the standard decoder reads the
		// same way: the validator and the handler cannot disagree.
		var std any
		require.NoError(t, jsonUnmarshal(data, &std))
		assert.Equal(t, std, v)
	})
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
