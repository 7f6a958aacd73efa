package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apistack/apistack/servers/console"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

// demoCredentials is data/demo-credentials.json. Its keys are a contract:
// scripts and tests read them (DESIGN.md section 5).
type demoCredentials struct {
	PAM        *pamCredentials        `json:"pam,omitempty"`
	Restaurant *restaurantCredentials `json:"restaurant,omitempty"`
	Fax        *faxCredentials        `json:"fax,omitempty"`
	Storage    *storageCredentials    `json:"storage,omitempty"`
	Admin      *adminCredentials      `json:"admin,omitempty"`
}

type pamCredentials struct {
	BaseURL   string `json:"base_url"`
	Team      string `json:"team"`
	KeyID     string `json:"key_id"`
	KeySecret string `json:"key_secret"`
}

type adminCredentials struct {
	BaseURL string `json:"base_url"`
	Token   string `json:"token"`
}

// The demo tenant of each API.
const (
	demoTeam        = "demo"
	demoServiceUser = "demo-bot"
	demoGroup       = "demo-admins"
)

// demoDeps are the servers the demo bootstrap fills.
type demoDeps struct {
	pam        *pam.Server
	restaurant *restaurant.Server
	fax        *fax.Server
	storage    *storage.Server
}

// bootstrapDemo creates the demo tenants when they are missing and returns the
// credentials to write. It is idempotent: credentials from a previous run that
// still work are kept; otherwise a fresh key is issued.
func bootstrapDemo(ctx context.Context, d demoDeps, previous demoCredentials, urls map[string]string, adminToken string) (demoCredentials, error) {
	creds := demoCredentials{Admin: &adminCredentials{BaseURL: urls["admin"], Token: adminToken}}
	pc, err := bootstrapPAMDemo(ctx, d.pam, previous.PAM)
	if err != nil {
		return creds, fmt.Errorf("pam: %w", err)
	}
	pc.BaseURL = urls["pam"]
	creds.PAM = pc
	if d.restaurant != nil {
		rc, err := bootstrapRestaurantDemo(ctx, d.restaurant, previous.Restaurant)
		if err != nil {
			return creds, fmt.Errorf("restaurant: %w", err)
		}
		rc.BaseURL = urls["restaurant"]
		creds.Restaurant = rc
	}
	if d.fax != nil {
		fc, err := bootstrapFaxDemo(ctx, d.fax, previous.Fax, urls["admin"]+faxInboxPath)
		if err != nil {
			return creds, fmt.Errorf("fax: %w", err)
		}
		fc.BaseURL = urls["fax"]
		creds.Fax = fc
	}
	if d.storage != nil {
		sc, err := bootstrapStorageDemo(ctx, d.storage, previous.Storage)
		if err != nil {
			return creds, fmt.Errorf("storage: %w", err)
		}
		sc.Endpoint = urls["storage"]
		creds.Storage = sc
	}
	return creds, nil
}

func bootstrapPAMDemo(ctx context.Context, s *pam.Server, previous *pamCredentials) (*pamCredentials, error) {
	if _, err := s.CreateTeam(ctx, demoTeam); err != nil && !errors.Is(err, pam.ErrAlreadyExists) {
		return nil, err
	}
	if _, err := s.SetTeamDisabled(ctx, demoTeam, false); err != nil {
		return nil, err
	}
	if previous != nil && previous.Team == demoTeam && s.KeyWorks(ctx, demoTeam, previous.KeyID, previous.KeySecret) {
		return &pamCredentials{Team: demoTeam, KeyID: previous.KeyID, KeySecret: previous.KeySecret}, nil
	}
	c, err := s.BootstrapServiceUser(ctx, demoTeam, demoServiceUser, demoGroup, []string{"pam_admin"}, 0)
	if err == nil {
		return &pamCredentials{Team: demoTeam, KeyID: c.KeyID, KeySecret: c.KeySecret}, nil
	}
	if !errors.Is(err, pam.ErrAlreadyExists) {
		return nil, err
	}
	keyID, secret, _, err := s.IssueKey(ctx, demoTeam, demoServiceUser, 0)
	if err != nil {
		return nil, err
	}
	return &pamCredentials{Team: demoTeam, KeyID: keyID, KeySecret: secret}, nil
}

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
	printStorageDemo(w, c.Storage)
	if a := c.Admin; a != nil {
		fmt.Fprintf(w, "admin      %s  (docs: %s/docs/)\n", a.BaseURL, a.BaseURL)
		fmt.Fprintf(w, "  teams:   curl -s %s/pam/teams/demo -H 'Authorization: Bearer %s'\n", a.BaseURL, a.Token)
		fmt.Fprintf(w, "console    %s%s  (web console: log in with the admin token, admin.token in %s)\n", a.BaseURL, console.Prefix, path)
	}
	fmt.Fprintln(w)
}
