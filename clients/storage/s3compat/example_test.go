package s3compat_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/apistack/apistack/clients/storage/s3compat"
	"github.com/apistack/apistack/internal/examplestack"
)

// The AWS SDK's own S3 client, pointed at the storage API: only the signer is
// apistack's.
func Example() {
	// A storage server with a bucket and an access key, in a process of its
	// own (internal/examplestack).
	env, err := examplestack.Start("storage")
	if err != nil {
		log.Fatal(err)
	}
	defer env.Stop()
	ctx := context.Background()

	client := s3compat.NewClient(s3compat.Config{
		Endpoint: env.URL, Region: env.Region, KeyID: env.KeyID, Secret: env.KeySecret,
	})
	_, err = client.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(env.Bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{
			ID:         aws.String("expire-logs"),
			Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
			Status:     types.ExpirationStatusEnabled,
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(30)},
		}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	got, err := client.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(env.Bucket)})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range got.Rules {
		fmt.Println(*r.ID, *r.Filter.Prefix, r.Status, *r.Expiration.Days)
	}

	_, err = client.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("no-such-bucket")})
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.ErrorCode())
	}
	// Output:
	// expire-logs logs/ Enabled 30
	// NoSuchBucket
}
