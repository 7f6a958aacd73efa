package validation

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxResponseDepth bounds the nesting decodeJSON accepts, as encoding/json does.
const maxResponseDepth = 10000

// decodeJSON decodes a response body into maps, slices, float64s, strings,
// bools and nils in one pass over the bytes: encoding/json scans a document
// twice (once to check it, once to decode it), and response bodies are the
// largest documents the middleware reads. Whatever it accepts, encoding/json
// reads as the same value (FuzzDecodeJSON); it refuses duplicate keys, which
// encoding/json would resolve silently. Strings with escapes or bytes that
// are not UTF-8, rare in responses, are handed to encoding/json.
func decodeJSON(data []byte) (any, error) {
	return decodeJSONDepth(data, maxResponseDepth)
}

// decodeJSONDepth is decodeJSON refusing nesting deeper than maxDepth.
func decodeJSONDepth(data []byte, maxDepth int) (any, error) {
	d := jsonDecoder{data: data, maxDepth: maxDepth}
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, d.errorf("unexpected data after the value")
	}
	return v, nil
}

type jsonDecoder struct {
	data     []byte
	pos      int
	maxDepth int
}

func (d *jsonDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *jsonDecoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (any, error) {
	if depth > d.maxDepth {
		return nil, d.errorf("nested deeper than %d levels", d.maxDepth)
	}
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.string()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	default:
		return nil, d.errorf("unexpected character %q", c)
	}
}

func (d *jsonDecoder) literal(word string) error {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return d.errorf("invalid literal")
	}
	d.pos += len(word)
	return nil
}

func (d *jsonDecoder) object(depth int) (any, error) {
	d.pos++ // {
	obj := map[string]any{}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return obj, nil
	}
	for {
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("object key expected")
		}
		key, err := d.string()
		if err != nil {
			return nil, err
		}
		if _, dup := obj[key]; dup {
			return nil, d.errorf("duplicate key %q", key)
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("':' expected")
		}
		d.pos++
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		obj[key] = v
		if done, err := d.afterElement('}'); done || err != nil {
			return obj, err
		}
	}
}

// afterElement reads what follows an element of an object or an array: a
// comma, or the closing byte, which ends it (done).
func (d *jsonDecoder) afterElement(closing byte) (done bool, err error) {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return false, d.errorf("unexpected end of input")
	}
	switch d.data[d.pos] {
	case ',':
		d.pos++
		return false, nil
	case closing:
		d.pos++
		return true, nil
	}
	return false, d.errorf("',' or '%c' expected", closing)
}

func (d *jsonDecoder) array(depth int) (any, error) {
	d.pos++ // [
	arr := []any{}
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return arr, nil
	}
	for {
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		if done, err := d.afterElement(']'); done || err != nil {
			return arr, err
		}
	}
}

// string reads a string token; the plain ones (no escape, ASCII or valid
// UTF-8) directly, the others through encoding/json.
func (d *jsonDecoder) string() (string, error) {
	start := d.pos
	d.pos++ // opening quote
	plain := true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			raw := d.data[start+1 : d.pos-1]
			if plain {
				return string(raw), nil
			}
			if !utf8.Valid(raw) || hasBackslash(raw) {
				var s string
				if err := json.Unmarshal(d.data[start:d.pos], &s); err != nil {
					return "", fmt.Errorf("invalid JSON at offset %d: %w", start, err)
				}
				return s, nil
			}
			return string(raw), nil
		case c == '\\':
			plain = false
			d.pos += 2
		case c < 0x20:
			return "", d.errorf("control character in string")
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			d.pos++
		}
	}
	d.pos = len(d.data)
	return "", d.errorf("unterminated string")
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

var errNumber = errors.New("invalid number")

// number reads a number token as JSON's grammar writes it.
func (d *jsonDecoder) number() (any, error) {
	start := d.pos
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.data[d.pos] == '-' {
		d.pos++
	}
	if d.pos < len(d.data) && d.data[d.pos] == '0' {
		d.pos++
	} else if digits() == 0 {
		return nil, d.errorf("%v", errNumber)
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if digits() == 0 {
			return nil, d.errorf("%v", errNumber)
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			return nil, d.errorf("%v", errNumber)
		}
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.pos]), 64)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON at offset %d: %w", start, err)
	}
	return f, nil
}
