package apistacktest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/apistack/apistack/apistacktest"
	faxclient "github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/storage"
)

// A test starts the whole stack with apistacktest.Start(t, …); code without
// a *testing.T (a TestMain, this example) uses New and Close. The clients
// are ready, configured with the stack's tenant.
func Example() {
	st, err := apistacktest.New(apistacktest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()

	for _, name := range []string{"ops", "billing"} {
		if _, err := st.PAM.CreateGroup(ctx, name); err != nil {
			log.Fatal(err)
		}
	}
	for g, err := range st.PAM.ListGroups(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(g.Name)
	}
	// Output:
	// billing
	// demo-admins
	// ops
}

// Time in the stack moves only when the test says so: a fax waits in
// media.processed until the clock is advanced, then walks to delivered, and
// its webhooks arrive in the stack's inbox.
func Example_clock() {
	st, err := apistacktest.New(apistacktest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	f, err := st.Fax.SendFax(ctx, faxclient.SendFaxParams{ConnectionID: st.Credentials.Fax.ConnectionID,
		To: "+13125550800", From: st.Credentials.Fax.From, MediaURL: st.SampleFaxURL})
	if err != nil {
		log.Fatal(err)
	}
	id := f.ID.String()
	if _, err := st.Inbox.Wait(ctx, id, "fax.media.processed"); err != nil {
		log.Fatal(err)
	}
	st.Clock.Advance(10 * time.Minute)
	if _, err := st.Inbox.Wait(ctx, id, "fax.delivered"); err != nil {
		log.Fatal(err)
	}
	// Webhooks come at least once: an attempt that timed out on a busy
	// machine is sent again, so a receiver goes by the event's ID.
	seen := map[string]bool{}
	for _, e := range st.Inbox.EventsOf(id) {
		if !seen[e.ID] {
			seen[e.ID] = true
			fmt.Println(e.Type)
		}
	}
	// Output:
	// fax.queued
	// fax.media.processed
	// fax.sending.started
	// fax.delivered
}

// Faults are injected per API and operation: here the next storage
// GetLifecycle answers 500 with the API's XML error.
func Example_faults() {
	st, err := apistacktest.New(apistacktest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if err := st.InjectErr(apistacktest.Storage, apistacktest.Fault{Kind: apistacktest.InternalError, Operation: "GetLifecycle", Count: 1}); err != nil {
		log.Fatal(err)
	}
	// The clients retry a 500; one without retries sees the fault.
	cfg := st.StorageConfig()
	cfg.Retry.MaxRetries = -1
	c, err := storage.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.GetLifecycle(context.Background(), st.Credentials.Storage.Bucket)
	var apiErr *storage.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code)
	}
	_, err = c.GetLifecycle(context.Background(), st.Credentials.Storage.Bucket)
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code)
	}
	// Output:
	// 500 InternalError
	// 404 NoSuchLifecycleConfiguration
}
