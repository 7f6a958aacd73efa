package testkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/apistack/apistack/servers/internal/testkit"
)

type handlers interface {
	Get(ctx context.Context) error
}

type narrow struct{}

func (*narrow) Get(context.Context) error { return nil }
func (*narrow) Handler()                  {}

type wide struct{ narrow }

func (*wide) Extra() {}

func TestExportsOnly(t *testing.T) {
	ok := &recorder{TB: t}
	testkit.ExportsOnly(ok, &narrow{}, (*handlers)(nil), "Handler")
	assert.Zero(t, ok.errors, "the handlers and the named methods pass")

	extra := &recorder{TB: t}
	testkit.ExportsOnly(extra, &wide{}, (*handlers)(nil), "Handler")
	assert.Equal(t, 1, extra.errors, "a method of neither kind fails")

	unnamed := &recorder{TB: t}
	testkit.ExportsOnly(unnamed, &narrow{}, (*handlers)(nil))
	assert.Equal(t, 1, unnamed.errors, "Handler must be named")
}
