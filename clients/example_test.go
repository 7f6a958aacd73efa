package clients_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/apistack/apistack/clients"
	"github.com/apistack/apistack/clients/storage"
)

// ExampleError handles an error answer of any client through the shared
// interface; here the storage API's NoSuchBucket.
func ExampleError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<Error><Code>NoSuchBucket</Code><Message>no bucket 'photos'</Message><Resource>/photos</Resource><RequestId>4F2A</RequestId></Error>`)
	}))
	defer srv.Close()
	c, err := storage.New(storage.Config{Endpoint: srv.URL, Region: "eu-1", KeyID: "key", Secret: "secret"})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.GetLifecycle(context.Background(), "photos")
	fmt.Println(err)
	var apiErr clients.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.HTTPStatus(), apiErr.ErrorCode(), apiErr.ErrorRequestID(), apiErr.Retryable())
	}
	// Output:
	// storage: get lifecycle of "photos": 404 NoSuchBucket: no bucket 'photos'
	// 404 NoSuchBucket 4F2A false
}

// ExampleRetryError tells retries that ran out from a first refusal: the
// server asks for a wait longer than MaxWait, so the call ends at once.
func ExampleRetryError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `<Error><Code>SlowDown</Code><Message>come back later</Message><Resource>/photos</Resource><RequestId>4F2B</RequestId></Error>`)
	}))
	defer srv.Close()
	c, err := storage.New(storage.Config{Endpoint: srv.URL, Region: "eu-1", KeyID: "key", Secret: "secret"})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.GetLifecycle(context.Background(), "photos")
	var re *clients.RetryError
	if errors.As(err, &re) {
		fmt.Println(re.Attempts, re.Reason, re.Wait)
	}
	// Output: 1 the server asked for a wait longer than MaxWait 1h0m0s
}
