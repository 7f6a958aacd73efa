package apistack_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/testcontainers/testcontainers-go"

	"github.com/apistack/apistack/testcontainers/apistack"
)

// A test starts apistack (the image `make image IMAGE=localhost/apistack:ci`
// builds), calls the fax API with the demo account's key and terminates
// the container.
func ExampleRun() {
	ctx := context.Background()
	c, err := apistack.Run(ctx, "localhost/apistack:ci")
	defer func() {
		if err := testcontainers.TerminateContainer(c); err != nil {
			log.Printf("terminate: %v", err)
		}
	}()
	if err != nil {
		log.Printf("run apistack: %v", err)
		return
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		c.Credentials.Fax.BaseURL+"/v2/fax_applications/"+c.Credentials.Fax.ConnectionID, nil)
	if err != nil {
		log.Printf("request: %v", err)
		return
	}
	req.Header.Set("Authorization", "Bearer "+c.Credentials.Fax.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Printf("call the fax API: %v", err)
		return
	}
	defer resp.Body.Close()
	fmt.Println("fax application:", resp.Status)
	// Output: fax application: 200 OK
}
