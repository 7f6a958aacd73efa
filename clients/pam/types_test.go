package pam_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/gen/pamapi"
)

// The package's own enumeration types hold the spec's values.
func TestOwnTypes_ConstantsAreTheSpecs(t *testing.T) {
	for _, r := range []pam.Role{pam.PAMAdmin, pam.ResourceAdmin, pam.DelegatedResourceAdmin, pam.SecurityAdmin, pam.DelegatedSecurityAdmin, pam.EndUser} {
		assert.True(t, pamapi.Role(r).Valid(), "role %q", r)
	}
	for _, k := range []pam.UserKind{pam.Human, pam.Service} {
		assert.True(t, pamapi.UserKind(k).Valid(), "kind %q", k)
	}
	for _, s := range []pam.UserStatus{pam.Active, pam.Disabled} {
		assert.True(t, pamapi.UserStatus(s).Valid(), "status %q", s)
	}
	for _, n := range []pam.ErrorName{pam.InvalidRequest, pam.AuthenticationError, pam.AuthorizationError, pam.ServerAuthorizationRevoked,
		pam.ForbiddenError, pam.QuotaExceeded, pam.DisabledTeam, pam.ResourceDoesNotExist, pam.ResourceDeprecated,
		pam.ResourceAlreadyExists, pam.UnsupportedContentType, pam.TooManyRequests, pam.ClientClosedConnection,
		pam.UnknownError, pam.ServiceOffline, pam.GatewayTimeout} {
		assert.True(t, pamapi.ErrorName(n).Valid(), "error name %q", n)
	}
}
