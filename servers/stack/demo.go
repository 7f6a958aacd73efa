package stack

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

// Credentials is data/demo-credentials.json. Its keys are a contract:
// scripts and tests read them (DESIGN.md section 5).
type Credentials struct {
	PAM        *PAMCredentials        `json:"pam,omitempty"`
	Restaurant *RestaurantCredentials `json:"restaurant,omitempty"`
	Fax        *FaxCredentials        `json:"fax,omitempty"`
	Storage    *StorageCredentials    `json:"storage,omitempty"`
	Admin      *AdminCredentials      `json:"admin,omitempty"`
}

// PAMCredentials is the pam section of demo-credentials.json.
type PAMCredentials struct {
	BaseURL   string `json:"base_url"`
	Team      string `json:"team"`
	KeyID     string `json:"key_id"`
	KeySecret string `json:"key_secret"`
}

// AdminCredentials is the admin section of demo-credentials.json.
type AdminCredentials struct {
	BaseURL string `json:"base_url"`
	Token   string `json:"token"`
}

// The demo tenant of each API.
const (
	demoTeam        = "demo"
	demoServiceUser = "demo-bot"
	demoGroup       = "demo-admins"
)

// demoServers are the servers the demo bootstrap fills.
type demoServers struct {
	pam        *pam.Server
	restaurant *restaurant.Server
	fax        *fax.Server
	storage    *storage.Server
}

