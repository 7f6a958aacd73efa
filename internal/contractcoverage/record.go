// Package contractcoverage records which (API, operation, status) pairs the
// tests saw answered and checked against the spec, and compares them with
// what each spec declares.
//
// Recording is off unless the environment variable named by EnvDir holds a
// directory (`make test` sets it): each test process then appends one line per
// distinct pair it saw to its own file there (and one per declared field of
// a response it saw, RecordFields, to another), so the packages `go test ./...`
// runs in parallel never share a file. TestContractCoverage (build tag
// contractcoverage), run after every package, reads the directory.
package contractcoverage

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// EnvDir names the environment variable holding the directory the pairs are
// recorded in; when it is empty nothing is recorded.
const EnvDir = "APISTACK_CONTRACT_COVERAGE_DIR"

// Pair is one response of one operation.
type Pair struct {
	// API is the API's name as in specs/<api>/ ("pam"), or "faxwebhooks".
	API string
	// OperationID is the operation's operationId.
	OperationID string
	// Status is the response status.
	Status int
}

// String is the pair as a line of a record file: "api operationId status".
func (p Pair) String() string {
	return p.API + " " + p.OperationID + " " + strconv.Itoa(p.Status)
}

// ParsePair reads a line written by Pair.String.
func ParsePair(line string) (Pair, error) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return Pair{}, fmt.Errorf("contractcoverage: malformed line %q", line)
	}
	status, err := strconv.Atoi(f[2])
	if err != nil {
		return Pair{}, fmt.Errorf("contractcoverage: malformed status in %q: %w", line, err)
	}
	return Pair{API: f[0], OperationID: f[1], Status: status}, nil
}

// recorder appends the lines of this process to its own file, each once.
type recorder struct {
	mu   sync.Mutex
	dir  string
	ext  string // ".pairs", ".fields"
	file *os.File
	seen map[string]bool
	err  error
}

var (
	process     = newRecorder(os.Getenv(EnvDir), ".pairs")
	fieldRecord = newRecorder(os.Getenv(EnvDir), ".fields")
)

func newRecorder(dir, ext string) *recorder {
	return &recorder{dir: dir, ext: ext, seen: map[string]bool{}}
}

// Enabled reports whether this process records pairs.
func Enabled() bool { return process.dir != "" }

// Record notes that a response with this status to this operation of api was
// checked against the spec and held to it. Each pair is written once per
// process; nothing is written when recording is off. An error writing the
// record is returned once, and recording stops.
func Record(api, operationID string, status int) error {
	if operationID == "" {
		return nil
	}
	return process.write(Pair{API: api, OperationID: operationID, Status: status}.String())
}

func (r *recorder) write(line string) error {
	if r.dir == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil || r.seen[line] {
		return nil
	}
	if r.file == nil {
		var suffix [6]byte
		_, _ = rand.Read(suffix[:])
		name := filepath.Join(r.dir, fmt.Sprintf("%d-%s%s", os.Getpid(), hex.EncodeToString(suffix[:]), r.ext))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			r.err = fmt.Errorf("contractcoverage: open record: %w", err)
			return r.err
		}
		r.file = f
	}
	// One write per line: O_APPEND keeps each line whole.
	if _, err := r.file.WriteString(line + "\n"); err != nil {
		r.err = fmt.Errorf("contractcoverage: write record: %w", err)
		return r.err
	}
	r.seen[line] = true
	return nil
}

// ReadDir returns every pair recorded in dir, by any process.
func ReadDir(dir string) (map[Pair]bool, error) {
	pairs := map[Pair]bool{}
	err := readLines(dir, ".pairs", func(line string) error {
		p, err := ParsePair(line)
		if err != nil {
			return err
		}
		pairs[p] = true
		return nil
	})
	return pairs, err
}

// ReadFieldsDir returns every field recorded in dir, by any process.
func ReadFieldsDir(dir string) (map[Field]bool, error) {
	fields := map[Field]bool{}
	err := readLines(dir, ".fields", func(line string) error {
		f, err := ParseField(line)
		if err != nil {
			return err
		}
		fields[f] = true
		return nil
	})
	return fields, err
}

func readLines(dir, ext string, each func(line string) error) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("contractcoverage: read %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("contractcoverage: %w", err)
		}
		for line := range strings.Lines(string(data)) {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if err := each(line); err != nil {
				return fmt.Errorf("%s: %w", e.Name(), err)
			}
		}
	}
	return nil
}
