package testkit

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// Answered checks a generated client's answer (a *…Response of
// oapi-codegen's ClientWithResponses): no error, and the status want; the
// body is shown when the status is another. It returns resp.
func Answered[R interface{ StatusCode() int }](t testing.TB, want int, resp R, err error) R {
	t.Helper()
	require.NoError(t, err)
	require.Equal(t, want, resp.StatusCode(), string(bodyOf(resp)))
	return resp
}

// bodyOf is the Body field of a generated response, nil when it has none.
func bodyOf(resp any) []byte {
	v := reflect.ValueOf(resp)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	if b := v.FieldByName("Body"); b.IsValid() && b.Kind() == reflect.Slice && b.Type().Elem().Kind() == reflect.Uint8 {
		return b.Bytes()
	}
	return nil
}
