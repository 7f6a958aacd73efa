package storage

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/apistack/apistack/clients"
	"github.com/apistack/apistack/clients/internal/retry"
	"github.com/apistack/apistack/gen/storageapi"
	"github.com/apistack/apistack/protocol/sigv4"
)

// Service is the service name of the credential scope.
const Service = "s3"

// Config configures a Client.
type Config struct {
	// Endpoint is the storage API's base URL, such as "http://127.0.0.1:8083".
	Endpoint string
	// Region is the region the server signs for.
	Region string
	// KeyID and Secret are the access key.
	KeyID, Secret string
	// VirtualHostDomain, when set, addresses each bucket virtual-host style:
	// the Host header becomes {bucket}.{Region}.{VirtualHostDomain} (the URL
	// keeps Endpoint's address, so no DNS name is needed).
	VirtualHostDomain string
	// Transport sends the signed requests (http.DefaultTransport when nil).
	// Each attempt is signed afresh, under the retries.
	Transport http.RoundTripper
	// Retry is how requests are retried (503 SlowDown and 5xx back off,
	// Retry-After is honoured up to MaxWait) and how long one attempt may
	// take; the zero value is the documented default. A call's overall bound
	// is its context.
	Retry clients.RetryPolicy
	// Now tells the signing time; nil means time.Now.
	Now func() time.Time
}

// Client is the storage API's client: a bucket's lifecycle configuration,
// signed with CLOUD4-HMAC-SHA256.
type Client struct {
	api    *storageapi.ClientWithResponses
	config Config
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	if cfg.Endpoint == "" || cfg.Region == "" || cfg.KeyID == "" || cfg.Secret == "" {
		return nil, errors.New("storage: Endpoint, Region, KeyID and Secret are required")
	}
	signer := &Signer{
		Scheme:      sigv4.Cloud4,
		Credentials: sigv4.Credentials{AccessKeyID: cfg.KeyID, SecretAccessKey: cfg.Secret},
		Region:      cfg.Region,
		Service:     Service,
		Now:         cfg.Now,
		Next:        cfg.Transport,
	}
	api, err := storageapi.NewClientWithResponses(cfg.Endpoint, storageapi.WithHTTPClient(retry.HTTPClient(signer, retry.Options{RetryPolicy: cfg.Retry})))
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return &Client{api: api, config: cfg}, nil
}

// Error is an error the storage API answered with. Callers use errors.As to
// read its code; it implements clients.Error like the other clients' errors.
type Error struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the object-storage error code, such as
	// ErrorCodeNoSuchBucket; the HTTP status text when the answer held no
	// error document.
	Code ErrorCode
	// Message says what is wrong.
	Message string
	// Resource is the resource the request addressed.
	Resource string
	// RequestID identifies the request in the server's logs.
	RequestID string
}

// ErrorCode is an object-storage error code.
type ErrorCode string

// The error codes of the object-storage API.
const (
	ErrorCodeAccessDenied                 ErrorCode = "AccessDenied"
	ErrorCodeAuthorizationHeaderMalformed ErrorCode = "AuthorizationHeaderMalformed"
	ErrorCodeInvalidAccessKeyId           ErrorCode = "InvalidAccessKeyId"
	ErrorCodeSignatureDoesNotMatch        ErrorCode = "SignatureDoesNotMatch"
	ErrorCodeRequestTimeTooSkewed         ErrorCode = "RequestTimeTooSkewed"
	ErrorCodeRequestTimeout               ErrorCode = "RequestTimeout"
	ErrorCodeServiceUnavailable           ErrorCode = "ServiceUnavailable"
	ErrorCodeXCloudContentSHA256Mismatch  ErrorCode = "XCloudContentSHA256Mismatch"
	ErrorCodeMalformedXML                 ErrorCode = "MalformedXML"
	ErrorCodeInvalidArgument              ErrorCode = "InvalidArgument"
	ErrorCodeInvalidRequest               ErrorCode = "InvalidRequest"
	ErrorCodeNotImplemented               ErrorCode = "NotImplemented"
	ErrorCodeNoSuchBucket                 ErrorCode = "NoSuchBucket"
	ErrorCodeNoSuchLifecycleConfiguration ErrorCode = "NoSuchLifecycleConfiguration"
	ErrorCodeInvalidDigest                ErrorCode = "InvalidDigest"
	ErrorCodeBadDigest                    ErrorCode = "BadDigest"
	ErrorCodeMethodNotAllowed             ErrorCode = "MethodNotAllowed"
	ErrorCodeInternalError                ErrorCode = "InternalError"
)

