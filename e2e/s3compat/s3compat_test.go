package s3compat_test

import (
	"context"
	"crypto/md5" //nolint:gosec // the protocol's Content-MD5
	"encoding/base64"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/storage/s3compat"
	"github.com/apistack/apistack/protocol/contract"
	"github.com/apistack/apistack/servers/storage"
	"github.com/apistack/apistack/servers/storage/storagetest"
)

// recorder keeps the headers of every request the SDK sends, and sends it
// through the contract transport, so every request and answer on the wire is
// also checked against the storage spec.
type recorder struct {
	mu      sync.Mutex
	headers []http.Header
	next    http.RoundTripper
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	next, err := contract.ForAPI(contract.Storage, http.DefaultTransport,
		contract.OnViolation(func(v *contract.Violation) { t.Errorf("%v", v) }))
	require.NoError(t, err)
	return &recorder{next: next}
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

func (r *recorder) last() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.headers[len(r.headers)-1]
}

// sdkClient is the SDK's S3 client for env, signing with key, its requests recorded.
func sdkClient(env *storagetest.Env, key storage.AccessKey, rec *recorder, optFns ...func(*s3.Options)) *s3.Client {
	return s3compat.NewClient(s3compat.Config{
		Endpoint: env.URL, Region: storage.DefaultRegion, KeyID: key.KeyID, Secret: key.Secret,
	}, append([]func(*s3.Options){func(o *s3.Options) {
		o.HTTPClient = &http.Client{Transport: rec}
		o.RetryMaxAttempts = 1
	}}, optFns...)...)
}

func expireAfter(id, prefix string, days int32) types.LifecycleRule {
	return types.LifecycleRule{
		ID:         aws.String(id),
		Filter:     &types.LifecycleRuleFilter{Prefix: aws.String(prefix)},
		Status:     types.ExpirationStatusEnabled,
		Expiration: &types.LifecycleExpiration{Days: aws.Int32(days)},
	}
}

// requireAPIError checks that the SDK parsed an error answer into a smithy
// APIError with this code.
func requireAPIError(t *testing.T, err error, code string) {
	t.Helper()
	var apiErr smithy.APIError
	require.ErrorAs(t, err, &apiErr, "%v", err)
	assert.Equal(t, code, apiErr.ErrorCode())
	assert.NotEmpty(t, apiErr.ErrorMessage())
}

func TestS3SDK_PutGetDeleteLifecycle(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	rec := newRecorder(t)
	c := sdkClient(env, env.Key, rec)
	ctx := context.Background()

	_, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(storagetest.Bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
			expireAfter("expire-logs", "logs/", 30),
			{
				ID:                             aws.String("abort-uploads"),
				Filter:                         &types.LifecycleRuleFilter{Prefix: aws.String("")},
				Status:                         types.ExpirationStatusDisabled,
				AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(7)},
			},
		}},
	})
	require.NoError(t, err)

	// What the SDK sent: its flexible checksum, the scheme's signing headers,
	// none of the AWS-named ones.
	sent := rec.last()
	assert.NotEmpty(t, sent.Get("X-Amz-Checksum-Crc32"), "the SDK adds its CRC32 checksum, and the server accepted it")
	t.Logf("the SDK sent: %v", sent)
	assert.NotEmpty(t, sent.Get("X-Cloud-Date"))
	assert.Len(t, sent.Get("X-Cloud-Content-Sha256"), 64)
	assert.Empty(t, sent.Values("X-Amz-Date"))
	assert.Empty(t, sent.Values("X-Amz-Content-Sha256"))
	assert.Regexp(t, `^CLOUD4-HMAC-SHA256 Credential=`+env.Key.KeyID+`/\d{8}/`+storage.DefaultRegion+`/s3/cloud4_request, SignedHeaders=[a-z0-9;-]*x-amz-checksum-crc32;`,
		sent.Get("Authorization"))

	got, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(storagetest.Bucket)})
	require.NoError(t, err)
	require.Len(t, got.Rules, 2)
	assert.Equal(t, "expire-logs", aws.ToString(got.Rules[0].ID))
	assert.Equal(t, "logs/", aws.ToString(got.Rules[0].Filter.Prefix))
	assert.Equal(t, types.ExpirationStatusEnabled, got.Rules[0].Status)
	assert.Equal(t, int32(30), aws.ToInt32(got.Rules[0].Expiration.Days))
	assert.Equal(t, "abort-uploads", aws.ToString(got.Rules[1].ID))
	assert.Equal(t, types.ExpirationStatusDisabled, got.Rules[1].Status)
	assert.Equal(t, int32(7), aws.ToInt32(got.Rules[1].AbortIncompleteMultipartUpload.DaysAfterInitiation))

	_, err = c.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(storagetest.Bucket)})
	require.NoError(t, err)
	_, err = c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(storagetest.Bucket)})
	requireAPIError(t, err, "NoSuchLifecycleConfiguration")
	var httpErr *smithyhttp.ResponseError
	require.ErrorAs(t, err, &httpErr)
	assert.Equal(t, http.StatusNotFound, httpErr.HTTPStatusCode())
}

