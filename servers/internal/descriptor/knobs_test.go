package descriptor

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	On bool `flag:"x-on" help:"switch"`
}

type knobs struct {
	TTL    time.Duration `flag:"x-ttl" default:"1h" help:"a lifetime"`
	Limit  int           `flag:"x-limit" default:"20" help:"a limit"`
	Name   string        `flag:"x-name" default:"local" help:"a name"`
	Step   time.Duration `flag:"x-step" serve:"1s" help:"zero means back to back"`
	Nested inner
	Plain  int
}

func TestRegisterFlags_BindsEveryTaggedFieldWithItsDefault(t *testing.T) {
	var k knobs
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	RegisterFlags(fs, &k)
	assert.Equal(t, knobs{TTL: time.Hour, Limit: 20, Name: "local", Step: time.Second}, k, "the flags' defaults")
	for name, def := range map[string]string{"x-ttl": "1h0m0s", "x-limit": "20", "x-name": "local", "x-step": "1s", "x-on": "false"} {
		f := fs.Lookup(name)
		require.NotNil(t, f, name)
		assert.Equal(t, def, f.DefValue, name)
	}
	assert.Equal(t, "a lifetime", fs.Lookup("x-ttl").Usage)
	require.NoError(t, fs.Parse([]string{"--x-ttl", "5m", "--x-limit", "3", "--x-on", "--x-name", "eu"}))
	assert.Equal(t, knobs{TTL: 5 * time.Minute, Limit: 3, Name: "eu", Step: time.Second, Nested: inner{On: true}}, k)
	assert.Error(t, fs.Parse([]string{"--x-limit", "many"}))
}

func TestApplyDefaults_FillsZeroFieldsOnly(t *testing.T) {
	k := knobs{Limit: 7}
	ApplyDefaults(&k)
	assert.Equal(t, knobs{TTL: time.Hour, Limit: 7, Name: "local"}, k, "serve-only defaults (Step) stay zero")
}

func TestRegisterFlags_RefusesWhatItCannotBind(t *testing.T) {
	var bad struct {
		Rate float64 `flag:"x-rate" default:"0.5"`
	}
	assert.Panics(t, func() { RegisterFlags(flag.NewFlagSet("x", flag.ContinueOnError), &bad) })
	var badDefault struct {
		N int `flag:"x-n" default:"many"`
	}
	assert.Panics(t, func() { ApplyDefaults(&badDefault) })
}
