package apistack

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/testcontainers/testcontainers-go"
)

// options are the module's own settings, beside the container request's.
type options struct {
	fixture *testcontainers.ContainerFile
}

// Option is a setting of the apistack module. It satisfies
// testcontainers.ContainerCustomizer, so it is passed to Run with the
// generic customizers.
type Option func(*options) error

// Customize satisfies testcontainers.ContainerCustomizer: the module's
// options act in Run, not on the request.
func (o Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

// fixtureDir is where WithFixture copies the document in the container
// (the image's /tmp, the apistack user's).
const fixtureDir = "/tmp/apistack-fixture"

// WithFixture copies the fixture document at path (JSON or YAML, in the
// format of apistack's specs/sandbox/fixture.schema.json) into the
// container and, once the stack is ready, creates a sandbox from it with
// `apistack sandbox create --fixture` run in the container: the sandbox is
// Container.Sandbox, with the credentials the fixture made. A fixture the
// stack refuses fails Run with the sandbox API's message (naming the
// fixture's JSON pointer).
func WithFixture(path string) Option {
	return func(o *options) error {
		info, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("fixture: %w", err)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("fixture %s: not a regular file", path)
		}
		o.fixture = &testcontainers.ContainerFile{
			HostFilePath:      path,
			ContainerFilePath: fixtureDir + "/" + filepath.Base(path),
			FileMode:          0o644,
		}
		return nil
	}
}
