package apiserver

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

type sqliteErr int

func (e sqliteErr) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e sqliteErr) Code() int     { return int(e) }

type pgErr string

func (e pgErr) Error() string    { return "pg " + string(e) }
func (e pgErr) SQLState() string { return string(e) }

func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("store: %w", driver.ErrBadConn), true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("x: %w", syscall.ECONNRESET), true},
		{errors.New("sql: database is closed"), true},
		{fmt.Errorf("insert: %w", sqliteErr(13)), true},         // SQLITE_FULL
		{fmt.Errorf("insert: %w", sqliteErr(10|(12<<8))), true}, // an SQLITE_IOERR extended code
		{fmt.Errorf("insert: %w", sqliteErr(19)), false},        // SQLITE_CONSTRAINT
		{fmt.Errorf("query: %w", pgErr("08006")), true},         // connection failure
		{fmt.Errorf("query: %w", pgErr("57P01")), true},         // admin shutdown
		{fmt.Errorf("query: %w", pgErr("53100")), true},         // disk full
		{fmt.Errorf("query: %w", pgErr("23505")), false},        // unique violation
		{context.Canceled, false},
		{errors.New("something else"), false},
		{nil, false},
	} {
		assert.Equal(t, tc.want, Unavailable(tc.err), "%v", tc.err)
	}
	assert.True(t, IsTimeout(fmt.Errorf("read: %w", os.ErrDeadlineExceeded)))
	assert.False(t, IsTimeout(errors.New("eof")))
}
