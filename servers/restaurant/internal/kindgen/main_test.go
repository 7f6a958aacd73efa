package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadTable_TheRestaurantKinds(t *testing.T) {
	rows, err := readTable("../../kinds.go")
	require.NoError(t, err)
	require.Len(t, rows, 24)
	assert.Equal(t, row{Const: "resAlternatePaymentTypes", Path: "alternatePaymentTypes", EntityType: "AlternatePaymentType"}, rows[0])
	assert.Equal(t, row{Const: "resTipWithholding", Path: "tipWithholding", EntityType: "TipWithholding", Single: true}, rows[23])
}

func TestReadTable_RefusesABadTable(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"constant not named after its path", `var kinds = [...]kind{resMenu: {Path: "menus", EntityType: "Menu"}}`, "want resMenus"},
		{"row twice", `var kinds = [...]kind{resMenus: {Path: "menus", EntityType: "Menu"}, resMenus: {Path: "menus", EntityType: "Menu"}}`, "appears twice"},
		{"row without its key", `var kinds = [...]kind{{Path: "menus", EntityType: "Menu"}}`, "keyed by its resource constant"},
		{"row without an entity type", `var kinds = [...]kind{resMenus: {Path: "menus"}}`, "lacks Path or EntityType"},
		{"no table", `var other = 1`, "no `var kinds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kinds.go")
			require.NoError(t, os.WriteFile(path, []byte("package restaurant\n\n"+tc.src+"\n"), 0o600))
			_, err := readTable(path)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestWords(t *testing.T) {
	assert.Equal(t, "alternate payment types", words("alternatePaymentTypes"))
	assert.Equal(t, "menu item", words("MenuItem"))
}
