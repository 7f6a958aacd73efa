package admin

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

// The stores' sentinel errors (storeerr) become admin API errors in one
// place, fromStore, which the error handler calls. An operation says only
// what each sentinel means for it (about); a sentinel it says nothing of
// stays an unexpected error (500), as any other store error.

// sentences are an operation's sentences for the store sentinels it can
// meet; "" means the store error's own text (storeerr.ErrInvalid says what
// to fix).
type sentences map[error]string

// storeError is a store error with the sentences of the operation that met it.
type storeError struct {
	err  error
	says sentences
}

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// about returns err with the operation's sentences for it; nil for nil.
func about(err error, says sentences) error {
	if err == nil {
		return nil
	}
	return &storeError{err: err, says: says}
}

// notFound says what a storeerr.ErrNotFound means for the operation.
func notFound(err error, format string, args ...any) error {
	return about(err, sentences{storeerr.ErrNotFound: fmt.Sprintf(format, args...)})
}

// storeAnswers are the admin API's status and error name per sentinel, in
// the order they are looked for.
var storeAnswers = []struct {
	sentinel error
	status   int
	name     adminapi.ErrorError
}{
	{storeerr.ErrInvalid, http.StatusBadRequest, adminapi.ErrorErrorInvalidRequest},
	{storeerr.ErrNotFound, http.StatusNotFound, adminapi.ErrorErrorNotFound},
	{storeerr.ErrAlreadyExists, http.StatusConflict, adminapi.ErrorErrorConflict},
}

// fromStore maps a store error that an operation gave sentences for.
func fromStore(err error) (*apiError, bool) {
	var se *storeError
	if !errors.As(err, &se) {
		return nil, false
	}
	for _, a := range storeAnswers {
		if !errors.Is(se.err, a.sentinel) {
			continue
		}
		msg, ok := se.says[a.sentinel]
		if !ok {
			return nil, false
		}
		if msg == "" {
			msg = se.err.Error()
		}
		return &apiError{Status: a.status, Name: a.name, Message: msg}, true
	}
	return nil, false
}
