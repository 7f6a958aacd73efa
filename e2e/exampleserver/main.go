// Command exampleserver serves one API for the clients' runnable examples,
// in a process of its own (internal/examplestack starts it): it
// prints what the examples need as one JSON line (examplestack.Env), serves
// until its standard input closes, then stops and removes its data.
//
//	exampleserver pam|restaurant|storage
//	exampleserver fax WEBHOOK_URL
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/apistack/apistack/e2e/faxenv"
	"github.com/apistack/apistack/internal/examplestack"
	"github.com/apistack/apistack/servers/pam/pamtest"
	"github.com/apistack/apistack/servers/restaurant/restauranttest"
	storageserver "github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "exampleserver:", err)
		os.Exit(1)
	}
}

// violation ends the server when an answer breaks its spec: the example
// calling it then fails.
func violation(r *http.Request, status int, err error) {
	fmt.Fprintf(os.Stderr, "exampleserver: response %d to %s breaks the spec: %v\n", status, r.URL, err)
	os.Exit(1)
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: exampleserver pam|restaurant|storage|fax [WEBHOOK_URL]")
	}
	dir, err := os.MkdirTemp("", "exampleserver-"+args[0])
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env, stop, err := start(args[0], args[1:], dir)
	if err != nil {
		return err
	}
	defer stop()
	if err := json.NewEncoder(os.Stdout).Encode(env); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

func start(api string, args []string, dir string) (*examplestack.Env, func(), error) {
	ctx := context.Background()
	switch api {
	case "pam":
		// One team with a pam_admin key and two more groups, as
		// `apistack serve --demo` would.
		env, stop, err := pamtest.Open(dir, pamtest.Options{}, violation)
		if err != nil {
			return nil, nil, err
		}
		if _, err = env.Operator.CreateTeam(ctx, "demo"); err != nil {
			stop()
			return nil, nil, err
		}
		key, err := env.Operator.BootstrapServiceUser(ctx, "demo", "demo-bot", "demo-admins", []string{"pam_admin"}, 0)
		if err != nil {
			stop()
			return nil, nil, err
		}
		for _, name := range []string{"auditors", "operators"} {
			if err := env.Operator.CreateTeamGroup(ctx, "demo", name, []string{"security_admin"}); err != nil {
				stop()
				return nil, nil, err
			}
		}
		return &examplestack.Env{URL: env.URL, KeyID: key.KeyID, KeySecret: key.KeySecret}, stop, nil
	case "restaurant":
		// A 400-item demo configuration.
		env, stop, err := restauranttest.Open(dir, restauranttest.Options{}, violation)
		if err != nil {
			return nil, nil, err
		}
		if _, err := env.ImportDemoErr(400); err != nil {
			stop()
			return nil, nil, err
		}
		return &examplestack.Env{URL: env.URL, ClientID: env.ClientID, ClientSecret: env.ClientSecret, Restaurant: env.Restaurant}, stop, nil
	case "storage":
		// A plain bucket, a versioned bucket and an access key.
		env, stop, err := storagetest.Open(dir, storagetest.Options{}, violation)
		if err != nil {
			return nil, nil, err
		}
		return &examplestack.Env{URL: env.URL, KeyID: env.Key.KeyID, KeySecret: env.Key.Secret, Region: storageserver.DefaultRegion,
			Bucket: storagetest.Bucket, VersionedBucket: storagetest.VersionedBucket}, stop, nil
	case "fax":
		if len(args) != 1 {
			return nil, nil, fmt.Errorf("fax needs the webhook URL")
		}
		svc, err := faxenv.Start(args[0])
		if err != nil {
			return nil, nil, err
		}
		return &examplestack.Env{URL: svc.URL, APIKey: svc.APIKey, ConnectionID: svc.ConnectionID, From: svc.From, DocURL: svc.DocURL,
			WebhookPublicKey: svc.Server.Operator().WebhookPublicKey()}, svc.Stop, nil
	}
	return nil, nil, fmt.Errorf("unknown API %q", api)
}
