package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const credsUsage = `usage: apistack creds [--data-dir DIR] SECTION.KEY

Prints one value of <data-dir>/demo-credentials.json, such as pam.key_secret,
so a shell line can read a secret without a JSON tool:

  curl -s http://127.0.0.1:8082/v2/faxes -H "Authorization: Bearer $(apistack creds fax.api_key)"

The sections are pam, fax, storage, restaurant, admin and sandboxes.
`

// credsCommand prints the value of one section.key of the demo credentials
// file, with a newline, and nothing else: the second and later starts of
// `serve --demo` print banner lines that read their secrets through it.
func credsCommand(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("creds", stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), credsUsage); fs.PrintDefaults() }
	dataDir := fs.String("data-dir", "data", "directory of demo-credentials.json (APISTACK_DATA_DIR)")
	if err := parseFlags(fs, "creds", args); err != nil {
		return err
	}
	if err := flagDefaults(fs); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: apistack creds [--data-dir DIR] SECTION.KEY (see apistack creds -h)")
	}
	section, key, ok := strings.Cut(fs.Arg(0), ".")
	if !ok || section == "" || key == "" {
		return fmt.Errorf("%q is not SECTION.KEY, such as pam.key_secret (see apistack creds -h)", fs.Arg(0))
	}
	path := filepath.Join(*dataDir, "demo-credentials.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the demo credentials (run `apistack serve --demo` first): %w", err)
	}
	var file map[string]map[string]any
	if err := json.Unmarshal(data, &file); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	values, ok := file[section]
	if !ok {
		return fmt.Errorf("%s has no section %q (it has %s)", path, section, strings.Join(sortedKeys(file), ", "))
	}
	v, ok := values[key]
	if !ok {
		return fmt.Errorf("%s has no key %q in section %s (it has %s)", path, key, section, strings.Join(sortedKeys(values), ", "))
	}
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("%s: %s.%s is not a string", path, section, key)
	}
	_, err = fmt.Fprintln(stdout, s)
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
