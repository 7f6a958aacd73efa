package sandbox_test

import (
	"context"
	"testing"

	"github.com/apistack/apistack/gen/sandboxapi"
)

// BenchmarkFaultLookup measures what the sandboxes' faults cost a request
// that no fault takes, at its authentication (Journal.TakeFault): a sandbox
// without faults, and one whose only fault is on another operation (the
// request's operation is then looked up). Both answer from the replica's
// cache, without a query.
func BenchmarkFaultLookup(b *testing.B) {
	e := start(b, envOptions{})
	ctx := context.Background()
	none := e.create(b, sandboxapi.CreateSandboxRequest{})
	other := e.create(b, sandboxapi.CreateSandboxRequest{})
	addFault(b, other, sandboxapi.FaultRequest{Kind: sandboxapi.FaultKindUnavailable, Api: apiOf("pam"), Operation: ptr("DeleteGroup")})
	j := e.st.Sandboxes.Journal()
	op := func() string { return "ListGroups" }
	for _, c := range []struct {
		name string
		id   string
	}{{"no-faults", none.Id}, {"fault-on-another-operation", other.Id}, {"demo-tenants", "demo"}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if j.TakeFault(ctx, "pam", c.id, op) != nil {
					b.Fatal("a fault took the request")
				}
			}
		})
	}
}
