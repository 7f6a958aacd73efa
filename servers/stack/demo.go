package stack

import (
	"encoding/json"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

// Credentials is data/demo-credentials.json: a section per API, named
// after the API, each the credentials of one tenant set (Stack.Seed). Its
// keys are a contract: scripts and tests read them (DESIGN.md section 5).
type Credentials struct {
	PAM        *PAMCredentials        `json:"pam,omitempty"`
	Restaurant *RestaurantCredentials `json:"restaurant,omitempty"`
	Fax        *FaxCredentials        `json:"fax,omitempty"`
	Storage    *StorageCredentials    `json:"storage,omitempty"`
	Admin      *AdminCredentials      `json:"admin,omitempty"`
	Sandboxes  *SandboxCredentials    `json:"sandboxes,omitempty"`
}

// The sections of demo-credentials.json, declared by their APIs.
type (
	PAMCredentials        = pam.DemoCredentials
	RestaurantCredentials = restaurant.DemoCredentials
	FaxCredentials        = fax.DemoCredentials
	StorageCredentials    = storage.DemoCredentials
)

// AdminCredentials is the admin section of demo-credentials.json.
type AdminCredentials struct {
	BaseURL string `json:"base_url"`
	Token   string `json:"token"`
}

// Endpoint returns the section's base URL and token, or "" for a missing
// section.
func (c *AdminCredentials) Endpoint() (url, token string) {
	if c == nil {
		return "", ""
	}
	return c.BaseURL, c.Token
}

// SandboxCredentials is the sandboxes section of demo-credentials.json: the
// sandbox API's base URL (the admin port; its paths start with
// /sandboxes) and the sandbox-creator token, which may create sandboxes
// and do nothing else.
type SandboxCredentials AdminCredentials

// Endpoint returns the section's base URL and token, or "" for a missing
// section.
func (c *SandboxCredentials) Endpoint() (url, token string) { return (*AdminCredentials)(c).Endpoint() }

// sections are c's sections by API name, each as its JSON.
func sections(c Credentials) (map[string]json.RawMessage, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	return out, json.Unmarshal(data, &out)
}