var _ clients.Error = (*Error)(nil)

// Error returns status, code and message (the method that returns it says
// the "storage:" prefix once).
func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.StatusCode, e.Code, e.Message)
}

// HTTPStatus is the answer's status code (clients.Error).
func (e *Error) HTTPStatus() int { return e.StatusCode }

// ErrorCode is the S3-style code, such as "NoSuchBucket" (clients.Error).
func (e *Error) ErrorCode() string { return string(e.Code) }

// ErrorMessage is the server's sentence (clients.Error).
func (e *Error) ErrorMessage() string { return e.Message }

// ErrorRequestID is the server's RequestId (clients.Error).
func (e *Error) ErrorRequestID() string { return e.RequestID }

// Retryable is true for 429 and 5xx answers but 501 (clients.Error).
func (e *Error) Retryable() bool { return clients.RetryableStatus(e.StatusCode) }

func errorFrom(resp *http.Response, body []byte) error {
	e := &Error{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Cloud-Request-Id")}
	var doc storageapi.Error
	if xml.Unmarshal(body, &doc) == nil && doc.Code != "" {
		e.Code, e.Message, e.RequestID = ErrorCode(doc.Code), doc.Message, doc.RequestId
		if doc.Resource != nil {
			e.Resource = *doc.Resource
		}
	} else {
		e.Code, e.Message = ErrorCode(http.StatusText(resp.StatusCode)), strings.TrimSpace(string(body))
	}
	return retry.Wrap(resp, e)
}

// editors address the bucket and ask for XML. The date and payload-hash
// header parameters are left to the signer, which sets them when it signs.
func (c *Client) editors(bucket string) []storageapi.RequestEditorFn {
	return []storageapi.RequestEditorFn{func(_ context.Context, req *http.Request) error {
		req.Header.Set("Accept", "application/xml")
		if c.config.VirtualHostDomain != "" {
			req.Host = bucket + "." + c.config.Region + "." + c.config.VirtualHostDomain
		}
		return nil
	}}
}

// PutLifecycle replaces the bucket's lifecycle configuration with cfg.
func (c *Client) PutLifecycle(ctx context.Context, bucket string, cfg *LifecycleConfiguration) error {
	body, err := MarshalConfiguration(cfg)
	if err != nil {
		return err
	}
	resp, err := c.api.PutLifecycleWithBodyWithResponse(ctx, bucket, &storageapi.PutLifecycleParams{},
		"application/xml", bytes.NewReader(body), c.editors(bucket)...)
	if err != nil {
		return fmt.Errorf("storage: put lifecycle of %q: %w", bucket, err)
	}
	if resp.StatusCode() != http.StatusOK {
		return fmt.Errorf("storage: put lifecycle of %q: %w", bucket, errorFrom(resp.HTTPResponse, resp.Body))
	}
	return nil
}

// GetLifecycle returns the bucket's lifecycle configuration. A bucket without
// one answers an *Error with Code "NoSuchLifecycleConfiguration".
func (c *Client) GetLifecycle(ctx context.Context, bucket string) (*LifecycleConfiguration, error) {
	resp, err := c.api.GetLifecycleWithResponse(ctx, bucket, &storageapi.GetLifecycleParams{}, c.editors(bucket)...)
	if err != nil {
		return nil, fmt.Errorf("storage: get lifecycle of %q: %w", bucket, err)
	}
	if resp.StatusCode() != http.StatusOK || resp.XML200 == nil {
		return nil, fmt.Errorf("storage: get lifecycle of %q: %w", bucket, errorFrom(resp.HTTPResponse, resp.Body))
	}
	return fromWire(resp.XML200), nil
}

// DeleteLifecycle removes the bucket's lifecycle configuration; deleting one
// that does not exist succeeds.
func (c *Client) DeleteLifecycle(ctx context.Context, bucket string) error {
	resp, err := c.api.DeleteLifecycleWithResponse(ctx, bucket, &storageapi.DeleteLifecycleParams{}, c.editors(bucket)...)
	if err != nil {
		return fmt.Errorf("storage: delete lifecycle of %q: %w", bucket, err)
	}
	if resp.StatusCode() != http.StatusNoContent {
		return fmt.Errorf("storage: delete lifecycle of %q: %w", bucket, errorFrom(resp.HTTPResponse, resp.Body))
	}
	return nil
}
