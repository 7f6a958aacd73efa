package sqlitedb

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// MicrosFunction is the SQL function the migrations call to convert an
// instant stored before instants were BIGINT Unix microseconds (a TIMESTAMP
// column, which this driver filled with time.Time's text) into that BIGINT:
// apistack_micros(created_at). NULL stays NULL; an integer is taken as
// microseconds already.
const MicrosFunction = "apistack_micros"

// timestampLayouts are the texts a TIMESTAMP column may hold: time.Time's
// String (what this driver writes), then the forms SQLite and other tools
// write.
var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999 -0700 MST",
	"2006-01-02 15:04:05.999999999 -0700",
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
}

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(MicrosFunction, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return storedMicros(args[0])
	})
}

// storedMicros converts a TIMESTAMP column's value into Unix microseconds.
func storedMicros(v driver.Value) (driver.Value, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case int64:
		return v, nil
	case time.Time:
		return v.UnixMicro(), nil
	case []byte:
		return storedMicros(string(v))
	case string:
		s, _, _ := strings.Cut(v, " m=") // a monotonic clock reading, if one was written
		for _, layout := range timestampLayouts {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UnixMicro(), nil
			}
		}
		return nil, fmt.Errorf("%s: %q is not an instant", MicrosFunction, v)
	}
	return nil, fmt.Errorf("%s: a %T is not an instant", MicrosFunction, v)
}
