package admin

import (
	"context"
	"fmt"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/internal/storeerr"
	"github.com/apistack/apistack/servers/storage"
)

// The storage API's operations: buckets, their versioning and access keys.

// ListStorageBuckets lists the buckets.
func (s *Server) ListStorageBuckets(ctx context.Context, _ adminserver.ListStorageBucketsRequestObject) (adminserver.ListStorageBucketsResponseObject, error) {
	buckets, err := s.cfg.Storage.Buckets(ctx)
	if err != nil {
		return nil, err
	}
	out := adminserver.ListStorageBuckets200JSONResponse{Buckets: make([]adminapi.StorageBucket, 0, len(buckets))}
	for _, b := range buckets {
		out.Buckets = append(out.Buckets, toAPIBucket(b))
	}
	return out, nil
}

// CreateStorageBucket creates a bucket, versioned or not.
func (s *Server) CreateStorageBucket(ctx context.Context, req adminserver.CreateStorageBucketRequestObject) (adminserver.CreateStorageBucketResponseObject, error) {
	v := storage.Unversioned
	if req.Body.Versioning != nil {
		v = storage.Versioning(*req.Body.Versioning)
	}
	var account string
	if req.Body.Account != nil {
		account = *req.Body.Account
	}
	b, err := s.cfg.Storage.CreateBucket(ctx, account, req.Body.Name, v)
	if err != nil {
		return nil, about(err, sentences{storeerr.ErrAlreadyExists: fmt.Sprintf("bucket %q exists already", req.Body.Name)})
	}
	return adminserver.CreateStorageBucket201JSONResponse(toAPIBucket(b)), nil
}

// GetStorageBucket returns a bucket.
func (s *Server) GetStorageBucket(ctx context.Context, req adminserver.GetStorageBucketRequestObject) (adminserver.GetStorageBucketResponseObject, error) {
	b, err := s.cfg.Storage.Bucket(ctx, req.Bucket)
	if err != nil {
		return nil, notFound(err, "bucket %q does not exist", req.Bucket)
	}
	return adminserver.GetStorageBucket200JSONResponse(toAPIBucket(b)), nil
}

// DeleteStorageBucket deletes a bucket and its lifecycle configuration.
func (s *Server) DeleteStorageBucket(ctx context.Context, req adminserver.DeleteStorageBucketRequestObject) (adminserver.DeleteStorageBucketResponseObject, error) {
	if err := s.cfg.Storage.DeleteBucket(ctx, req.Bucket); err != nil {
		return nil, notFound(err, "bucket %q does not exist", req.Bucket)
	}
	return adminserver.DeleteStorageBucket204Response{}, nil
}

// SetStorageBucketVersioning enables or suspends a bucket's versioning.
func (s *Server) SetStorageBucketVersioning(ctx context.Context, req adminserver.SetStorageBucketVersioningRequestObject) (adminserver.SetStorageBucketVersioningResponseObject, error) {
	b, err := s.cfg.Storage.SetVersioning(ctx, req.Bucket, storage.Versioning(req.Body.Status))
	if err != nil {
		return nil, notFound(err, "bucket %q does not exist", req.Bucket)
	}
	return adminserver.SetStorageBucketVersioning200JSONResponse(toAPIBucket(b)), nil
}

// ListStorageKeys lists the access keys without their secrets.
func (s *Server) ListStorageKeys(ctx context.Context, _ adminserver.ListStorageKeysRequestObject) (adminserver.ListStorageKeysResponseObject, error) {
	keys, err := s.cfg.Storage.Keys(ctx)
	if err != nil {
		return nil, err
	}
	out := adminserver.ListStorageKeys200JSONResponse{Keys: make([]adminapi.StorageKey, 0, len(keys))}
	for _, k := range keys {
		out.Keys = append(out.Keys, adminapi.StorageKey{KeyId: k.KeyID, Account: k.Account, Description: k.Description, CreatedAt: k.CreatedAt.UTC()})
	}
	return out, nil
}

// CreateStorageKey issues an access key; its secret is in this answer only.
func (s *Server) CreateStorageKey(ctx context.Context, req adminserver.CreateStorageKeyRequestObject) (adminserver.CreateStorageKeyResponseObject, error) {
	var account, description string
	if req.Body != nil && req.Body.Description != nil {
		description = *req.Body.Description
	}
	if req.Body != nil && req.Body.Account != nil {
		account = *req.Body.Account
	}
	k, err := s.cfg.Storage.CreateKey(ctx, account, description)
	if err != nil {
		return nil, err
	}
	return adminserver.CreateStorageKey201JSONResponse{
		KeyId: k.KeyID, Account: k.Account, Secret: k.Secret, Description: k.Description, CreatedAt: k.CreatedAt.UTC(),
	}, nil
}

// DeleteStorageKey deletes an access key.
func (s *Server) DeleteStorageKey(ctx context.Context, req adminserver.DeleteStorageKeyRequestObject) (adminserver.DeleteStorageKeyResponseObject, error) {
	if err := s.cfg.Storage.DeleteKey(ctx, req.KeyId); err != nil {
		return nil, notFound(err, "key %q does not exist", req.KeyId)
	}
	return adminserver.DeleteStorageKey204Response{}, nil
}

func toAPIBucket(b storage.Bucket) adminapi.StorageBucket {
	return adminapi.StorageBucket{Name: b.Name, Account: b.Account, Versioning: adminapi.StorageVersioning(b.Versioning), CreatedAt: b.CreatedAt.UTC()}
}
