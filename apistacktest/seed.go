package apistacktest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/apistack/apistack/servers/fax"
	restaurantserver "github.com/apistack/apistack/servers/restaurant"
	storageserver "github.com/apistack/apistack/servers/storage"
)

// The seed helpers fill a stack through the same operator code paths as the
// admin API and `serve --demo`. Each fails the test on an error.

// ServiceUser is a PAM service user's key.
type ServiceUser struct {
	Name, Group, KeyID, KeySecret string
}

// TeamSeed is a seeded PAM team.
type TeamSeed struct {
	// Name is the team's.
	Name string
	// Groups are the groups created, in the order the API lists them.
	Groups []string
	// ServiceUsers are the service users created, each in a group of its
	// own with the roles asked for.
	ServiceUsers []ServiceUser
}

// SeedTeam creates groups groups (named group-0000, …, no roles) and the
// service users named, each in a group <name>-group with roles, in team;
// team "" is the stack's own team (a new team is created otherwise).
func (st *Stack) SeedTeam(t TB, team string, groups int, roles []string, serviceUsers ...string) TeamSeed {
	t.Helper()
	ctx := context.Background()
	if st.remote != nil && team == "" && len(serviceUsers) == 0 {
		return st.seedGroupsRemotely(t, groups)
	}
	if !st.inProcessOnly(t, "SeedTeam (of another team, or with service users)") {
		return TeamSeed{}
	}
	s := st.servers.PAM.Operator()
	if team == "" {
		team = st.Credentials.PAM.Team
	} else if _, err := s.CreateTeam(ctx, team); err != nil {
		t.Fatalf("apistacktest: create team %s: %v", team, err)
	}
	out := TeamSeed{Name: team}
	for i := range groups {
		name := fmt.Sprintf("group-%04d", i)
		if err := s.CreateTeamGroup(ctx, team, name, nil); err != nil {
			t.Fatalf("apistacktest: create group %s: %v", name, err)
		}
		out.Groups = append(out.Groups, name)
	}
	if roles == nil {
		roles = []string{}
	}
	for _, name := range serviceUsers {
		c, err := s.BootstrapServiceUser(ctx, team, name, name+"-group", roles, 0)
		if err != nil {
			t.Fatalf("apistacktest: create service user %s: %v", name, err)
		}
		out.ServiceUsers = append(out.ServiceUsers, ServiceUser{Name: c.UserName, Group: c.Group, KeyID: c.KeyID, KeySecret: c.KeySecret})
	}
	return out
}

// RestaurantSeed is a seeded restaurant and an API client granted it.
type RestaurantSeed struct {
	GUID, ClientID, ClientSecret string
}

// SeedMenu imports a generated, consistent configuration with menuItems menu
// items (and every other resource filled) into the stack's restaurant; seed
// makes it reproducible.
func (st *Stack) SeedMenu(t TB, menuItems int, seed uint64) {
	t.Helper()
	if !st.inProcessOnly(t, "SeedMenu") {
		return
	}
	st.importMenu(t, st.Credentials.Restaurant.RestaurantGUID, menuItems, seed)
}

// SeedRestaurant creates a restaurant named name with a generated menu of
// menuItems items, and an API client granted it.
func (st *Stack) SeedRestaurant(t TB, name string, menuItems int, seed uint64) RestaurantSeed {
	t.Helper()
	if !st.inProcessOnly(t, "SeedRestaurant") {
		return RestaurantSeed{}
	}
	ctx := context.Background()
	s := st.servers.Restaurant.Operator()
	guid := uuid.NewString()
	if _, err := s.CreateRestaurant(ctx, guid, name); err != nil {
		t.Fatalf("apistacktest: create restaurant %s: %v", name, err)
	}
	st.importMenu(t, guid, menuItems, seed)
	c, err := s.CreateClient(ctx, name, []string{guid})
	if err != nil {
		t.Fatalf("apistacktest: create a client of %s: %v", name, err)
	}
	return RestaurantSeed{GUID: guid, ClientID: c.ClientID, ClientSecret: c.ClientSecret}
}

