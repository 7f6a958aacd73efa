package main

import (
	"context"
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRun_RefusesBadArgumentsBeforeStartingAnything(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-scenarios", "pam-list,bogus"}, `unknown scenario "bogus"`},
		{[]string{"-prism", filepath.Join(t.TempDir(), "no-prism")}, "-prism"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-duration", "soon"}, "invalid value"},
	}
	for _, c := range cases {
		err := run(ctx, c.args, io.Discard)
		assert.ErrorContains(t, err, c.want, "%v", c.args)
	}
	assert.ErrorIs(t, run(ctx, []string{"-h"}, io.Discard), flag.ErrHelp)
}
