package restaurant_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/internal/examplestack"
)

// demoServer starts a server with a 400-item demo configuration, in a
// process of its own (internal/examplestack).
func demoServer() *examplestack.Env {
	env, err := examplestack.Start("restaurant")
	if err != nil {
		log.Fatal(err)
	}
	return env
}

func ExampleClient_ListMenuItems() {
	env := demoServer()
	defer env.Stop()
	c, err := restaurant.New(restaurant.Config{
		BaseURL: env.URL, ClientID: env.ClientID, ClientSecret: env.ClientSecret, Restaurant: env.Restaurant,
	})
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for item, err := range c.ListMenuItems(context.Background(), nil) {
		if err != nil {
			log.Fatal(err)
		}
		if n == 0 {
			fmt.Println("first:", item.Name)
		}
		n++
	}
	fmt.Println("menu items:", n)
	// Output:
	// first: Rare
	// menu items: 400
}

func ExampleClient_GetServiceArea() {
	env := demoServer()
	defer env.Stop()
	c, err := restaurant.New(restaurant.Config{
		BaseURL: env.URL, ClientID: env.ClientID, ClientSecret: env.ClientSecret, Restaurant: env.Restaurant,
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for table, err := range c.ListTables(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		area, err := c.GetServiceArea(ctx, table.ServiceArea.GUID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("table %s is in %s\n", table.Name, area.Name)
		break
	}
	// Output:
	// table T1 is in Main Dining
}

func ExampleClient_Changes() {
	env := demoServer()
	defer env.Stop()
	c, err := restaurant.New(restaurant.Config{
		BaseURL: env.URL, ClientID: env.ClientID, ClientSecret: env.ClientSecret, Restaurant: env.Restaurant,
	})
	if err != nil {
		log.Fatal(err)
	}
	since := time.Now().Add(time.Hour) // nothing was modified after this instant
	n := 0
	for _, err := range c.Changes(context.Background(), since) {
		if err != nil {
			log.Fatal(err)
		}
		n++
	}
	fmt.Println("changes:", n)
	// Output:
	// changes: 0
}
