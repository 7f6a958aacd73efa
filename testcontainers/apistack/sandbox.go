package apistack

import (
	"bytes"
	"context"
	"fmt"
	"io"

	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// createSandbox runs `apistack sandbox create --fixture path` in the
// container (the sandbox-creator token and URL come from its demo
// credentials) and returns the sandbox, its URLs those of the host.
func (c *Container) createSandbox(ctx context.Context, path string, hostPorts map[string]string) (*Sandbox, error) {
	code, out, err := c.Exec(ctx, []string{"/apistack", "sandbox", "create", "--fixture", path}, tcexec.Multiplexed())
	if err != nil {
		return nil, fmt.Errorf("apistack: sandbox create --fixture %s: %w", path, err)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, out); err != nil {
		return nil, fmt.Errorf("apistack: sandbox create --fixture %s: %w", path, err)
	}
	if code != 0 {
		return nil, fmt.Errorf("apistack: sandbox create --fixture %s exited %d: %s", path, code, bytes.TrimSpace(buf.Bytes()))
	}
	sb := new(Sandbox)
	if err := decodeMapped(buf.Bytes(), hostPorts, sb); err != nil {
		return nil, fmt.Errorf("apistack: sandbox create --fixture %s answered %q: %w", path, buf.String(), err)
	}
	return sb, nil
}
