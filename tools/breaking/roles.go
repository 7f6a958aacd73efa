package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
)

// rolesExtension is the operation extension that lists the roles allowed to
// call it (servers/internal/rights reads it): every other role is answered
// 403. oasdiff ignores extensions, so a change of it is found here.
const rolesExtension = "x-apistack-roles"

// everyRole is the keyword of rolesExtension that allows any authenticated
// caller; it stands alone in its list.
const everyRole = "authenticated"

// Rule ids of the changes of rolesExtension.
const (
	// RoleRemovedRule: a role lost an operation; its callers now get 403.
	RoleRemovedRule = "x-apistack-role-removed"
	// RoleAddedRule: a role gained an operation; nobody loses an answer.
	RoleAddedRule = "x-apistack-role-added"
)

// roleChanges lists the changes of rolesExtension from base to revision on
// the operations both declare (an operation added or removed is oasdiff's
// finding): a role removed breaks the callers holding it, a role added breaks
// nobody. A list narrowed from the everyRole keyword to named roles breaks
// every other role's callers; one widened to it is an addition.
func roleChanges(base, revision *Spec) ([]Change, error) {
	var out []Change
	for _, path := range revision.Info.Spec.Paths.InMatchingOrder() {
		revItem := revision.Info.Spec.Paths.Value(path)
		baseItem := base.Info.Spec.Paths.Value(path)
		if revItem == nil || baseItem == nil {
			continue
		}
		for method, revOp := range revItem.Operations() {
			baseOp := baseItem.GetOperation(method)
			if baseOp == nil {
				continue
			}
			was, err := operationRoles(base.Path, baseOp)
			if err != nil {
				return nil, err
			}
			now, err := operationRoles(revision.Path, revOp)
			if err != nil {
				return nil, err
			}
			if was == nil || now == nil {
				continue // no rights declared on one side: nothing to compare
			}
			op := strings.TrimSpace(method + " " + path)
			if revOp.OperationID != "" {
				op += " (" + revOp.OperationID + ")"
			}
			out = append(out, compareRoles(op, was, now)...)
		}
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		if a.Level != b.Level {
			return int(b.Level) - int(a.Level)
		}
		return strings.Compare(a.Operation+a.Text, b.Operation+b.Text)
	})
	return out, nil
}

// compareRoles is the changes of one operation's role list.
func compareRoles(op string, was, now []string) []Change {
	var out []Change
	wasEvery, nowEvery := slices.Contains(was, everyRole), slices.Contains(now, everyRole)
	switch {
	case wasEvery && nowEvery:
		return nil
	case wasEvery:
		return []Change{{Rule: RoleRemovedRule, Level: checker.ERR, Operation: op,
			Text: fmt.Sprintf("%s narrowed from `%s` to %s: callers with any other role are now answered 403",
				rolesExtension, everyRole, quoted(now))}}
	case nowEvery:
		return []Change{{Rule: RoleAddedRule, Level: checker.INFO, Operation: op,
			Text: fmt.Sprintf("%s widened from %s to `%s`: every authenticated caller is now allowed",
				rolesExtension, quoted(was), everyRole)}}
	}
	for _, r := range was {
		if !slices.Contains(now, r) {
			out = append(out, Change{Rule: RoleRemovedRule, Level: checker.ERR, Operation: op,
				Text: fmt.Sprintf("role `%s` removed from %s: its callers are now answered 403", r, rolesExtension)})
		}
	}
	for _, r := range now {
		if !slices.Contains(was, r) {
			out = append(out, Change{Rule: RoleAddedRule, Level: checker.INFO, Operation: op,
				Text: fmt.Sprintf("role `%s` added to %s", r, rolesExtension)})
		}
	}
	return out
}

// operationRoles reads op's rolesExtension: nil when it has none, an error
// when it is not a list of strings.
func operationRoles(path string, op *openapi3.Operation) ([]string, error) {
	v, ok := op.Extensions[rolesExtension]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: %s of %s is %T, not a list of roles", path, rolesExtension, op.OperationID, v)
	}
	roles := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("%s: %s of %s holds %v, not a role name", path, rolesExtension, op.OperationID, item)
		}
		roles = append(roles, s)
	}
	return roles, nil
}

func quoted(roles []string) string {
	q := make([]string, len(roles))
	for i, r := range roles {
		q[i] = "`" + r + "`"
	}
	return "[" + strings.Join(q, ", ") + "]"
}
