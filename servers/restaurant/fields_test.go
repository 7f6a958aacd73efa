package restaurant_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/restaurantapi"
	"github.com/apistack/apistack/servers/restaurant"
)

// TestEveryListAndGet_AnswerTheWholeDemoConfiguration reads every entity of
// the demo configuration (every kind, nested references, images, tax tables
// and conditional rates) through each resource's list and get: the list
// pages (a token while more remain) hold each entity once, and the get of
// each answers the same entity. Every response is held to the spec, so
// every property the configuration has is checked on the wire.
func TestEveryListAndGet_AnswerTheWholeDemoConfiguration(t *testing.T) {
	f := newFixture(t)
	doc := restaurant.Demo(restaurant.DemoOptions{MenuItems: 260, Seed: 3})
	// What the demo leaves out: a menu group's image, a revenue center
	// referred to by its external id too, a service charge taxed by a table.
	doc.MenuGroups[0].Images = append(doc.MenuGroups[0].Images, restaurantapi.Image{Url: "https://images.example.com/groups/1.jpg"})
	rcID := "rc-main"
	doc.ServiceAreas[0].RevenueCenter.ExternalId = &rcID
	for i := range doc.Tables {
		if doc.Tables[i].RevenueCenter.Guid == doc.ServiceAreas[0].RevenueCenter.Guid {
			doc.Tables[i].RevenueCenter.ExternalId = &rcID
		}
	}
	for _, tax := range doc.TaxRates {
		if len(tax.TaxTable) > 0 {
			last := len(doc.ServiceCharges) - 1
			doc.ServiceCharges[last].ApplicableTaxes = append(doc.ServiceCharges[last].ApplicableTaxes, tax)
		}
	}
	f.importDoc(f.a, doc)
	ctx := context.Background()
	c := f.client()
	for _, op := range operations {
		t.Run(op.resource, func(t *testing.T) {
			var got []json.RawMessage
			for _, page := range f.walk(op, f.a, listParams{}, nil) {
				got = append(got, page...)
			}
			require.GreaterOrEqual(t, len(got), 2, "the demo has at least two %s, so a page of one has a next page", op.resource)
			one := 1
			status, h, items, err := op.list(ctx, c, f.a, listParams{PageSize: &one})
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, status)
			require.Len(t, items, 1)
			assert.NotEmpty(t, h.Get("Platform-Next-Page-Token"), "a page of one of %d has a next page", len(got))
			assert.JSONEq(t, string(got[0]), string(items[0]), "the first page of one holds the first entity")
			for _, item := range got {
				status, one, err := op.get(ctx, c, f.a, guidOf(t, item))
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, status)
				assert.JSONEq(t, string(item), string(one), "the get answers the entity the list holds")
			}
		})
	}
}
