package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/apistack/apistack/gen/adminapi"
)

const adminUsage = `usage: apistack admin [--admin-url URL] [--admin-token TOKEN] <command> [args]

commands:
  create-team NAME                          create a PAM team
  get-team NAME                             show a PAM team
  disable-team NAME | enable-team NAME      disable or enable a PAM team
  create-service-user [--key-expires D] TEAM USER GROUP [ROLE,ROLE...]
                                            create a PAM service user with one key in GROUP
  create-user TEAM NAME                     create a PAM human user (end_user implicitly)
  quotas [--groups N] [--service-users N] [--keys-per-service-user N] TEAM
                                            show a PAM team's quotas, or set them
  maintenance [on|off]                      show or switch PAM maintenance mode (503 service_offline)
  fax-create-account NAME                   create a fax account with its first API key
  fax-create-key ACCOUNT [REPLACED_KEY_ID]  issue a fax API key (rotate: revoke REPLACED_KEY_ID with it)
  fax-revoke-key ACCOUNT KEY_ID             revoke a fax API key
  fax-set-number ACCOUNT NUMBER [APP_ID]    give NUMBER (E.164) to ACCOUNT, enabled on APP_ID
  fax-inject [--outcome O] FROM TO FILE.pdf inject an inbound fax (O: received, partial, failed)
  fax-webhook-key                           print the fax webhook public key (base64 Ed25519)
  fax-webhook-stats                         count fax webhook events by fate
  storage-create-bucket [--versioned] [--account A] NAME
                                            create a storage bucket of account A (default "default")
  storage-list-buckets                      list the storage buckets
  storage-set-versioning BUCKET Enabled|Suspended
                                            enable or suspend a bucket's versioning
  storage-delete-bucket NAME                delete a bucket and its lifecycle configuration
  storage-create-key [--account A] [DESCRIPTION]
                                            issue a storage access key of account A (the secret is shown once)
  storage-list-keys                         list the storage access keys
  storage-delete-key KEY_ID                 delete a storage access key
  restaurant-create NAME [GUID]             create a restaurant
  restaurant-get GUID                       show a restaurant and its entity counts
  restaurant-create-client NAME GUID[,GUID] create an API client granted those restaurants
  restaurant-import GUID FILE.json          import a configuration document (all or nothing)
  restaurant-demo GUID MENU_ITEMS           import a generated demo configuration
  restaurant-archive GUID RESOURCE ENTITY   archive an entity (e.g. RESOURCE menuItems)
  restaurant-remove GUID RESOURCE ENTITY    remove an entity

The URL and token default to APISTACK_ADMIN_URL and APISTACK_ADMIN_TOKEN, then to
the admin section of <data-dir>/demo-credentials.json.
`

