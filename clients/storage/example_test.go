package storage_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/apistack/apistack/clients/storage"
	storageserver "github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// startServer runs a storage server with a plain bucket, a versioned bucket and
// an access key, as `apistack serve --demo` would.
func startServer() (env *storagetest.Env, stop func()) {
	dir, err := os.MkdirTemp("", "storage-example")
	if err != nil {
		log.Fatal(err)
	}
	env, closeEnv, err := storagetest.Open(dir, storagetest.Options{}, func(r *http.Request, status int, err error) {
		log.Fatalf("response %d to %s breaks the spec: %v", status, r.URL, err)
	})
	if err != nil {
		log.Fatal(err)
	}
	return env, func() { closeEnv(); os.RemoveAll(dir) }
}

func ExampleClient_PutLifecycle() {
	env, stop := startServer()
	defer stop()
	ctx := context.Background()

	client, err := storage.New(storage.Config{
		Endpoint: env.URL, Region: storageserver.DefaultRegion, KeyID: env.Key.KeyID, Secret: env.Key.Secret,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Logs expire after 30 days; uploads left incomplete are aborted after a week.
	cfg := storage.Configuration(
		storage.ExpireAfterDays("expire-logs", "logs/", 30),
		storage.AbortIncompleteUploadsAfterDays("abort-uploads", "", 7),
	)
	if err := client.PutLifecycle(ctx, storagetest.Bucket, cfg); err != nil {
		log.Fatal(err)
	}
	got, err := client.GetLifecycle(ctx, storagetest.Bucket)
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
	env, stop := startServer()
	defer stop()
	ctx := context.Background()

	client, err := storage.New(storage.Config{
		Endpoint: env.URL, Region: storageserver.DefaultRegion, KeyID: env.Key.KeyID, Secret: env.Key.Secret,
	})
	if err != nil {
		log.Fatal(err)
	}
	// Expiration is for a bucket without versioning.
	err = client.PutLifecycle(ctx, storagetest.VersionedBucket, storage.Configuration(storage.ExpireAfterDays("", "", 1)))
	var er *storage.Error
	if errors.As(err, &er) {
		fmt.Println(er.StatusCode, er.Code)
	}
	_, err = client.GetLifecycle(ctx, storagetest.Bucket)
	if errors.As(err, &er) {
		fmt.Println(er.StatusCode, er.Code)
	}
	// Output:
	// 400 InvalidArgument
	// 404 NoSuchLifecycleConfiguration
}

func ExampleClient_DeleteLifecycle() {
	env, stop := startServer()
	defer stop()
	ctx := context.Background()

	client, err := storage.New(storage.Config{
		Endpoint: env.URL, Region: storageserver.DefaultRegion, KeyID: env.Key.KeyID, Secret: env.Key.Secret,
	})
	if err != nil {
		log.Fatal(err)
	}
	rules := storage.Configuration(storage.ExpireNoncurrentAfterDays("old-versions", "", 30, 3))
	if err := client.PutLifecycle(ctx, storagetest.VersionedBucket, rules); err != nil {
		log.Fatal(err)
	}
	if err := client.DeleteLifecycle(ctx, storagetest.VersionedBucket); err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted")
	// Output: deleted
}