func TestS3SDK_EveryChecksumAlgorithmIsVerified(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	rec := newRecorder(t)
	c := sdkClient(env, env.Key, rec)
	ctx := context.Background()
	for _, alg := range []types.ChecksumAlgorithm{
		types.ChecksumAlgorithmCrc32, types.ChecksumAlgorithmCrc32c, types.ChecksumAlgorithmCrc64nvme,
		types.ChecksumAlgorithmSha1, types.ChecksumAlgorithmSha256,
	} {
		t.Run(string(alg), func(t *testing.T) {
			_, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
				Bucket:                 aws.String(storagetest.Bucket),
				ChecksumAlgorithm:      alg,
				LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{expireAfter(string(alg), "x/", 3)}},
			})
			require.NoError(t, err)
			assert.Equal(t, string(alg), rec.last().Get("X-Amz-Sdk-Checksum-Algorithm"))
			assert.NotEmpty(t, rec.last().Get("X-Amz-Checksum-"+string(alg)))
			got, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(storagetest.Bucket)})
			require.NoError(t, err)
			require.Len(t, got.Rules, 1)
			assert.Equal(t, string(alg), aws.ToString(got.Rules[0].ID))
		})
	}
}

// corruptChecksum overwrites the SDK's CRC32 checksum after it is computed and
// before the request is signed, as a body damaged on its way would look.
func corruptChecksum(stack *middleware.Stack) error {
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("corruptChecksum",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			if req, ok := in.Request.(*smithyhttp.Request); ok {
				req.Header.Set("X-Amz-Checksum-Crc32", "AAAAAA==")
			}
			return next.HandleFinalize(ctx, in)
		}), "Signing", middleware.Before)
}

// contentMD5 adds the Content-MD5 header older SDKs send (of another body when
// corrupt is set), before the request is signed.
func contentMD5(corrupt bool) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("contentMD5",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				req := in.Request.(*smithyhttp.Request)
				body, err := io.ReadAll(req.GetStream())
				if err != nil {
					return middleware.FinalizeOutput{}, middleware.Metadata{}, err
				}
				if err := req.RewindStream(); err != nil {
					return middleware.FinalizeOutput{}, middleware.Metadata{}, err
				}
				if corrupt {
					body = append(body, ' ')
				}
				sum := md5.Sum(body) //nolint:gosec // the protocol's Content-MD5
				req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
				return next.HandleFinalize(ctx, in)
			}), "Signing", middleware.Before)
	}
}

func TestS3SDK_ContentMD5IsVerified(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	rec := newRecorder(t)
	c := sdkClient(env, env.Key, rec)
	ctx := context.Background()
	in := &s3.PutBucketLifecycleConfigurationInput{
		Bucket:                 aws.String(storagetest.Bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{expireAfter("md5", "logs/", 30)}},
	}
	_, err := c.PutBucketLifecycleConfiguration(ctx, in, s3.WithAPIOptions(contentMD5(false)))
	require.NoError(t, err)
	assert.NotEmpty(t, rec.last().Get("Content-MD5"))

	_, err = c.PutBucketLifecycleConfiguration(ctx, in, s3.WithAPIOptions(contentMD5(true)))
	requireAPIError(t, err, "BadDigest")
}

