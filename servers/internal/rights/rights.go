// Package rights reads who may call each operation of an API from its
// OpenAPI spec, into a table that one authorization middleware per server
// looks up by operation id.
//
// A spec declares its role table on its security scheme, as the extension
// x-apistack-roles mapping each role to what it is for:
//
//	components:
//	  securitySchemes:
//	    bearerAuth:
//	      type: http
//	      scheme: bearer
//	      x-apistack-roles:
//	        pam_admin: Administers groups, users, service users and keys.
//	        end_user: Views what policies grant it.
//
// and every operation that needs credentials lists the roles that may call
// it, under the same extension:
//
//	x-apistack-roles: [pam_admin, security_admin]
//
// or, alone in the list, the keyword Authenticated: any caller whose
// credentials the API accepts, holding a role or none. An operation whose
// security is empty (`security: []`) is open to everyone and must not carry
// the extension. FromSpec refuses a spec that breaks these rules, so a
// server built from it does not start.
package rights

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Extension is the name of the spec extension that holds the role table (on
// a security scheme) and an operation's allowed roles.
const Extension = "x-apistack-roles"

// Authenticated is the keyword that, alone in an operation's list, allows
// every authenticated caller, with or without a role.
const Authenticated = "authenticated"

// Set is a set of a Table's roles, one bit each. Every authenticated
// caller's set holds the Authenticated bit besides its roles' bits.
type Set uint64

// authenticatedBit is the Authenticated keyword's bit: the highest, so the
// roles take the low bits in the order of the table.
const authenticatedBit Set = 1 << 63

// maxRoles is how many roles a table may hold beside the keyword.
const maxRoles = 63

// Rule is who may call one operation.
type Rule struct {
	// Open reports an operation without security: anyone may call it.
	Open bool
	// Allowed are the roles that may call it (with the Authenticated bit
	// when any authenticated caller may).
	Allowed Set
	// Names are the spec's list, as written.
	Names []string
}

// Table is the rights of one API: its roles and, per operation id, who may
// call the operation. It is read-only once built; safe for concurrent use.
type Table struct {
	roles []string
	bit   map[string]Set
	ops   map[string]Rule
}

// FromSpec builds the table of doc: the role tables of its security schemes
// and the x-apistack-roles of each operation. It fails naming every
// operation that lacks the extension, lists an unknown role, mixes the
// keyword with roles, or carries it without needing credentials.
func FromSpec(doc *openapi3.T) (*Table, error) {
	t := &Table{bit: map[string]Set{}, ops: map[string]Rule{}}
	if doc.Components != nil {
		names := make([]string, 0, len(doc.Components.SecuritySchemes))
		for name := range doc.Components.SecuritySchemes {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			ref := doc.Components.SecuritySchemes[name]
			if ref == nil || ref.Value == nil {
				continue
			}
			roles, err := roleTable(ref.Value.Extensions[Extension])
			if err != nil {
				return nil, fmt.Errorf("rights: security scheme %s: %w", name, err)
			}
			for _, r := range roles {
				if _, dup := t.bit[r]; dup {
					continue
				}
				if len(t.roles) == maxRoles {
					return nil, fmt.Errorf("rights: more than %d roles", maxRoles)
				}
				t.bit[r] = 1 << len(t.roles)
				t.roles = append(t.roles, r)
			}
		}
	}
	var errs []error
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := fmt.Sprintf("%s %s (%s)", method, path, op.OperationID)
			if op.OperationID == "" {
				errs = append(errs, fmt.Errorf("rights: %s has no operationId", where))
				continue
			}
			rule, err := t.ruleOf(doc, op)
			if err != nil {
				errs = append(errs, fmt.Errorf("rights: %s: %w", where, err))
				continue
			}
			t.ops[op.OperationID] = rule
		}
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// roleTable reads a security scheme's role table: a map of role to its
// description (none is fine: not every scheme has roles).
func roleTable(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must map each role to its description, not %T", Extension, v)
	}
	roles := make([]string, 0, len(m))
	for r := range m {
		if r == Authenticated {
			return nil, fmt.Errorf("%q is the keyword for any authenticated caller, not a role", r)
		}
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles, nil
}

// ruleOf reads one operation's rule.
func (t *Table) ruleOf(doc *openapi3.T, op *openapi3.Operation) (Rule, error) {
	security := doc.Security
	if op.Security != nil {
		security = *op.Security
	}
	v, has := op.Extensions[Extension]
	if len(security) == 0 {
		if has {
			return Rule{}, fmt.Errorf("needs no credentials, so it must not carry %s", Extension)
		}
		return Rule{Open: true}, nil
	}
	if !has {
		return Rule{}, fmt.Errorf("needs credentials but does not say who may call it: add %s (roles of the role table, or [%s])", Extension, Authenticated)
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return Rule{}, fmt.Errorf("%s must be a non-empty list of roles", Extension)
	}
	rule := Rule{Names: make([]string, 0, len(list))}
	for _, item := range list {
		name, ok := item.(string)
		if !ok {
			return Rule{}, fmt.Errorf("%s lists %v, not a role name", Extension, item)
		}
		switch bit, known := t.bit[name]; {
		case name == Authenticated:
			if len(list) > 1 {
				return Rule{}, fmt.Errorf("%s: %q stands alone (it already allows every role)", Extension, Authenticated)
			}
			rule.Allowed |= authenticatedBit
		case !known:
			return Rule{}, fmt.Errorf("%s lists %q, which is not a role of the role table (%s)", Extension, name, strings.Join(t.roles, ", "))
		default:
			rule.Allowed |= bit
		}
		rule.Names = append(rule.Names, name)
	}
	return rule, nil
}

// Roles are the roles of the table, in its order.
func (t *Table) Roles() []string { return slices.Clone(t.roles) }

// Caller is the set of a caller holding roles (names not in the table are
// ignored); it holds the Authenticated bit.
func (t *Table) Caller(roles ...string) Set {
	s := authenticatedBit
	for _, r := range roles {
		s |= t.bit[r]
	}
	return s
}

// Role is the set holding role alone, without the Authenticated bit (zero
// when the table has no such role), to add to a caller's set.
func (t *Table) Role(name string) Set { return t.bit[name] }

// Rule returns the rule of operation op; ok is false for an operation the
// spec does not have.
func (t *Table) Rule(op string) (r Rule, ok bool) {
	r, ok = t.ops[op]
	return r, ok
}

// Allows reports whether a caller of set s may call op: an open operation
// or one allowing a role (or the keyword) s holds. An operation the spec
// does not have is allowed to nobody.
func (t *Table) Allows(op string, s Set) bool {
	r, ok := t.ops[op]
	return ok && r.Allows(s)
}

// Operations are the operation ids of the spec, sorted.
func (t *Table) Operations() []string {
	ops := make([]string, 0, len(t.ops))
	for op := range t.ops {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

// Allows reports whether a caller of set s may call the operation.
func (r Rule) Allows(s Set) bool { return r.Open || r.Allowed&s != 0 }
