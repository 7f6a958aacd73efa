package pam_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/apistack/apistack/clients/pam"
	pamserver "github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

// startServer runs a PAM server with one team and a service-user key, as
// `apistack serve --demo` would, and returns its URL and the key.
func startServer() (url string, key pamserver.ServiceUserCredentials, stop func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "pam-example")
	if err != nil {
		log.Fatal(err)
	}
	env, closeEnv, err := pamtest.Open(dir, pamtest.Options{}, func(r *http.Request, status int, err error) {
		log.Fatalf("response %d to %s breaks the spec: %v", status, r.URL, err)
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := env.Operator.CreateTeam(ctx, "demo"); err != nil {
		log.Fatal(err)
	}
	key, err = env.Operator.BootstrapServiceUser(ctx, "demo", "demo-bot", "demo-admins", []string{"pam_admin"}, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"auditors", "operators"} {
		if err := env.Operator.CreateTeamGroup(ctx, "demo", name, []string{"security_admin"}); err != nil {
			log.Fatal(err)
		}
	}
	return env.URL, key, func() { closeEnv(); os.RemoveAll(dir) }
}

func ExampleClient_ListGroups() {
	url, key, stop := startServer()
	defer stop()

	client, err := pam.New(pam.Config{BaseURL: url, Team: "demo", KeyID: key.KeyID, KeySecret: key.KeySecret})
	if err != nil {
		log.Fatal(err)
	}
	// The iterator fetches a token, then follows rel="next" to the last page.
	for g, err := range client.ListGroups(context.Background(), &pam.ListGroupsOptions{PageSize: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(g.Name, g.Roles)
	}
	// Output:
	// auditors [security_admin]
	// demo-admins [pam_admin]
	// operators [security_admin]
}

func ExampleError() {
	url, key, stop := startServer()
	defer stop()

	client, err := pam.New(pam.Config{BaseURL: url, Team: "demo", KeyID: key.KeyID, KeySecret: "not-the-secret"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Token(context.Background())
	var apiErr *pam.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Name)
	}
	// Output:
	// 401 authentication_error
}

func ExampleClient_CreateServiceUserKey() {
	url, key, stop := startServer()
	defer stop()
	ctx := context.Background()

	admin, err := pam.New(pam.Config{BaseURL: url, Team: "demo", KeyID: key.KeyID, KeySecret: key.KeySecret})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := admin.CreateServiceUser(ctx, "deployer"); err != nil {
		log.Fatal(err)
	}
	// Rotation: issue the new key first, switch to it, then delete the old one.
	oldKey, err := admin.CreateServiceUserKey(ctx, "deployer", nil)
	if err != nil {
		log.Fatal(err)
	}
	newKey, err := admin.CreateServiceUserKey(ctx, "deployer", nil)
	if err != nil {
		log.Fatal(err)
	}
	deployer, err := pam.New(pam.Config{BaseURL: url, Team: "demo", KeyID: newKey.ID, KeySecret: newKey.KeySecret})
	if err != nil {
		log.Fatal(err)
	}
	if err := admin.DeleteServiceUserKey(ctx, "deployer", oldKey.ID); err != nil {
		log.Fatal(err)
	}
	me, err := deployer.GetCurrentUser(ctx)
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for _, err := range admin.ListServiceUserKeys(ctx, "deployer", nil) {
		if err != nil {
			log.Fatal(err)
		}
		n++
	}
	fmt.Println(me.Name, me.Kind, "keys:", n)
	// Output:
	// deployer service keys: 1
}

func ExampleClient_AddGroupMember() {
	url, key, stop := startServer()
	defer stop()
	ctx := context.Background()

	client, err := pam.New(pam.Config{BaseURL: url, Team: "demo", KeyID: key.KeyID, KeySecret: key.KeySecret})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.CreateServiceUser(ctx, "auditor-bot"); err != nil {
		log.Fatal(err)
	}
	if err := client.AddGroupMember(ctx, "auditors", "auditor-bot"); err != nil {
		log.Fatal(err)
	}
	for u, err := range client.ListGroupMembers(ctx, "auditors", nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(u.Name, u.Kind, u.Status)
	}
	// A second add is refused with a typed error.
	err = client.AddGroupMember(ctx, "auditors", "auditor-bot")
	fmt.Println(errors.Is(err, &pam.Error{Name: pam.ResourceAlreadyExists}))
	// Output:
	// auditor-bot service active
	// true
}

func ExampleClient_GetCurrentUser() {
	url, key, stop := startServer()
	defer stop()

	client, err := pam.New(pam.Config{BaseURL: url, Team: "demo", KeyID: key.KeyID, KeySecret: key.KeySecret})
	if err != nil {
		log.Fatal(err)
	}
	me, err := client.GetCurrentUser(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(me.Name, me.Kind, me.Roles)
	// Output: demo-bot service [pam_admin]
}