func TestS3SDK_ErrorAnswersAreTheSDKsAPIErrors(t *testing.T) {
	env := storagetest.Start(t, storagetest.Options{})
	ctx := context.Background()
	rec := newRecorder(t)
	c := sdkClient(env, env.Key, rec)
	otherKey, err := env.Operator.CreateKey(ctx, "tenant-b", "another account")
	require.NoError(t, err)
	other := sdkClient(env, otherKey, rec)
	rules := &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{expireAfter("r", "logs/", 30)}}
	put := func(c *s3.Client, bucket string, cfg *types.BucketLifecycleConfiguration, optFns ...func(*s3.Options)) error {
		_, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
			Bucket: aws.String(bucket), LifecycleConfiguration: cfg,
		}, optFns...)
		return err
	}
	require.NoError(t, put(c, storagetest.Bucket, rules))

	t.Run("NoSuchBucket", func(t *testing.T) {
		_, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("no-such-bucket")})
		requireAPIError(t, err, "NoSuchBucket")
	})
	t.Run("NoSuchBucket for another account's key", func(t *testing.T) {
		requireAPIError(t, put(other, storagetest.Bucket, rules), "NoSuchBucket")
		_, err := other.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(storagetest.Bucket)})
		requireAPIError(t, err, "NoSuchBucket")
		_, err = other.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String(storagetest.Bucket)})
		requireAPIError(t, err, "NoSuchBucket")
	})
	t.Run("SignatureDoesNotMatch for a wrong secret", func(t *testing.T) {
		wrong := sdkClient(env, storage.AccessKey{KeyID: env.Key.KeyID, Secret: "not-the-secret"}, rec)
		_, err := wrong.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(storagetest.Bucket)})
		requireAPIError(t, err, "SignatureDoesNotMatch")
	})
	t.Run("InvalidArgument for Expiration on a versioned bucket", func(t *testing.T) {
		requireAPIError(t, put(c, storagetest.VersionedBucket, rules), "InvalidArgument")
	})
	t.Run("NotImplemented for a transition", func(t *testing.T) {
		transition := &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{
			ID: aws.String("t"), Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")}, Status: types.ExpirationStatusEnabled,
			Transitions: []types.Transition{{Days: aws.Int32(30), StorageClass: types.TransitionStorageClassGlacier}},
		}}}
		requireAPIError(t, put(c, storagetest.Bucket, transition), "NotImplemented")
	})
	t.Run("BadDigest for a checksum that is not the body's", func(t *testing.T) {
		requireAPIError(t, put(c, storagetest.Bucket, rules, s3.WithAPIOptions(corruptChecksum)), "BadDigest")
	})

	// The first configuration is still the one stored.
	got, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(storagetest.Bucket)})
	require.NoError(t, err)
	require.Len(t, got.Rules, 1)
	assert.Equal(t, "r", aws.ToString(got.Rules[0].ID))
}

func TestSigner_RefusesWhatTheSchemeCannotSign(t *testing.T) {
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/photos?lifecycle=", nil)
	require.NoError(t, err)
	err = s3compat.Signer{}.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "k", SecretAccessKey: "s"}, req,
		"UNSIGNED-PAYLOAD", "s3", storage.DefaultRegion, time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC))
	assert.ErrorContains(t, err, "not a hex SHA-256")
	err = s3compat.Signer{}.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "k", SecretAccessKey: "s", SessionToken: "t"}, req,
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "s3", storage.DefaultRegion, time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC))
	assert.ErrorContains(t, err, "no session tokens")
	assert.Empty(t, req.Header.Get("Authorization"))
}

func TestSigner_ReplacesTheAWSNamedSigningHeaders(t *testing.T) {
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/photos?lifecycle=", nil)
	require.NoError(t, err)
	req.Header.Set("X-Amz-Date", "20260314T150926Z")
	req.Header.Set("X-Amz-Content-Sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
	req.Header.Set("X-Amz-Checksum-Crc32", "AAAAAA==")
	at := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	require.NoError(t, s3compat.Signer{}.SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "k", SecretAccessKey: "s"}, req,
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "s3", storage.DefaultRegion, at))
	assert.Empty(t, req.Header.Values("X-Amz-Date"))
	assert.Empty(t, req.Header.Values("X-Amz-Content-Sha256"))
	assert.Equal(t, "20260314T150926Z", req.Header.Get("X-Cloud-Date"))
	assert.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", req.Header.Get("X-Cloud-Content-Sha256"))
	assert.Equal(t, "AAAAAA==", req.Header.Get("X-Amz-Checksum-Crc32"), "the protocol's own headers stay")
	assert.Contains(t, req.Header.Get("Authorization"), "SignedHeaders=host;x-amz-checksum-crc32;x-cloud-content-sha256;x-cloud-date,")
}
