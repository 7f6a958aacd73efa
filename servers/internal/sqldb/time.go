package sqldb

import (
	"database/sql"
	"fmt"
	"time"
)

// Every schema stores an instant the same way: a BIGINT of Unix
// microseconds in UTC, in a column named *_at. Both engines then compare,
// sort and index instants as integers, exactly, with the same result;
// microseconds are PostgreSQL's precision (a TIMESTAMP would be text in
// SQLite, compared as text); and nothing depends on a session time zone.

// Micros is t as it is stored.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// Time is the instant stored as us, in UTC.
func Time(us int64) time.Time { return time.UnixMicro(us).UTC() }

// NullMicros is the argument of a nullable instant: NULL for nil.
func NullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return Micros(*t)
}

// NullTime is a nullable instant read: nil for NULL.
func NullTime(us sql.NullInt64) *time.Time {
	if !us.Valid {
		return nil
	}
	t := Time(us.Int64)
	return &t
}

// TimeInto is a Scan destination that reads a stored instant into *t.
func TimeInto(t *time.Time) sql.Scanner { return (*instant)(t) }

type instant time.Time

// Scan reads a BIGINT of Unix microseconds.
func (i *instant) Scan(v any) error {
	us, ok := v.(int64)
	if !ok {
		return fmt.Errorf("sqldb: an instant is stored as BIGINT Unix microseconds, not as %T", v)
	}
	*i = instant(Time(us))
	return nil
}

// NullTimeInto is a Scan destination that reads a nullable stored instant
// into *t: nil for NULL.
func NullTimeInto(t **time.Time) sql.Scanner { return nullInstant{t} }

type nullInstant struct{ t **time.Time }

// Scan reads NULL or a BIGINT of Unix microseconds.
func (n nullInstant) Scan(v any) error {
	if v == nil {
		*n.t = nil
		return nil
	}
	var at time.Time
	if err := TimeInto(&at).Scan(v); err != nil {
		return err
	}
	*n.t = &at
	return nil
}