func (st *Stack) importMenu(t TB, guid string, menuItems int, seed uint64) {
	t.Helper()
	doc, err := json.Marshal(restaurantserver.Demo(restaurantserver.DemoOptions{MenuItems: menuItems, Seed: seed}))
	if err != nil {
		t.Fatalf("apistacktest: generate a menu: %v", err)
	}
	if _, err := st.servers.Restaurant.Operator().Import(context.Background(), guid, doc); err != nil {
		t.Fatalf("apistacktest: import a menu: %v", err)
	}
}

// SeedBuckets creates buckets of the stack's storage account (versioned
// ones with versioning enabled).
func (st *Stack) SeedBuckets(t TB, versioned bool, names ...string) {
	t.Helper()
	if !st.inProcessOnly(t, "SeedBuckets") {
		return
	}
	v := storageserver.Unversioned
	if versioned {
		v = storageserver.Enabled
	}
	for _, name := range names {
		if _, err := st.servers.Storage.Operator().CreateBucket(context.Background(), storageserver.DefaultAccount, name, v); err != nil {
			t.Fatalf("apistacktest: create bucket %s: %v", name, err)
		}
	}
}

// FaxAccountSeed is a seeded fax account: an API key, an application (its
// connection id) whose webhooks go to the stack's receiver, and its numbers.
type FaxAccountSeed struct {
	AccountID, APIKey, ConnectionID string
	Numbers                         []string
}

// SeedFaxAccount creates the fax account name with an API key, an
// application and the sending numbers given (E.164, such as +13125550199).
func (st *Stack) SeedFaxAccount(t TB, name string, numbers ...string) FaxAccountSeed {
	t.Helper()
	if !st.inProcessOnly(t, "SeedFaxAccount") {
		return FaxAccountSeed{}
	}
	ctx := context.Background()
	s := st.servers.Fax.Operator()
	acct, err := s.CreateAccount(ctx, name)
	if err != nil {
		t.Fatalf("apistacktest: create fax account %s: %v", name, err)
	}
	out := FaxAccountSeed{AccountID: acct.ID, Numbers: numbers}
	if _, out.APIKey, err = s.IssueAPIKey(ctx, acct.ID); err != nil {
		t.Fatalf("apistacktest: issue a fax API key: %v", err)
	}
	profile, err := s.CreateOutboundVoiceProfile(ctx, acct.ID, name)
	if err != nil {
		t.Fatalf("apistacktest: create a voice profile: %v", err)
	}
	app, err := s.CreateApplication(ctx, fax.Application{AccountID: acct.ID, Name: name, WebhookURL: st.webhookURL, OutboundVoiceProfileID: profile})
	if err != nil {
		t.Fatalf("apistacktest: create a fax application: %v", err)
	}
	out.ConnectionID = app.ID
	st.SeedFaxNumbers(t, acct.ID, app.ID, numbers...)
	return out
}

// SeedFaxNumbers assigns numbers to the application connectionID of the fax
// account accountID ("" and "": the stack's own).
func (st *Stack) SeedFaxNumbers(t TB, accountID, connectionID string, numbers ...string) {
	t.Helper()
	if !st.inProcessOnly(t, "SeedFaxNumbers") {
		return
	}
	ctx := context.Background()
	if accountID == "" {
		acct, err := st.servers.Fax.Operator().AccountByName(ctx, "demo")
		if err != nil {
			t.Fatalf("apistacktest: the stack's fax account: %v", err)
		}
		accountID, connectionID = acct.ID, st.Credentials.Fax.ConnectionID
	}
	for _, n := range numbers {
		if err := st.servers.Fax.Operator().AssignNumber(ctx, accountID, n, connectionID); err != nil {
			t.Fatalf("apistacktest: assign %s: %v", n, err)
		}
	}
}

// seedGroupsRemotely creates groups groups in the connected stack's team
// through the PAM API, named as SeedTeam names them.
func (st *Stack) seedGroupsRemotely(t TB, groups int) TeamSeed {
	t.Helper()
	out := TeamSeed{Name: st.Credentials.PAM.Team}
	for i := range groups {
		name := fmt.Sprintf("group-%04d", i)
		if _, err := st.PAM.CreateGroup(context.Background(), name); err != nil {
			t.Fatalf("apistacktest: create group %s: %v", name, err)
		}
		out.Groups = append(out.Groups, name)
	}
	return out
}
