package benchhttp

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary serve as the harness's ceiling child, as the
// benchhttp command does.
func TestMain(m *testing.M) {
	RunCeilingIfChild()
	os.Exit(m.Run())
}

// tableRow matches a measured row of a scenario table: the server and its
// median req/s.
var tableRow = regexp.MustCompile(`(?m)^\| (ceiling \(bare echo, recorded answer\)|apistack serve|apistack serve --validate-responses|Prism mock) \| ([0-9,]+) \| [0-9, /]+ \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9,]+) `)

// TestRun_MeasuresScenariosEndToEnd runs two read scenarios and the write
// path for two short rounds: the write path must answer no error in either
// (its names are new in every run).
func TestRun_MeasuresScenariosEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts apistack (and Prism when installed): not in -short")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	scenarios, err := SelectScenarios("pam-list,pam-create,restaurant-list")
	require.NoError(t, err)
	prism := filepath.Join(root, ".tools/node_modules/.bin/prism")
	if _, err := os.Stat(prism); err != nil {
		prism = "" // measured without Prism when it is not installed
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log strings.Builder
	report, err := Run(ctx, Config{
		Root: root, Scenarios: scenarios, Duration: 150 * time.Millisecond, Warmup: 50 * time.Millisecond, Rounds: 2,
		Prism: prism, Log: &log,
	})
	require.NoError(t, err, log.String())

	require.Len(t, report.Scenarios, 3)
	for _, s := range report.Scenarios {
		ceiling, apistack := s.Server(ServerCeiling), s.Server(ServerAPIStack)
		require.NotNil(t, ceiling, s.Name)
		require.NotNil(t, apistack, s.Name)
		for _, sv := range s.Servers {
			assert.Empty(t, sv.Broken, "%s %s", s.Name, sv.Server)
			assert.Len(t, sv.RoundRPS, 2)
			assert.Positive(t, sv.Requests, "%s %s", s.Name, sv.Server)
			assert.Zero(t, sv.Errors, "%s %s: %s", s.Name, sv.Server, sv.FirstError)
			assert.Positive(t, sv.P99)
		}
		assert.Equal(t, apistack.ResponseBytes, ceiling.ResponseBytes, "the ceiling replays apistack's answer")
		if s.Write {
			assert.Equal(t, 201, apistack.Status)
		} else {
			assert.Equal(t, 200, apistack.Status)
			assert.Greater(t, apistack.ResponseBytes, 10000, "%s: 100 objects", s.Name)
		}
		if prism != "" {
			assert.NotNil(t, s.Server(ServerPrism), s.Name)
		}
	}
	assert.NotNil(t, report.Scenarios[0].Server(ServerValidate), "the PAM list is measured with --validate-responses too")
	assert.NotEmpty(t, report.Machine.LoadBefore)
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		assert.Regexp(t, `^[0-9a-f]{12}`, report.Machine.Commit, "the measured commit is recorded")
	}
	assert.NotEmpty(t, report.Machine.CPUs)
	require.Len(t, report.Memory, 2)
	for _, m := range report.Memory {
		assert.Greater(t, m.RSS, int64(1<<20), m.Process)
	}
	assert.Zero(t, report.Memory[1].Violations, "every answer of the measured scenarios holds to the spec")

	// The report parses back: every measured row carries its numbers.
	var b strings.Builder
	require.NoError(t, report.WriteMarkdown(&b))
	md := b.String()
	rows := tableRow.FindAllStringSubmatch(md, -1)
	want := 7 // three ceilings, three apistacks, one --validate-responses
	if prism != "" {
		want += 3
	}
	require.Len(t, rows, want, md)
	for _, row := range rows {
		rps, err := strconv.Atoi(strings.ReplaceAll(row[2], ",", ""))
		require.NoError(t, err, row[0])
		assert.Positive(t, rps, row[0])
		for _, col := range row[3:6] {
			_, err := strconv.ParseFloat(col, 64)
			assert.NoError(t, err, row[0])
		}
	}
	assert.Contains(t, md, "| PAM list ≥ 0.25 of the ceiling | ")
	assert.Contains(t, md, "| restaurant list ≥ 0.25 of the ceiling | ")
	assert.Regexp(t, `\| apistack serve \| [0-9.]+ MiB \| [0-9]+ \| [0-9]+ \|`, md)
}

func TestSelectScenarios(t *testing.T) {
	all, err := SelectScenarios("all")
	require.NoError(t, err)
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"pam-list", "pam-token", "pam-create", "restaurant-list", "restaurant-get", "storage-put", "fax-list", "fax-send"}, names)

	some, err := SelectScenarios("restaurant-list, pam-list")
	require.NoError(t, err)
	require.Len(t, some, 2)
	assert.Equal(t, "pam-list", some[0].Name, "in running order")

	_, err = SelectScenarios("pam-list,nope")
	assert.ErrorContains(t, err, `unknown scenario "nope"`)
}
