package stack

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

// Each API's database is migrated once per process into a template file
// (OpenFromTemplates); every stack starts from a copy of it.
var templates struct {
	sync.Mutex
	dir   string
	ready map[string]error
}

// OpenFromTemplates opens each API's SQLite database in dir as a copy of a
// template migrated once per process in templateRoot (the test kit: a start
// costs a file copy rather than the migrations).
func OpenFromTemplates(dir, templateRoot string) OpenDBFunc {
	return func(ctx context.Context, api string, migrations fs.FS) (*sql.DB, error) {
		tmpl, err := template(ctx, templateRoot, api, migrations)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, api+".db")
		if err := copyFile(tmpl, path); err != nil {
			return nil, err
		}
		return sqlitedb.Open(ctx, path, migrations)
	}
}

func template(ctx context.Context, root, api string, migrations fs.FS) (string, error) {
	templates.Lock()
	defer templates.Unlock()
	if templates.dir == "" {
		dir, err := os.MkdirTemp(root, "apistack-templates-*")
		if err != nil {
			return "", fmt.Errorf("stack: template directory: %w", err)
		}
		templates.dir, templates.ready = dir, map[string]error{}
	}
	path := filepath.Join(templates.dir, api+".db")
	if err, done := templates.ready[api]; done {
		return path, err
	}
	db, err := sqlitedb.Open(ctx, path, migrations)
	if err == nil {
		// Closing the last connection checkpoints the WAL into the file.
		err = db.Close()
	}
	templates.ready[api] = err
	return path, err
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
