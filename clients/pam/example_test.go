package pam_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/internal/examplestack"
)

// startServer runs a PAM server with team "demo", a pam_admin service-user
// key and the groups auditors and operators, as `apistack serve --demo`
// would, in a process of its own (internal/examplestack).
func startServer() *examplestack.Env {
	env, err := examplestack.Start("pam")
	if err != nil {
		log.Fatal(err)
	}
	return env
}

func ExampleClient_ListGroups() {
	env := startServer()
	defer env.Stop()

	client, err := pam.New(pam.Config{BaseURL: env.URL, Team: "demo", KeyID: env.KeyID, KeySecret: env.KeySecret})
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
	env := startServer()
	defer env.Stop()

	client, err := pam.New(pam.Config{BaseURL: env.URL, Team: "demo", KeyID: env.KeyID, KeySecret: "not-the-secret"})
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
	env := startServer()
	defer env.Stop()
	ctx := context.Background()

	admin, err := pam.New(pam.Config{BaseURL: env.URL, Team: "demo", KeyID: env.KeyID, KeySecret: env.KeySecret})
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
	deployer, err := pam.New(pam.Config{BaseURL: env.URL, Team: "demo", KeyID: newKey.ID, KeySecret: newKey.KeySecret})
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
	env := startServer()
	defer env.Stop()
	ctx := context.Background()

	client, err := pam.New(pam.Config{BaseURL: env.URL, Team: "demo", KeyID: env.KeyID, KeySecret: env.KeySecret})
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
	env := startServer()
	defer env.Stop()

	client, err := pam.New(pam.Config{BaseURL: env.URL, Team: "demo", KeyID: env.KeyID, KeySecret: env.KeySecret})
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

// ExampleClient_CreateGroup walks a group through its life: create, change
// its roles, read, delete. Deleting is soft: the group still reads, with
// DeletedAt set.
func ExampleClient_CreateGroup() {
	env := startServer()
	defer env.Stop()
	ctx := context.Background()

	client, err := pam.New(pam.Config{BaseURL: env.URL, Team: "demo", KeyID: env.KeyID, KeySecret: env.KeySecret})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.CreateGroup(ctx, "on-call", pam.SecurityAdmin); err != nil {
		log.Fatal(err)
	}
	if err := client.UpdateGroup(ctx, "on-call", pam.SecurityAdmin, pam.ResourceAdmin); err != nil {
		log.Fatal(err)
	}
	g, err := client.GetGroup(ctx, "on-call")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Name, g.Roles)
	if err := client.DeleteGroup(ctx, "on-call"); err != nil {
		log.Fatal(err)
	}
	g, err = client.GetGroup(ctx, "on-call")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted:", g.DeletedAt != nil)
	// Output:
	// on-call [resource_admin security_admin]
	// deleted: true
}
