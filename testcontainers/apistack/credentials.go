package apistack

import "encoding/json"

// Credentials are the sections of apistack's demo-credentials.json (a
// sandbox's credentials have the same sections but admin and sandboxes).
// Their keys are apistack's contract with scripts and tests.
type Credentials struct {
	PAM        PAMCredentials        `json:"pam"`
	Fax        FaxCredentials        `json:"fax"`
	Storage    StorageCredentials    `json:"storage"`
	Restaurant RestaurantCredentials `json:"restaurant"`
	// Admin is the admin API's URL and token (also the web console's
	// login and the sandbox API's admin token); empty in a sandbox's.
	Admin AdminCredentials `json:"admin"`
	// Sandboxes is the sandbox API's URL and its sandbox-creator token;
	// empty in a sandbox's.
	Sandboxes AdminCredentials `json:"sandboxes"`
}

// PAMCredentials are a PAM team's service-user key.
type PAMCredentials struct {
	BaseURL   string `json:"base_url"`
	Team      string `json:"team"`
	KeyID     string `json:"key_id"`
	KeySecret string `json:"key_secret"`
}

// FaxCredentials are a fax account's API key, its application
// (connection) and sending number, and the key its webhooks are signed
// with.
type FaxCredentials struct {
	BaseURL          string `json:"base_url"`
	APIKey           string `json:"api_key"`
	ConnectionID     string `json:"connection_id"`
	From             string `json:"from"`
	WebhookPublicKey string `json:"webhook_public_key"`
}

// StorageCredentials are an object-storage account's access key and its
// two buckets (one versioned).
type StorageCredentials struct {
	Endpoint        string `json:"endpoint"`
	Region          string `json:"region"`
	KeyID           string `json:"key_id"`
	Secret          string `json:"secret"`
	Bucket          string `json:"bucket"`
	VersionedBucket string `json:"versioned_bucket"`
}

// RestaurantCredentials are a restaurant client's OAuth client
// credentials and its restaurant.
type RestaurantCredentials struct {
	BaseURL        string `json:"base_url"`
	ClientID       string `json:"client_id"`
	ClientSecret   string `json:"client_secret"`
	RestaurantGUID string `json:"restaurant_guid"`
}

// AdminCredentials are a base URL and a bearer token.
type AdminCredentials struct {
	BaseURL string `json:"base_url"`
	Token   string `json:"token"`
}

// Sandbox is a sandbox the container's stack made (WithFixture): its
// token (for the sandbox API: its journal, clock, faults, snapshots), its
// tenants' credentials and those its fixture named.
type Sandbox struct {
	ID    string `json:"id"`
	Token string `json:"token"`
	// Credentials are the sandbox's tenants, their URLs on the host.
	Credentials Credentials `json:"credentials"`
	// FixtureCredentials are the credentials the fixture created, by API
	// then as the sandbox API's fixture_credentials names them (PAM keys,
	// fax API keys, applications and numbers, storage buckets and keys).
	FixtureCredentials map[string]json.RawMessage `json:"fixture_credentials"`
}
