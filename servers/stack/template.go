package stack

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

// templates guards the making of template files within this process.
var templates sync.Mutex

// OpenFromTemplates opens each API's SQLite database in dir as a copy of a
// template: the API's migrations applied once to a file under templateRoot,
// named by a digest of the migrations, so it is made once per schema and
// shared by every process (test binaries running side by side). A start then
// costs a file copy rather than the migrations (the test kit, the per-API
// test harnesses).
func OpenFromTemplates(dir, templateRoot string) OpenDBFunc {
	return func(ctx context.Context, m Migrations) (*sql.DB, error) {
		tmpl, err := template(ctx, templateRoot, m.Schema, m.SQLite)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, m.Schema+".db")
		if err := copyFile(tmpl, path); err != nil {
			return nil, err
		}
		return sqlitedb.Open(ctx, path, m.SQLite)
	}
}

// template returns the path of api's template, making it when missing: a
// private file migrated, closed (its WAL checkpointed into it) and renamed
// into place, so no process ever copies half a template.
func template(ctx context.Context, root, api string, migrations fs.FS) (string, error) {
	digest, err := digestOf(migrations)
	if err != nil {
		return "", fmt.Errorf("stack: %s migrations: %w", api, err)
	}
	// A directory of this user's own: root may be shared (/dev/shm).
	root = filepath.Join(root, fmt.Sprintf("apistack-templates-%d", os.Getuid()))
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", fmt.Errorf("stack: template: %w", err)
	}
	path := filepath.Join(root, fmt.Sprintf("%s-%s.db", api, digest[:16]))
	templates.Lock()
	defer templates.Unlock()
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	work, err := os.MkdirTemp(root, "making-*")
	if err != nil {
		return "", fmt.Errorf("stack: template: %w", err)
	}
	defer os.RemoveAll(work)
	tmp := filepath.Join(work, api+".db")
	db, err := sqlitedb.Open(ctx, tmp, migrations)
	if err != nil {
		return "", err
	}
	if err := db.Close(); err != nil {
		return "", fmt.Errorf("stack: template: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("stack: template: %w", err)
	}
	return path, nil
}

// digestOf is the SHA-256 of every file of migrations, names included.
func digestOf(migrations fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(migrations, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("stack: copy the template: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("stack: copy the template: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("stack: copy the template: %w", err)
	}
	return out.Close()
}

// TempRoot is where test databases and templates go: a memory file system
// when the machine has a writable one (Linux's /dev/shm), else the temporary
// directory.
func TempRoot() string {
	if f, err := os.CreateTemp("/dev/shm", "apistack-probe-*"); err == nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return "/dev/shm"
	}
	return os.TempDir()
}
