package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apistack/apistack/servers/console"
	"github.com/apistack/apistack/servers/stack"
)

// The credential types of demo-credentials.json live with the demo
// bootstrap in servers/stack.
type (
	demoCredentials       = stack.Credentials
	adminCredentials      = stack.AdminCredentials
	faxCredentials        = stack.FaxCredentials
	restaurantCredentials = stack.RestaurantCredentials
	storageCredentials    = stack.StorageCredentials
)

func readCredentials(path string) (demoCredentials, error) {
	var c demoCredentials
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		// A damaged file is replaced by the bootstrap, not fatal.
		return demoCredentials{}, nil
	}
	return c, nil
}

// writeCredentials writes the file atomically (temp file, fsync, rename), so
// a crash never leaves half a file, and readable by its owner only.
func writeCredentials(path string, c demoCredentials) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".demo-credentials-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// printDemo tells a newcomer what is running and gives a curl line per API.
func printDemo(w io.Writer, path string, c demoCredentials) {
	fmt.Fprintf(w, "apistack is running with demo tenants; credentials in %s\n\n", path)
	if p := c.PAM; p != nil {
		tokenCurl := fmt.Sprintf(`curl -s -X POST %s/v1/teams/%s/service_token -H 'Content-Type: application/json' -d '{"key_id":"%s","key_secret":"%s"}'`,
			p.BaseURL, p.Team, p.KeyID, p.KeySecret)
		fmt.Fprintf(w, "PAM        %s  (docs: %s/docs/)\n", p.BaseURL, p.BaseURL)
		fmt.Fprintf(w, "  token:   %s\n", tokenCurl)
		fmt.Fprintf(w, "  groups:  curl -s %s/v1/teams/%s/groups -H \"Authorization: Bearer $(%s | sed -E 's/.*\"bearer_token\":\"([^\"]+)\".*/\\1/')\"\n",
			p.BaseURL, p.Team, tokenCurl)
	}
	printFaxDemo(w, c.Fax, c.Admin)
	printRestaurantDemo(w, c.Restaurant)
	printStorageDemo(w, c.Storage, filepath.Join(filepath.Dir(path), demoRulesFile))
	if a := c.Admin; a != nil {
		fmt.Fprintf(w, "admin      %s  (docs: %s/docs/)\n", a.BaseURL, a.BaseURL)
		fmt.Fprintf(w, "  teams:   curl -s %s/pam/teams/demo -H 'Authorization: Bearer %s'\n", a.BaseURL, a.Token)
		fmt.Fprintf(w, "console    %s%s  (web console: log in with the admin token, admin.token in %s)\n", a.BaseURL, console.Prefix, path)
	}
	fmt.Fprintln(w)
}