// bootstrapDemo creates the demo tenants when they are missing and returns the
// credentials to write. It is idempotent: credentials from a previous run that
// still work are kept; otherwise a fresh key is issued.
func bootstrapDemo(ctx context.Context, d demoServers, previous Credentials, urls map[string]string, adminToken string, opts DemoOptions) (Credentials, error) {
	creds := Credentials{Admin: &AdminCredentials{BaseURL: urls["admin"], Token: adminToken}}
	pc, err := bootstrapPAMDemo(ctx, d.pam, previous.PAM)
	if err != nil {
		return creds, fmt.Errorf("pam: %w", err)
	}
	pc.BaseURL = urls["pam"]
	creds.PAM = pc
	if d.restaurant != nil {
		rc, err := bootstrapRestaurantDemo(ctx, d.restaurant, previous.Restaurant, opts.RestaurantMenuItems)
		if err != nil {
			return creds, fmt.Errorf("restaurant: %w", err)
		}
		rc.BaseURL = urls["restaurant"]
		creds.Restaurant = rc
	}
	if d.fax != nil {
		webhookURL := opts.FaxWebhookURL
		if webhookURL == "" {
			webhookURL = urls["admin"] + FaxInboxPath
		}
		fc, err := bootstrapFaxDemo(ctx, d.fax, previous.Fax, webhookURL)
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

func bootstrapPAMDemo(ctx context.Context, s *pam.Server, previous *PAMCredentials) (*PAMCredentials, error) {
	if _, err := s.CreateTeam(ctx, demoTeam); err != nil && !errors.Is(err, pam.ErrAlreadyExists) {
		return nil, err
	}
	if _, err := s.SetTeamDisabled(ctx, demoTeam, false); err != nil {
		return nil, err
	}
	if previous != nil && previous.Team == demoTeam && s.KeyWorks(ctx, demoTeam, previous.KeyID, previous.KeySecret) {
		return &PAMCredentials{Team: demoTeam, KeyID: previous.KeyID, KeySecret: previous.KeySecret}, nil
	}
	c, err := s.BootstrapServiceUser(ctx, demoTeam, demoServiceUser, demoGroup, []string{"pam_admin"}, 0)
	if err == nil {
		return &PAMCredentials{Team: demoTeam, KeyID: c.KeyID, KeySecret: c.KeySecret}, nil
	}
	if !errors.Is(err, pam.ErrAlreadyExists) {
		return nil, err
	}
	keyID, secret, _, err := s.IssueKey(ctx, demoTeam, demoServiceUser, 0)
	if err != nil {
		return nil, err
	}
	return &PAMCredentials{Team: demoTeam, KeyID: keyID, KeySecret: secret}, nil
}

// FaxCredentials is the fax section of demo-credentials.json (DESIGN.md
// section 5).
type FaxCredentials struct {
	BaseURL          string `json:"base_url"`
	APIKey           string `json:"api_key"`
	ConnectionID     string `json:"connection_id"`
	From             string `json:"from"`
	WebhookPublicKey string `json:"webhook_public_key"`
}

// The demo fax tenant.
const (
	demoFaxAccount = "demo"
	demoFaxFrom    = "+13125550100"
	// oldDemoFaxWebhookURL is where earlier versions pointed the demo
	// application (nothing listens there); a restart moves it to the inbox.
	oldDemoFaxWebhookURL = "http://127.0.0.1:9/fax-webhooks"
)

// bootstrapFaxDemo creates the demo account, its API key, an application
// with an outbound voice profile and the sending number, keeping whatever a
// previous run created that still works. The application's webhooks go to
// inboxURL, the admin port's webhook inbox; a webhook URL the user set
// (anything but an earlier inbox) is kept.
func bootstrapFaxDemo(ctx context.Context, s *fax.Server, previous *FaxCredentials, inboxURL string) (*FaxCredentials, error) {
	acct, err := s.CreateAccount(ctx, demoFaxAccount)
	if errors.Is(err, fax.ErrAlreadyExists) {
		acct, err = s.AccountByName(ctx, demoFaxAccount)
	}
	if err != nil {
		return nil, err
	}
	out := &FaxCredentials{From: demoFaxFrom, WebhookPublicKey: base64.StdEncoding.EncodeToString(s.WebhookPublicKey())}
	if previous != nil && s.APIKeyWorks(ctx, acct.ID, previous.APIKey) {
		out.APIKey = previous.APIKey
	} else if _, out.APIKey, err = s.IssueAPIKey(ctx, acct.ID); err != nil {
		return nil, err
	}
	if previous != nil && previous.ConnectionID != "" {
		if app, err := s.ApplicationOf(ctx, acct.ID, previous.ConnectionID); err == nil && app.OutboundVoiceProfileID != "" {
			out.ConnectionID = app.ID
			ours := app.WebhookURL == oldDemoFaxWebhookURL || strings.HasSuffix(app.WebhookURL, FaxInboxPath)
			if ours && app.WebhookURL != inboxURL {
				if err := s.SetApplicationWebhookURL(ctx, acct.ID, app.ID, inboxURL); err != nil {
					return nil, err
				}
			}
		}
	}
	if out.ConnectionID == "" {
		profile, err := s.CreateOutboundVoiceProfile(ctx, acct.ID, "demo")
		if err != nil {
			return nil, err
		}
		app, err := s.CreateApplication(ctx, fax.Application{AccountID: acct.ID, Name: "demo", WebhookURL: inboxURL, OutboundVoiceProfileID: profile})
		if err != nil {
			return nil, err
		}
		out.ConnectionID = app.ID
	}
	if err := s.AssignNumber(ctx, acct.ID, demoFaxFrom, out.ConnectionID); err != nil {
		return nil, err
	}
	return out, nil
}

// RestaurantCredentials is the restaurant section of demo-credentials.json.
type RestaurantCredentials struct {
	BaseURL        string `json:"base_url"`
	ClientID       string `json:"client_id"`
	ClientSecret   string `json:"client_secret"`
	RestaurantGUID string `json:"restaurant_guid"`
}

// The demo restaurant has a fixed GUID, so every start finds the same one,
// and enough menu items that pagination shows (pages hold at most 300).
const (
	demoRestaurantGUID      = "7d3e6a1c-5b2f-4c8e-9a41-2f6b8c0d1e37"
	demoRestaurantName      = "Demo Bistro"
	demoRestaurantMenuItems = 500
)

// bootstrapRestaurantDemo creates the demo restaurant with a generated
// configuration (every resource non-empty) and an API client granted it. It
// is idempotent: an existing configuration is left as it is, and credentials
// from a previous run that still work are kept.
func bootstrapRestaurantDemo(ctx context.Context, s *restaurant.Server, previous *RestaurantCredentials, menuItems int) (*RestaurantCredentials, error) {
	if _, err := s.CreateRestaurant(ctx, demoRestaurantGUID, demoRestaurantName); err != nil && !errors.Is(err, restaurant.ErrAlreadyExists) {
		return nil, err
	}
	counts, err := s.Counts(ctx, demoRestaurantGUID)
	if err != nil {
		return nil, err
	}
	if counts["menuItems"] == 0 && menuItems > 0 {
		data, err := json.Marshal(restaurant.Demo(restaurant.DemoOptions{MenuItems: menuItems, Seed: 1}))
		if err != nil {
			return nil, err
		}
		if _, err := s.Import(ctx, demoRestaurantGUID, data); err != nil {
			return nil, fmt.Errorf("import the demo configuration: %w", err)
		}
	}
	if previous != nil && previous.RestaurantGUID == demoRestaurantGUID &&
		s.ClientWorks(ctx, previous.ClientID, previous.ClientSecret, demoRestaurantGUID) {
		return &RestaurantCredentials{ClientID: previous.ClientID, ClientSecret: previous.ClientSecret, RestaurantGUID: demoRestaurantGUID}, nil
	}
	c, err := s.CreateClient(ctx, "demo", []string{demoRestaurantGUID})
	if err != nil {
		return nil, err
	}
	return &RestaurantCredentials{ClientID: c.ClientID, ClientSecret: c.ClientSecret, RestaurantGUID: demoRestaurantGUID}, nil
}

// StorageCredentials is the storage section of demo-credentials.json.
type StorageCredentials struct {
	Endpoint        string `json:"endpoint"`
	Region          string `json:"region"`
	KeyID           string `json:"key_id"`
	Secret          string `json:"secret"`
	Bucket          string `json:"bucket"`
	VersionedBucket string `json:"versioned_bucket"`
}

// The demo buckets: one without versioning (Expiration rules), one versioned
// (NoncurrentVersionExpiration rules).
const (
	demoBucket          = "demo-bucket"
	demoVersionedBucket = "demo-versioned"
)

// bootstrapStorageDemo creates the demo buckets and an access key, all of the
// default account (the one the admin API assigns when none is given). It is
// idempotent: the buckets are created when missing (the versioned one has its
// versioning enabled again if it was suspended), and a key from a previous run
// that still works is kept.
func bootstrapStorageDemo(ctx context.Context, s *storage.Server, previous *StorageCredentials) (*StorageCredentials, error) {
	for _, b := range []struct {
		name       string
		versioning storage.Versioning
	}{{demoBucket, storage.Unversioned}, {demoVersionedBucket, storage.Enabled}} {
		if _, err := s.CreateBucket(ctx, storage.DefaultAccount, b.name, b.versioning); err != nil && !errors.Is(err, storage.ErrAlreadyExists) {
			return nil, err
		}
	}
	if _, err := s.SetVersioning(ctx, demoVersionedBucket, storage.Enabled); err != nil {
		return nil, err
	}
	for _, name := range []string{demoBucket, demoVersionedBucket} {
		b, err := s.Bucket(ctx, name)
		if err != nil {
			return nil, err
		}
		if b.Account != storage.DefaultAccount {
			return nil, fmt.Errorf("storage demo: the bucket %s belongs to the account %q, not %q; delete it or use another data directory",
				name, b.Account, storage.DefaultAccount)
		}
	}
	c := &StorageCredentials{Region: s.Region(), Bucket: demoBucket, VersionedBucket: demoVersionedBucket}
	if previous != nil && s.KeyWorks(ctx, storage.DefaultAccount, previous.KeyID, previous.Secret) {
		c.KeyID, c.Secret = previous.KeyID, previous.Secret
		return c, nil
	}
	k, err := s.CreateKey(ctx, storage.DefaultAccount, "demo")
	if err != nil {
		return nil, err
	}
	c.KeyID, c.Secret = k.KeyID, k.Secret
	return c, nil
}
