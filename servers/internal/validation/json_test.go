package validation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
