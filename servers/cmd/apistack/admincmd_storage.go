package main

import (
	"context"
	"flag"
	"net/http"

	"github.com/apistack/apistack/gen/adminapi"
)

// storageAdminCommands are the storage commands of `apistack admin`.
var storageAdminCommands = []adminCmd{
	{name: "storage-create-bucket", args: "[--versioned] [--account A] NAME", help: `create a storage bucket of account A (default "default")`, minArgs: 1, maxArgs: 1,
		run: func(fs *flag.FlagSet) adminCall {
			versioned := fs.Bool("versioned", false, "enable versioning from the start")
			account := fs.String("account", "", "the account that owns the bucket (default: the server's, \"default\")")
			return func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
				req := adminapi.CreateStorageBucketJSONRequestBody{Name: a[0], Account: given(account)}
				if *versioned {
					v := adminapi.CreateStorageBucketRequestVersioningEnabled
					req.Versioning = &v
				}
				return c.CreateStorageBucket(ctx, req)
			}
		}},
	{name: "storage-list-buckets", help: "list the storage buckets",
		run: plainCall(adminapi.ClientInterface.ListStorageBuckets)},
	{name: "storage-set-versioning", args: "BUCKET Enabled|Suspended", help: "enable or suspend a bucket's versioning", minArgs: 2, maxArgs: 2,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			if a[1] != "Enabled" && a[1] != "Suspended" {
				return nil, errUsage("storage-set-versioning BUCKET Enabled|Suspended")
			}
			return c.SetStorageBucketVersioning(ctx, a[0],
				adminapi.SetStorageBucketVersioningJSONRequestBody{Status: adminapi.SetStorageBucketVersioningRequestStatus(a[1])})
		})},
	{name: "storage-delete-bucket", args: "NAME", help: "delete a bucket and its lifecycle configuration", minArgs: 1, maxArgs: 1,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.DeleteStorageBucket(ctx, a[0])
		})},
	{name: "storage-create-key", args: "[--account A] [DESCRIPTION]", help: "issue a storage access key of account A (the secret is shown once)", maxArgs: 1,
		run: func(fs *flag.FlagSet) adminCall {
			account := fs.String("account", "", "the account the key acts for (default: the server's, \"default\")")
			return func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
				req := adminapi.CreateStorageKeyJSONRequestBody{Account: given(account)}
				if len(a) == 1 {
					req.Description = &a[0]
				}
				return c.CreateStorageKey(ctx, req)
			}
		}},
	{name: "storage-list-keys", help: "list the storage access keys",
		run: plainCall(adminapi.ClientInterface.ListStorageKeys)},
	{name: "storage-delete-key", args: "KEY_ID", help: "delete a storage access key", minArgs: 1, maxArgs: 1,
		run: noFlags(func(ctx context.Context, c adminapi.ClientInterface, a []string) (*http.Response, error) {
			return c.DeleteStorageKey(ctx, a[0])
		})},
}
