// Package apistack is a Testcontainers module for apistack: Run starts the
// apistack image (`apistack serve --demo`), waits until every API answers
// /readyz, and returns a Container with each API's URL on the host and the
// demo tenants' credentials, read from the container's
// /data/demo-credentials.json. WithFixture creates a sandbox from a fixture
// document once the stack is ready.
//
// It is a module of its own so that apistack's main module does not depend
// on Testcontainers; it does not depend on apistack's main module either.
package apistack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// The container ports the image's APIs listen on (its Containerfile's
// EXPOSE and APISTACK_*_ADDR).
const (
	PAMPort        = "8081/tcp"
	FaxPort        = "8082/tcp"
	StoragePort    = "8083/tcp"
	RestaurantPort = "8084/tcp"
	AdminPort      = "8089/tcp"
)

// CredentialsPath is where `apistack serve --demo` writes the demo tenants'
// credentials inside the image (its data directory, the /data volume).
const CredentialsPath = "/data/demo-credentials.json"

// ports are every API's container port, by the name of its
// demo-credentials.json section.
var ports = map[string]string{
	"pam": PAMPort, "fax": FaxPort, "storage": StoragePort, "restaurant": RestaurantPort, "admin": AdminPort,
}

// readyTimeout bounds the wait for every port's /readyz.
const readyTimeout = 2 * time.Minute

// Container is a running apistack container.
type Container struct {
	testcontainers.Container
	// URLs are each API's base URL on the host (the mapped ports).
	URLs URLs
	// Credentials are the demo tenants' credentials, their URLs those of
	// URLs.
	Credentials Credentials
	// Sandbox is the sandbox WithFixture created; nil without it.
	Sandbox *Sandbox
}

// URLs are the base URLs of the APIs, reachable from the host.
type URLs struct {
	PAM, Fax, Storage, Restaurant string
	// Admin is the admin port: the admin API, the sandbox API
	// (/sandboxes) and the web console (/console/).
	Admin string
}

// Run starts img (an apistack image, e.g. one `make image` built) with
// opts, waits until every API's /readyz answers 200, and reads the demo
// credentials. On an error after the container was created, the returned
// Container is not nil: terminate it (testcontainers.CleanupContainer).
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	settings := options{}
	for _, opt := range opts {
		if o, ok := opt.(Option); ok {
			if err := o(&settings); err != nil {
				return nil, fmt.Errorf("apistack: %w", err)
			}
		}
	}
	waits := make([]wait.Strategy, 0, len(ports))
	exposed := make([]string, 0, len(ports))
	for _, port := range []string{PAMPort, FaxPort, StoragePort, RestaurantPort, AdminPort} {
		exposed = append(exposed, port)
		waits = append(waits, wait.ForHTTP("/readyz").WithPort(port).WithStatusCodeMatcher(func(status int) bool { return status == 200 }))
	}
	moduleOpts := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(exposed...),
		testcontainers.WithWaitStrategyAndDeadline(readyTimeout, waits...),
	}
	if settings.fixture != nil {
		moduleOpts = append(moduleOpts, testcontainers.WithFiles(*settings.fixture))
	}
	moduleOpts = append(moduleOpts, opts...)

	ctr, err := testcontainers.Run(ctx, img, moduleOpts...)
	var c *Container
	if ctr != nil {
		c = &Container{Container: ctr}
	}
	if err != nil {
		return c, fmt.Errorf("apistack: run %s: %w", img, err)
	}
	hostPorts, err := c.hostPorts(ctx)
	if err != nil {
		return c, err
	}
	c.URLs = URLs{PAM: hostPorts["pam"], Fax: hostPorts["fax"], Storage: hostPorts["storage"], Restaurant: hostPorts["restaurant"], Admin: hostPorts["admin"]}
	raw, err := c.readFile(ctx, CredentialsPath)
	if err != nil {
		return c, err
	}
	if err := decodeMapped(raw, hostPorts, &c.Credentials); err != nil {
		return c, fmt.Errorf("apistack: %s: %w", CredentialsPath, err)
	}
	if settings.fixture != nil {
		if c.Sandbox, err = c.createSandbox(ctx, settings.fixture.ContainerFilePath, hostPorts); err != nil {
			return c, err
		}
	}
	return c, nil
}

// hostPorts maps each API (by its credentials section's name) to its base
// URL on the host.
func (c *Container) hostPorts(ctx context.Context) (map[string]string, error) {
	host, err := c.Host(ctx)
	if err != nil {
		return nil, fmt.Errorf("apistack: container host: %w", err)
	}
	out := make(map[string]string, len(ports))
	for api, port := range ports {
		mapped, err := c.MappedPort(ctx, port)
		if err != nil {
			return nil, fmt.Errorf("apistack: mapped port of %s (%s): %w", api, port, err)
		}
		out[api] = "http://" + net.JoinHostPort(host, strconv.Itoa(int(mapped.Num())))
	}
	return out, nil
}

func (c *Container) readFile(ctx context.Context, path string) ([]byte, error) {
	rc, err := c.CopyFileFromContainer(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("apistack: read %s from the container: %w", path, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("apistack: read %s from the container: %w", path, err)
	}
	return data, nil
}

// decodeMapped decodes raw, a document of the stack's credentials, into
// out with every URL that points at one of the container's API ports
// rewritten to that port's address on the host.
func decodeMapped(raw []byte, hostPorts map[string]string, out any) error {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	byPort := make(map[string]string, len(ports))
	for api, port := range ports {
		num, _, _ := strings.Cut(port, "/")
		byPort[num] = hostPorts[api]
	}
	mapped, err := json.Marshal(rewriteURLs(doc, byPort))
	if err != nil {
		return err
	}
	return json.Unmarshal(mapped, out)
}

// rewriteURLs walks a decoded JSON document and rewrites the http URLs
// whose port is a key of byPort to that base URL (keeping their path).
func rewriteURLs(v any, byPort map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = rewriteURLs(e, byPort)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = rewriteURLs(e, byPort)
		}
		return v
	case string:
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "http" || u.Port() == "" {
			return v
		}
		base, ok := byPort[u.Port()]
		if !ok {
			return v
		}
		b, err := url.Parse(base)
		if err != nil {
			return v
		}
		u.Host = b.Host
		return u.String()
	default:
		return v
	}
}
