package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// githubAnchor is the anchor GitHub gives a heading: lower case, spaces as
// hyphens, punctuation other than hyphens and underscores dropped.
func githubAnchor(heading string) string {
	a := strings.ToLower(strings.TrimSpace(heading))
	a = regexp.MustCompile(`[^\w\- ]`).ReplaceAllString(a, "")
	return strings.ReplaceAll(a, " ", "-")
}

// The README's Contents line lists every section in order, and every link to
// a section of the README names one that exists: sections added by one
// change and links written by another cannot drift apart.
func TestREADME_ContentsListsEverySectionAndEveryAnchorResolves(t *testing.T) {
	data, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	readme := string(data)

	var sections []string
	anchors := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimLeft(line, "#")
		anchors[githubAnchor(heading)] = true
		if strings.HasPrefix(line, "## ") {
			sections = append(sections, githubAnchor(heading))
		}
	}
	require.NotEmpty(t, sections)

	contents := regexp.MustCompile(`(?m)^\*\*Contents\*\*: (.*)$`).FindStringSubmatch(readme)
	require.NotNil(t, contents, "the README has a Contents line")
	var listed []string
	for _, m := range regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(contents[1], -1) {
		listed = append(listed, m[1])
	}
	assert.Equal(t, sections, listed, "the Contents line lists every ## section, in order")

	for _, m := range regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(readme, -1) {
		assert.True(t, anchors[m[1]], "the link to #%s names a heading of the README", m[1])
	}
}
