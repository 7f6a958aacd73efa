package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/apistack/apistack/gen/adminapi"
)

// storageAdminCommand runs one storage command of `apistack admin` and returns
// the answer's status and body.
func storageAdminCommand(ctx context.Context, client *adminapi.ClientWithResponses, cmd string, args []string, stderr io.Writer) (int, []byte, error) {
	switch cmd {
	case "storage-create-bucket":
		sub := flag.NewFlagSet(cmd, flag.ContinueOnError)
		sub.SetOutput(stderr)
		versioned := sub.Bool("versioned", false, "enable versioning from the start")
		account := sub.String("account", "", "the account that owns the bucket (default: the server's, \"default\")")
		if err := sub.Parse(args); err != nil {
			return 0, nil, err
		}
		if sub.NArg() != 1 {
			return 0, nil, errors.New("usage: storage-create-bucket [--versioned] [--account ACCOUNT] NAME")
		}
		req := adminapi.CreateStorageBucketJSONRequestBody{Name: sub.Arg(0)}
		if *account != "" {
			req.Account = account
		}
		if *versioned {
			v := adminapi.CreateStorageBucketRequestVersioningEnabled
			req.Versioning = &v
		}
		r, err := client.CreateStorageBucketWithResponse(ctx, req)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "storage-list-buckets", "storage-list-keys":
		if len(args) != 0 {
			return 0, nil, errors.New("usage: " + cmd)
		}
		if cmd == "storage-list-keys" {
			r, err := client.ListStorageKeysWithResponse(ctx)
			if err != nil {
				return 0, nil, err
			}
			return r.StatusCode(), r.Body, nil
		}
		r, err := client.ListStorageBucketsWithResponse(ctx)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "storage-set-versioning":
		if len(args) != 2 || (args[1] != "Enabled" && args[1] != "Suspended") {
			return 0, nil, errors.New("usage: storage-set-versioning BUCKET Enabled|Suspended")
		}
		r, err := client.SetStorageBucketVersioningWithResponse(ctx, args[0],
			adminapi.SetStorageBucketVersioningJSONRequestBody{Status: adminapi.SetStorageBucketVersioningRequestStatus(args[1])})
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "storage-delete-bucket":
		if len(args) != 1 {
			return 0, nil, errors.New("usage: storage-delete-bucket NAME")
		}
		r, err := client.DeleteStorageBucketWithResponse(ctx, args[0])
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "storage-create-key":
		sub := flag.NewFlagSet(cmd, flag.ContinueOnError)
		sub.SetOutput(stderr)
		account := sub.String("account", "", "the account the key acts for (default: the server's, \"default\")")
		if err := sub.Parse(args); err != nil {
			return 0, nil, err
		}
		if sub.NArg() > 1 {
			return 0, nil, errors.New("usage: storage-create-key [--account ACCOUNT] [DESCRIPTION]")
		}
		var req adminapi.CreateStorageKeyJSONRequestBody
		if sub.NArg() == 1 {
			description := sub.Arg(0)
			req.Description = &description
		}
		if *account != "" {
			req.Account = account
		}
		r, err := client.CreateStorageKeyWithResponse(ctx, req)
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	case "storage-delete-key":
		if len(args) != 1 {
			return 0, nil, errors.New("usage: storage-delete-key KEY_ID")
		}
		r, err := client.DeleteStorageKeyWithResponse(ctx, args[0])
		if err != nil {
			return 0, nil, err
		}
		return r.StatusCode(), r.Body, nil
	}
	return 0, nil, errors.New("unknown storage command " + cmd)
}
