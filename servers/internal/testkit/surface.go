package testkit

import (
	"reflect"
	"slices"
	"testing"
)

// ExportsOnly fails t for each exported method of server (a pointer to an
// API's server) that is neither a method of iface (a nil pointer to the
// generated strict server interface, such as
// (*storageserver.StrictServerInterface)(nil)) nor named in also (its
// construction and lifecycle: Handler, Operator, Console, ...).
func ExportsOnly(t testing.TB, server, iface any, also ...string) {
	t.Helper()
	handlers := reflect.TypeOf(iface).Elem()
	methods := reflect.TypeOf(server)
	for i := range methods.NumMethod() {
		name := methods.Method(i).Name
		if _, generated := handlers.MethodByName(name); !generated && !slices.Contains(also, name) {
			t.Errorf("%s exports %s, which is neither a generated handler nor one of %v", methods, name, also)
		}
	}
}