// adminCommand runs one admin API call through the generated client and
// prints the JSON answer.
func adminCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("admin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("admin-url", "", "admin API base URL")
	token := fs.String("admin-token", "", "admin API token")
	dataDir := fs.String("data-dir", "data", "where demo-credentials.json is")
	fs.Usage = func() { fmt.Fprint(stderr, adminUsage); fs.PrintDefaults() }
	if err := parseFlags(fs, "admin", args); err != nil {
		return err
	}
	if err := flagDefaults(fs); err != nil {
		return err
	}
	if *url == "" || *token == "" {
		creds, err := readCredentials(filepath.Join(*dataDir, "demo-credentials.json"))
		if err != nil {
			return err
		}
		if creds.Admin != nil {
			if *url == "" {
				*url = creds.Admin.BaseURL
			}
			if *token == "" {
				*token = creds.Admin.Token
			}
		}
	}
	if *url == "" {
		*url = "http://127.0.0.1:8089"
	}
	if *token == "" {
		return errors.New("no admin token: set --admin-token or APISTACK_ADMIN_TOKEN, or run `apistack serve --demo` first")
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return errors.New("no admin command given")
	}
	client, err := adminapi.NewClientWithResponses(*url,
		adminapi.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}),
		adminapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+*token)
			return nil
		}))
	if err != nil {
		return err
	}
	cmd, cmdArgs := rest[0], rest[1:]
	var status int
	var body []byte
	switch cmd {
	case "create-team":
		if len(cmdArgs) != 1 {
			return errors.New("usage: create-team NAME")
		}
		r, err := client.CreatePAMTeamWithResponse(ctx, adminapi.CreatePAMTeamJSONRequestBody{Name: cmdArgs[0]})
		if err != nil {
			return err
		}
		status, body = r.StatusCode(), r.Body
	case "get-team":
		if len(cmdArgs) != 1 {
			return errors.New("usage: get-team NAME")
		}
		r, err := client.GetPAMTeamWithResponse(ctx, cmdArgs[0])
		if err != nil {
			return err
		}
		status, body = r.StatusCode(), r.Body
	case "disable-team", "enable-team":
		if len(cmdArgs) != 1 {
			return fmt.Errorf("usage: %s NAME", cmd)
		}
		disabled := cmd == "disable-team"
		r, err := client.UpdatePAMTeamWithResponse(ctx, cmdArgs[0], adminapi.UpdatePAMTeamJSONRequestBody{Disabled: &disabled})
		if err != nil {
			return err
		}
		status, body = r.StatusCode(), r.Body
	case "create-service-user":
		sub := flag.NewFlagSet("create-service-user", flag.ContinueOnError)
		sub.SetOutput(stderr)
		expires := sub.Duration("key-expires", 0, "key lifetime (0: never expires)")
		if err := sub.Parse(cmdArgs); err != nil {
			return err
		}
		a := sub.Args()
		if len(a) < 3 || len(a) > 4 {
			return errors.New("usage: create-service-user [--key-expires D] TEAM USER GROUP [ROLE,ROLE...]")
		}
		req := adminapi.BootstrapPAMServiceUserJSONRequestBody{Name: a[1], Group: a[2], Roles: []adminapi.PAMRole{}}
		if len(a) == 4 && a[3] != "" {
			for _, r := range strings.Split(a[3], ",") {
				req.Roles = append(req.Roles, adminapi.PAMRole(strings.TrimSpace(r)))
			}
		}
		if *expires > 0 {
			secs := int(expires.Seconds())
			req.KeyExpiresInSeconds = &secs
		}
		r, err := client.BootstrapPAMServiceUserWithResponse(ctx, a[0], req)
		if err != nil {
			return err
		}
		status, body = r.StatusCode(), r.Body
	case "fax-create-account", "fax-create-key", "fax-revoke-key", "fax-set-number", "fax-inject", "fax-webhook-key", "fax-webhook-stats":
		if status, body, err = faxAdminCommand(ctx, client, cmd, cmdArgs, stderr); err != nil {
			return err
		}
	case "storage-create-bucket", "storage-list-buckets", "storage-set-versioning", "storage-delete-bucket",
		"storage-create-key", "storage-list-keys", "storage-delete-key":
		if status, body, err = storageAdminCommand(ctx, client, cmd, cmdArgs, stderr); err != nil {
			return err
		}
	case "create-user", "quotas", "maintenance":
		if status, body, err = pamAdminCommand(ctx, client, cmd, cmdArgs, stderr); err != nil {
			return err
		}
	case "restaurant-create", "restaurant-get", "restaurant-create-client", "restaurant-import",
		"restaurant-demo", "restaurant-archive", "restaurant-remove":
		if status, body, err = restaurantAdminCommand(ctx, client, cmd, cmdArgs); err != nil {
			return err
		}
	default:
		fs.Usage()
		return fmt.Errorf("unknown admin command %q", cmd)
	}
	return printAnswer(stdout, status, body)
}

// printAnswer prints the JSON body indented, and fails on an error status.
func printAnswer(w io.Writer, status int, body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		out, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(w, string(out))
	} else if len(body) > 0 {
		fmt.Fprintln(w, string(body))
	}
	if status >= 300 {
		return fmt.Errorf("admin API answered %d", status)
	}
	return nil
}
