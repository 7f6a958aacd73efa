// Package storeerr holds the sentinel errors every API's store returns, so
// that the callers above the stores (the admin API, the demo seed, the
// console) tell them apart once, whichever API answered.
package storeerr

import "errors"

var (
	// ErrNotFound: the row asked for does not exist (or is not the
	// caller's to see).
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: a row with the same unique name or key exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrConflict: the change contradicts the row's current state.
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the input breaks a rule the operator must fix (a bad
	// number, a foreign reference); the error's text says which.
	ErrInvalid = errors.New("invalid")
)
