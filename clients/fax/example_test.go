package fax_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/internal/examplestack"
)

// startService starts a fax server whose webhooks go to webhookURL, with an
// account, an application and a document to send, in a process of its own
// (internal/examplestack).
func startService(webhookURL string) (*examplestack.Env, error) {
	return examplestack.Start("fax", webhookURL)
}

// Example sends a fax and follows it through its webhooks.
func Example() {
	late := &examplestack.LateHandler{}
	hooks := httptest.NewServer(late)
	defer hooks.Close()
	svc, err := startService(hooks.URL + "/")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Stop()

	// Events arrive on the webhook server's goroutines, possibly before Send
	// returns: hand them over on a channel and print them here, in order.
	events := make(chan string, 16)
	handler, err := fax.NewWebhookHandler(svc.WebhookPublicKey, func(_ context.Context, e fax.Event) error {
		events <- e.Type
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	late.Set(handler)

	c, err := fax.New(fax.Config{BaseURL: svc.URL, APIKey: svc.APIKey})
	if err != nil {
		fmt.Println(err)
		return
	}
	sent, err := c.SendFax(context.Background(), fax.SendFaxParams{
		ConnectionID: svc.ConnectionID, From: svc.From, To: "+14155550123", MediaURL: svc.DocURL,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sent:", sent.Status)
	for {
		select {
		case e := <-events:
			fmt.Println(e)
			if e != "fax.delivered" {
				continue
			}
		case <-time.After(10 * time.Second):
			fmt.Println("timed out")
		}
		break
	}
	// Output:
	// sent: queued
	// fax.queued
	// fax.media.processed
	// fax.sending.started
	// fax.delivered
}

// ExampleClient_ListFaxes walks every fax of the account, page after page.
func ExampleClient_ListFaxes() {
	svc, err := startService("http://127.0.0.1:9/")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Stop()
	c, err := fax.New(fax.Config{BaseURL: svc.URL, APIKey: svc.APIKey})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for _, to := range []string{"+14155550101", "+14155550102", "+14155550103"} {
		if _, err := c.SendFax(ctx, fax.SendFaxParams{ConnectionID: svc.ConnectionID, From: svc.From, To: to, MediaURL: svc.DocURL}); err != nil {
			fmt.Println(err)
			return
		}
	}
	n := 0
	for f, err := range c.ListFaxes(ctx, &fax.ListFaxesOptions{PageSize: 2, Direction: fax.DirectionOutbound}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n++
		_ = f
	}
	fmt.Println(n, "faxes")
	// Output: 3 faxes
}

// ExampleNewWebhookHandler mounts the verifying handler on a mux.
func ExampleNewWebhookHandler() {
	// The key comes from the admin API (GET /fax/webhook_public_key) or
	// demo-credentials.json's fax.webhook_public_key.
	key, err := fax.ParseWebhookPublicKey("11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := fax.NewWebhookHandler(key, func(_ context.Context, e fax.Event) error {
		fmt.Println(e.Type, e.FaxID)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/fax", h)
	fmt.Println("mounted")
	// Output: mounted
}

// ExampleClient_CreateApplication creates a fax application, changes its
// webhook and reads it back.
func ExampleClient_CreateApplication() {
	svc, err := startService("http://127.0.0.1:9/")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Stop()
	c, err := fax.New(fax.Config{BaseURL: svc.URL, APIKey: svc.APIKey})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	app, err := c.CreateApplication(ctx, fax.CreateApplicationParams{Name: "billing", WebhookURL: "https://example.com/hooks"})
	if err != nil {
		fmt.Println(err)
		return
	}
	hook := "https://example.com/hooks/v2"
	if _, err := c.UpdateApplication(ctx, app.ID, fax.UpdateApplicationParams{WebhookURL: &hook}); err != nil {
		fmt.Println(err)
		return
	}
	got, err := c.GetApplication(ctx, app.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Name, got.WebhookURL)
	// Output: billing https://example.com/hooks/v2
}

// ExampleClient_GetFax sends a fax and reads it back by id.
func ExampleClient_GetFax() {
	svc, err := startService("http://127.0.0.1:9/")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Stop()
	c, err := fax.New(fax.Config{BaseURL: svc.URL, APIKey: svc.APIKey})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	sent, err := c.SendFax(ctx, fax.SendFaxParams{ConnectionID: svc.ConnectionID, From: svc.From, To: "+14155550123", MediaURL: svc.DocURL})
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := c.GetFax(ctx, sent.ID.String())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.ID == sent.ID, got.Direction, got.From, got.To)
	// Output: true outbound +13125550100 +14155550123
}
