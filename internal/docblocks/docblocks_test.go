package docblocks_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/internal/docblocks"
)

func TestFind(t *testing.T) {
	doc := "# Guide\n\n<!-- hello -->\n```sh\necho hello\necho again\n```\n<!-- /hello -->\n\n<!-- open -->\n```sh\necho x\n```\n"
	tests := []struct {
		name, want, err string
	}{
		{name: "hello", want: "echo hello\necho again\n"},
		{name: "missing", err: `no sh block named "missing"`},
		{name: "open", err: `not closed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := docblocks.Find(doc, tt.name)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRoot_HoldsTheModule(t *testing.T) {
	assert.FileExists(t, docblocks.Root(t)+"/go.mod")
	assert.FileExists(t, docblocks.Root(t)+"/README.md")
}
