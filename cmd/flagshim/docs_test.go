package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/vendors"
)

// readmeMaxLines keeps README.md a page read in ten minutes: the rest is in
// docs/.
const readmeMaxLines = 300

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", path))
	require.NoError(t, err)
	return string(b)
}

// README.md: short, its vendor table the registry's vendors, its two
// commands the two that work.
func TestREADME(t *testing.T) {
	readme := readDoc(t, "README.md")
	assert.LessOrEqual(t, strings.Count(readme, "\n"), readmeMaxLines, "README.md's lines")

	var inTable []string
	for _, m := range regexp.MustCompile("(?m)^\\| [^|]+ \\| `([a-z0-9_]+)` \\| [^|]+ \\| [^|]+ \\|$").FindAllStringSubmatch(readme, -1) {
		inTable = append(inTable, m[1])
	}
	var registered []string
	for _, v := range vendors.All() {
		registered = append(registered, string(v.Type))
	}
	assert.ElementsMatch(t, registered, inTable, "README.md's vendor table names every registered vendor, and no other")

	_, two, ok := strings.Cut(readme, "\n## The two commands\n\n```sh\n")
	require.True(t, ok, "README.md has The two commands, a sh block first")
	two, _, _ = strings.Cut(two, "```")
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(two), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	assert.Equal(t, []string{"go run ./cmd/flagshim", "go test ./..."}, cmds)
	// go run ./cmd/flagshim runs this package: a main package (this test
	// file's) with the CLI's Run.
	main := readDoc(t, "cmd/flagshim/main.go")
	assert.Contains(t, main, "package main")
	assert.Contains(t, main, "cli.Run(")
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHead   = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	notSlugs = regexp.MustCompile("[^a-z0-9 _-]")
)

// slug is a heading's anchor as GitHub makes it.
func slug(h string) string {
	return strings.ReplaceAll(notSlugs.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
}

// Every relative link of README.md and docs/*.md names a file of the
// repository, and a heading of it where the link has an anchor: moving a
// section to docs/ left no link behind.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	pages = append(pages, "../../README.md", "../../python/README.md")
	seen := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			seen++
			st, err := os.Stat(path)
			if !assert.NoError(t, err, "%s links to %s, which is not there", page, target) || anchor == "" || st.IsDir() {
				continue
			}
			doc, err := os.ReadFile(path)
			require.NoError(t, err)
			var anchors []string
			for _, h := range mdHead.FindAllStringSubmatch(string(doc), -1) {
				anchors = append(anchors, slug(h[1]))
			}
			assert.Contains(t, anchors, anchor, "%s links to %s: no such heading", page, target)
		}
	}
	assert.Greater(t, seen, 20, "the links were read")
}
