package pam_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/internal/shapetest"
	"github.com/apistack/apistack/clients/pam"
)

// Every schema of the spec the client exposes is a type of the package with
// every property as a field of a compatible type, and every enumeration
// value is a constant; the other schemas say why the client has no type.
func TestOwnTypes_MatchTheSpec(t *testing.T) {
	check(shapetest.Load(t, "pam/openapi.yaml")).Run(t)
}

// check is the client's check against spec.
func check(spec *shapetest.Spec) shapetest.Check {
	return shapetest.Check{
		Spec: spec,
		Types: []shapetest.Type{
			{Schema: "Group", Go: pam.Group{}},
			{Schema: "User", Go: pam.User{}},
			{Schema: "CurrentUser", Go: pam.CurrentUser{}},
			{Schema: "ServiceUser", Go: pam.ServiceUser{}},
			{Schema: "ServiceUserKey", Go: pam.ServiceUserKey{}},
			{Schema: "ServiceUserKeySecret", Go: pam.ServiceUserKeySecret{}},
			{Schema: "RoleInfo", Go: pam.RoleInfo{}},
			{Schema: "Role", Go: pam.Role("")},
			{Schema: "UserKind", Go: pam.UserKind("")},
			{Schema: "UserStatus", Go: pam.UserStatus("")},
			{Schema: "ErrorName", Go: pam.ErrorName("")},
			{Schema: "ErrorCause", Go: pam.Cause{}},
			{Schema: "Error", Go: pam.Error{}, Fields: map[string]string{
				"code": "StatusCode", "error": "Name", "message": "Message", "error_cause": "Causes",
			}},
		},
		Skip: map[string]string{
			"ServiceTokenRequest":         "the client exchanges Config's key for its token itself",
			"ServiceToken":                "the client keeps its token to itself and renews it",
			"GroupList":                   "ListGroups unwraps the page into an iterator of Group",
			"UserList":                    "ListUsers and ListGroupMembers unwrap the page into an iterator of User",
			"ServiceUserList":             "ListServiceUsers unwraps the page into an iterator of ServiceUser",
			"ServiceUserKeyList":          "ListServiceUserKeys unwraps the page into an iterator of ServiceUserKey",
			"RoleList":                    "ListRoles unwraps the page into an iterator of RoleInfo",
			"CreateGroupRequest":          "CreateGroup takes the name and the roles as arguments",
			"UpdateGroupRequest":          "UpdateGroup takes the roles as an argument",
			"AddGroupMemberRequest":       "AddGroupMember takes the user name as an argument",
			"CreateServiceUserRequest":    "CreateServiceUser takes the name as an argument",
			"UpdateServiceUserRequest":    "UpdateServiceUser takes UpdateServiceUserParams",
			"CreateServiceUserKeyRequest": "CreateServiceUserKey takes CreateServiceUserKeyOptions",
		},
	}
}

// Each edit of the spec the client does not follow fails the check, naming
// what is missing: a property, an enumeration value, a schema, null.
func TestOwnTypes_ASpecEditTheClientMissesIsNamed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(s *shapetest.Spec)
		schema string
		want   string
	}{
		{"a property", func(s *shapetest.Spec) {
			s.Schemas["Group"].Properties["created_at"] = &shapetest.Schema{Type: "string", Format: "date-time"}
		}, "Group", `Group.created_at: pam.Group has no field for the property "created_at"`},
		{"a property of a nested schema", func(s *shapetest.Spec) {
			s.Schemas["ErrorCause"].Properties["hint"] = &shapetest.Schema{Type: "string"}
		}, "Error", `Error.error_cause[].hint: pam.Cause has no field for the property "hint"`},
		{"an enumeration value", func(s *shapetest.Spec) {
			s.Schemas["Role"].Enum = append(s.Schemas["Role"].Enum, "auditor")
		}, "Role", `Role: the value "auditor" has no constant of type pam.Role`},
		{"a schema", func(s *shapetest.Spec) {
			s.Schemas["Team"] = &shapetest.Schema{Type: "object", Properties: map[string]*shapetest.Schema{"name": {Type: "string"}}}
		}, "", "schema Team of pam/openapi.yaml has no type in the client"},
		{"null", func(s *shapetest.Spec) {
			s.Schemas["User"].Properties["created_at"].Nullable = true
		}, "User", "User.created_at is nullable, but time.Time cannot hold null"},
		{"a type", func(s *shapetest.Spec) {
			s.Schemas["ServiceUser"].Properties["name"] = &shapetest.Schema{Type: "integer"}
		}, "ServiceUser", "ServiceUser.name is an integer, but its Go type is string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := shapetest.Load(t, "pam/openapi.yaml")
			tc.edit(spec)
			problems, err := check(spec).Problems()
			require.NoError(t, err)
			require.NotEmpty(t, problems[tc.schema], "%v", problems)
			assert.Contains(t, strings.Join(problems[tc.schema], "\n"), tc.want)
		})
	}
}
