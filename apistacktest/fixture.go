package apistacktest

import (
	"encoding/json"
	"fmt"

	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/internal/fixturefile"
)

// FixtureCredentials are the credentials a fixture made, under the names
// the fixture gave them (the sandbox API's fixture_credentials).
type FixtureCredentials = sandboxapi.FixtureCredentials

// Option adjusts the stack Start, New and Connect make.
type Option func(*options) error

type options struct {
	fixture     json.RawMessage
	fixturePath string
}

// WithFixture starts the stack's tenants from the fixture document at path
// (JSON or YAML; specs/sandbox/fixture.schema.json): in process it is
// applied to the stack's tenants, connected (Connect) the sandbox is
// created from it. The credentials it makes are in
// Stack.FixtureCredentials. A fixture that cannot be read or breaks a rule
// fails the start.
func WithFixture(path string) Option {
	return func(o *options) error {
		doc, err := fixturefile.Read(path)
		if err != nil {
			return err
		}
		o.fixture, o.fixturePath = doc, path
		return nil
	}
}

func optionsOf(more []Option) (options, error) {
	var o options
	for _, opt := range more {
		if err := opt(&o); err != nil {
			return o, fmt.Errorf("apistacktest: %w", err)
		}
	}
	return o, nil
}

// fixtureCredentials are the credentials a fixture made, by API, as the
// sandbox API answers them; nil for none.
func fixtureCredentials(named map[string]json.RawMessage) (*FixtureCredentials, error) {
	if len(named) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(named)
	if err != nil {
		return nil, err
	}
	out := new(FixtureCredentials)
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("apistacktest: the fixture's credentials: %w", err)
	}
	return out, nil
}
