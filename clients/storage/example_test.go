package storage_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/apistack/apistack/clients/storage"
	"github.com/apistack/apistack/internal/examplestack"
)

// startServer runs a storage server with a plain bucket, a versioned bucket
// and an access key, as `apistack serve --demo` would, in a process of its
// own (internal/examplestack).
func startServer() *examplestack.Env {
	env, err := examplestack.Start("storage")
	if err != nil {
		log.Fatal(err)
	}
	return env
}

func ExampleClient_PutLifecycle() {
	env := startServer()
	defer env.Stop()
	ctx := context.Background()

	client, err := storage.New(storage.Config{
		Endpoint: env.URL, Region: env.Region, KeyID: env.KeyID, Secret: env.KeySecret,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Logs expire after 30 days; uploads left incomplete are aborted after a week.
	cfg := storage.Configuration(
		storage.ExpireAfterDays("expire-logs", "logs/", 30),
		storage.AbortIncompleteUploadsAfterDays("abort-uploads", "", 7),
	)
	if err := client.PutLifecycle(ctx, env.Bucket, cfg); err != nil {
		log.Fatal(err)
	}
	got, err := client.GetLifecycle(ctx, env.Bucket)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range got.Rules {
		fmt.Println(*r.ID, *r.Filter.Prefix, r.Status)
	}
	// Output:
	// expire-logs logs/ Enabled
	// abort-uploads  Enabled
}

func ExampleError() {
	env := startServer()
	defer env.Stop()
	ctx := context.Background()

	client, err := storage.New(storage.Config{
		Endpoint: env.URL, Region: env.Region, KeyID: env.KeyID, Secret: env.KeySecret,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Expiration is for a bucket without versioning.
	err = client.PutLifecycle(ctx, env.VersionedBucket, storage.Configuration(storage.ExpireAfterDays("", "", 1)))
	var er *storage.Error
	if errors.As(err, &er) {
		fmt.Println(er.StatusCode, er.Code)
	}
	_, err = client.GetLifecycle(ctx, env.Bucket)
	if errors.As(err, &er) {
		fmt.Println(er.StatusCode, er.Code)
	}
	// Output:
	// 400 InvalidArgument
	// 404 NoSuchLifecycleConfiguration
}

func ExampleClient_DeleteLifecycle() {
	env := startServer()
	defer env.Stop()
	ctx := context.Background()

	client, err := storage.New(storage.Config{
		Endpoint: env.URL, Region: env.Region, KeyID: env.KeyID, Secret: env.KeySecret,
	})
	if err != nil {
		log.Fatal(err)
	}
	rules := storage.Configuration(storage.ExpireNoncurrentAfterDays("old-versions", "", 30, 3))
	if err := client.PutLifecycle(ctx, env.VersionedBucket, rules); err != nil {
		log.Fatal(err)
	}
	if err := client.DeleteLifecycle(ctx, env.VersionedBucket); err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted")
	// Output: deleted
}
