package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
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
// gave (known). A secret shown once is replaced by <section.key> on every
// later start, and the banner points to the file that holds it, so a start's
// output (a terminal's scroll-back, a CI log) does not repeat every secret.
func printDemoBanner(w io.Writer, path string, creds, previous demoCredentials, known ...string) {
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
			pairs = append(pairs, s.value, "<"+s.path+">")
		}
	}
	banner := buf.String()
	if len(pairs) > 0 {
		banner = strings.NewReplacer(pairs...).Replace(banner)
		first, rest, _ := strings.Cut(banner, "\n")
		banner = first + "\n" + fmt.Sprintf("secrets are shown once, when created; below, <section.key> stands for a secret in %s\n", path) + rest
	}
	fmt.Fprint(w, banner)
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
