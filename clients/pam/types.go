package pam

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// The client's own types: the wire fields under Go names, so neither the
// generator's naming (Id, KeyId) nor a generator upgrade becomes this
// package's API.

// Group is a PAM group.
type Group struct {
	// ID is the group's id; Name is unique among the team's live groups.
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
	// Roles are the roles the group grants its members.
	Roles []Role `json:"roles"`
	// DeletedAt is set once the group is (soft-)deleted.
	DeletedAt *time.Time `json:"deleted_at"`
}

// RoleInfo is a role with what it allows.
type RoleInfo struct {
	Name        Role   `json:"name"`
	Description string `json:"description"`
}

// User is a user of the team, human or service.
type User struct {
	ID        uuid.UUID  `json:"id"`
	Name      string     `json:"name"`
	Kind      UserKind   `json:"kind"`
	Status    UserStatus `json:"status"`
	CreatedAt time.Time  `json:"created_at"`
}

// CurrentUser is the caller, with its effective roles (the union of the roles
// of its live groups).
type CurrentUser struct {
	ID        uuid.UUID  `json:"id"`
	Name      string     `json:"name"`
	TeamName  string     `json:"team_name"`
	Kind      UserKind   `json:"kind"`
	Status    UserStatus `json:"status"`
	Roles     []Role     `json:"roles"`
	CreatedAt time.Time  `json:"created_at"`
}

// ServiceUser is a machine user that authenticates with API keys.
type ServiceUser struct {
	ID        uuid.UUID  `json:"id"`
	Name      string     `json:"name"`
	Status    UserStatus `json:"status"`
	CreatedAt time.Time  `json:"created_at"`
}

// ServiceUserKey is a service user's API key, without its secret.
type ServiceUserKey struct {
	// ID is the key id (the KeyID of Config).
	ID        string     `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// ServiceUserKeySecret is a new key with its secret, shown once.
type ServiceUserKeySecret struct {
	// ID is the key id (the KeyID of Config); KeySecret its secret.
	ID        string     `json:"id"`
	KeySecret string     `json:"key_secret"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// decode reads a success answer's body into the client's own type.
func decode[T any](body []byte) (*T, error) {
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("pam: decode answer: %w", err)
	}
	return &v, nil
}
