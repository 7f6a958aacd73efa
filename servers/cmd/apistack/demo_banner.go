package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// demoSecret is one secret of the credentials file, with where it is there.
type demoSecret struct {
	path  string // section.key in demo-credentials.json
	value string
}

// secretsOf lists the secrets in c: what lets a caller in, not what names it.
func secretsOf(c demoCredentials) []demoSecret {
	var out []demoSecret
	add := func(path, value string) {
		if value != "" {
			out = append(out, demoSecret{path, value})
		}
	}
	if c.PAM != nil {
		add("pam.key_secret", c.PAM.KeySecret)
	}
	if c.Fax != nil {
		add("fax.api_key", c.Fax.APIKey)
	}
	if c.Storage != nil {
		add("storage.secret", c.Storage.Secret)
	}
	if c.Restaurant != nil {
		add("restaurant.client_secret", c.Restaurant.ClientSecret)
	}
	if c.Admin != nil {
		add("admin.token", c.Admin.Token)
	}
	return out
}

// printDemoBanner prints the demo banner, showing each secret only when it is
// new: not in the credentials of the previous start and not one the operator
// gave (known). On every later start a secret is printed as a command
// substitution that reads it from the credentials file, creds being the
// command that prints one value of it (`/abs/bin/apistack creds --data-dir
// /abs/data`, see credsCommandLine): each line still works when pasted, and
// a start's output (a terminal's scroll-back, a CI log) does not repeat
// every secret.
func printDemoBanner(w io.Writer, path string, creds, previous demoCredentials, credsCmd string, known ...string) {
	var buf bytes.Buffer
	printDemo(&buf, path, creds)
	hidden := map[string]bool{}
	for _, v := range known {
		hidden[v] = true
	}
	for _, s := range secretsOf(previous) {
		hidden[s.value] = true
	}
	var pairs []string
	for _, s := range secretsOf(creds) {
		if hidden[s.value] {
			// Every secret of the banner stands between single quotes: close
			// them, substitute the command's output in double quotes (a
			// secret holds no shell syntax, but its reader's path may), and
			// open them again.
			pairs = append(pairs, s.value, `'"$(`+credsCmd+" "+s.path+`)"'`)
		}
	}
	banner := buf.String()
	if len(pairs) > 0 {
		banner = strings.NewReplacer(pairs...).Replace(banner)
		// A secret at the end or start of its quotes leaves an empty ''
		// beside the substitution: drop it.
		banner = strings.NewReplacer(`)"''`, `)"`, `''"$(`, `"$(`).Replace(banner)
		first, rest, _ := strings.Cut(banner, "\n")
		banner = first + "\n" + fmt.Sprintf("secrets are shown once, when created; below, each is read from %s by `%s SECTION.KEY`\n", path, credsCmd) + rest
	}
	fmt.Fprint(w, banner)
}

// credsCommandLine is the shell command that prints one value of the
// credentials file in dataDir: this binary's absolute path and the
// directory's, so a banner line works pasted from any directory and without
// apistack on PATH. Where the binary's path is unknown it is "apistack".
func credsCommandLine(dataDir string) string {
	bin := "apistack"
	if exe, err := os.Executable(); err == nil {
		bin = exe
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	return shellQuote(bin) + " creds --data-dir " + shellQuote(dataDir)
}

// shellQuote quotes s for a POSIX shell when it holds anything but the
// characters a path usually has.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/.:@%+=,-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readTokenFile reads a secret from a file, without its surrounding white
// space (the newline an editor or echo leaves).
func readTokenFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--admin-token-file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("--admin-token-file %s is empty", path)
	}
	return token, nil
}
