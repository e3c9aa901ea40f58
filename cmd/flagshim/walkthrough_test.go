package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

var update = flag.Bool("update", false, "TestREADMEWalkthroughs: rewrite README.md's walkthrough blocks with what they print now")

// readmePath is the README whose console blocks are walkthroughs.
const readmePath = "../../README.md"

// walkthroughMarker comes on the line before each console block of the
// README: the block is what scripts/walkthrough.sh VENDOR prints.
var walkthroughMarker = regexp.MustCompile(`^<!-- walkthrough: (\w+) -->$`)

// block is one console block of the README.
type block struct {
	vendor     string
	start, end int      // the lines of its body: lines[start:end]
	commands   []string // its "$ " lines
	body       string
}

// readmeBlocks finds every console block of the README, each of which must
// carry a walkthrough marker: a console block shows real output.
func readmeBlocks(t *testing.T, lines []string) []block {
	t.Helper()
	var out []block
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```console" {
			continue
		}
		var m []string
		if i > 0 {
			m = walkthroughMarker.FindStringSubmatch(lines[i-1])
		}
		if m == nil {
			t.Fatalf("README.md:%d: a console block without a <!-- walkthrough: VENDOR --> line before it: every console block is real output, which this test regenerates", i+1)
		}
		b := block{vendor: m[1], start: i + 1}
		for b.end = b.start; b.end < len(lines) && lines[b.end] != "```"; b.end++ {
			if c, ok := strings.CutPrefix(lines[b.end], "$ "); ok {
				b.commands = append(b.commands, c)
			}
		}
		if b.end == len(lines) {
			t.Fatalf("README.md:%d: the console block is not closed", i+1)
		}
		if len(b.commands) == 0 || !strings.HasPrefix(lines[b.start], "$ ") {
			t.Fatalf("README.md:%d: a console block starts with its first command (\"$ ...\")", i+1)
		}
		b.body = strings.Join(lines[b.start:b.end], "\n") + "\n"
		out = append(out, b)
		i = b.end
	}
	return out
}

var (
	walkthroughDirRE = regexp.MustCompile(`/tmp/flagshim-walkthrough\.[A-Za-z0-9]{6}\b`)
	hostCPURE        = regexp.MustCompile(`host cpu \(\w+\)`)
)

// scrubWalkthrough replaces what differs from run to run and machine to
// machine: the temporary folder, durations, the host cpu's architecture and
// core count.
func scrubWalkthrough(s string) string {
	s = walkthroughDirRE.ReplaceAllString(s, "/tmp/flagshim-walkthrough.XXXXXX")
	s = cpuRE.ReplaceAllString(s, "host cpu (ARCH)${1}N cores")
	s = hostCPURE.ReplaceAllString(s, "host cpu (ARCH)")
	return durationRE.ReplaceAllString(s, "DUR")
}

// TestREADMEWalkthroughs runs the commands of each console block of
// README.md through scripts/walkthrough.sh (the fake vendor library, the
// CLI built from this checkout) and fails when what they print differs from
// the block, after scrubbing what varies (temporary folder, durations, the
// host cpu). go test -run TestREADMEWalkthroughs -update rewrites the
// blocks.
func TestREADMEWalkthroughs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the walkthroughs build Linux shared libraries")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("scripts/walkthrough.sh needs bash")
	}
	if dltest.CC() == "" {
		t.Skip("the walkthroughs build a fake driver library: no C compiler")
	}
	raw, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	blocks := readmeBlocks(t, lines)
	require.NotEmpty(t, blocks, "README.md has walkthroughs")
	t.Logf("%d README walkthrough blocks: the CLI built once, then scripts/walkthrough.sh per vendor, side by side", len(blocks))

	// One run of the script per vendor, with every block's commands.
	got := make([]string, len(blocks))
	byVendor := map[string][]int{}
	var vendors []string
	for i, b := range blocks {
		if byVendor[b.vendor] == nil {
			vendors = append(vendors, b.vendor)
		}
		byVendor[b.vendor] = append(byVendor[b.vendor], i)
	}
	// The CLI built once for every vendor's run; the runs side by side.
	bin := dltest.GoBuild(t, ".", "flagshim")
	outs := make([]string, len(vendors))
	errs := make([]error, len(vendors))
	cmdsOf := make([][]string, len(vendors))
	var wg sync.WaitGroup
	for k, v := range vendors {
		for _, i := range byVendor[v] {
			cmdsOf[k] = append(cmdsOf[k], blocks[i].commands...)
		}
		fake := walkthroughFake(t, bash, v)
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[k], errs[k] = runWalkthrough(bash, bin, fake, v, cmdsOf[k])
		}()
	}
	wg.Wait()
	for k, v := range vendors {
		require.NoError(t, errs[k])
		segs := splitCommands(t, outs[k], cmdsOf[k])
		for _, i := range byVendor[v] {
			n := len(blocks[i].commands)
			got[i], segs = strings.Join(segs[:n], ""), segs[n:]
		}
	}

	changed := false
	for i, b := range blocks {
		if scrubWalkthrough(got[i]) == scrubWalkthrough(b.body) {
			continue
		}
		changed = true
		if !*update {
			t.Errorf("README.md:%d: the walkthrough block (scripts/walkthrough.sh %s) is not what it prints now; "+
				"go test ./cmd/flagshim -run TestREADMEWalkthroughs -update rewrites it\n--- README\n%s--- now\n%s",
				b.start, b.vendor, b.body, got[i])
		}
	}
	if *update && changed {
		var outLines []string
		last := 0
		for i, b := range blocks {
			outLines = append(outLines, lines[last:b.start]...)
			now := walkthroughDirRE.ReplaceAllString(got[i], "/tmp/flagshim-walkthrough.XXXXXX")
			if scrubWalkthrough(got[i]) == scrubWalkthrough(b.body) {
				now = b.body // unchanged but for durations: keep the text, and the diff small
			}
			outLines = append(outLines, strings.Split(strings.TrimSuffix(now, "\n"), "\n")...)
			last = b.end
		}
		outLines = append(outLines, lines[last:]...)
		require.NoError(t, os.WriteFile(readmePath, []byte(strings.Join(outLines, "\n")), 0o644))
		t.Logf("rewrote %s", readmePath)
	}
}

// walkthroughFake builds the vendor's fake library as the script would
// (its --recipe), in the fixtures' cache: the script's own compile, once per
// vendor and run, was most of the test's CPU time.
func walkthroughFake(t *testing.T, bash, vendor string) string {
	t.Helper()
	out, err := exec.Command(bash, "../../scripts/walkthrough.sh", vendor, "--recipe").Output()
	require.NoError(t, err, "scripts/walkthrough.sh %s --recipe", vendor)
	f := strings.Split(strings.TrimSuffix(string(out), "\n"), "\t")
	require.GreaterOrEqual(t, len(f), 2, "scripts/walkthrough.sh %s --recipe: %q", vendor, out)
	src, soname, flags := filepath.Join("../..", f[0]), f[1], f[2:]
	for i, f := range flags {
		if dir, ok := strings.CutPrefix(f, "-I"); ok { // from the repository root, as the script runs it
			flags[i] = "-I" + filepath.Join("../..", dir)
		}
	}
	lib := filepath.Join(dltest.PrivateDir(t), soname)
	dltest.BuildLib(t, dltest.Abs(t, lib), soname, []string{src}, flags...)
	return lib
}

// runWalkthrough runs scripts/walkthrough.sh VENDOR --console with the
// commands, the CLI bin and the vendor's fake library, and returns what it
// printed.
func runWalkthrough(bash, bin, fake, vendor string, commands []string) (string, error) {
	script, err := filepath.Abs("../../scripts/walkthrough.sh")
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bash, script, vendor, "--console")
	var in strings.Builder
	for _, c := range commands {
		in.WriteString("$ " + c + "\n")
	}
	cmd.Stdin = strings.NewReader(in.String())
	// The script's folder is made under /tmp, so that the paths (and the
	// tables aligned on them) have the README's length.
	cmd.Env = append(os.Environ(), "TMPDIR=/tmp", "PATH="+goPath(), "WALKTHROUGH_FLAGSHIM="+bin, "WALKTHROUGH_FAKE="+fake)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/walkthrough.sh %s --console: %w: %s", vendor, err, stderr.String())
	}
	return string(out), nil
}

// goPath is PATH with the go command running this test first (go test
// sets GOROOT): the script and the build find that one.
func goPath() string {
	path := os.Getenv("PATH")
	if root := os.Getenv("GOROOT"); root != "" {
		path = filepath.Join(root, "bin") + string(os.PathListSeparator) + path
	}
	return path
}

// splitCommands cuts out into one piece per command, in order: each piece
// is the command's "$ " line and what it printed.
func splitCommands(t *testing.T, out string, commands []string) []string {
	t.Helper()
	var segs []string
	for k, c := range commands {
		head := "$ " + c + "\n"
		require.True(t, strings.HasPrefix(out, head), "the output of %q does not come next:\n%s", c, out)
		end := len(out)
		if k+1 < len(commands) {
			next := "\n$ " + commands[k+1] + "\n"
			j := strings.Index(out[len(head)-1:], next)
			require.GreaterOrEqual(t, j, 0, "the output of %q does not come after %q:\n%s", commands[k+1], c, out)
			end = len(head) - 1 + j + 1
		}
		segs = append(segs, out[:end])
		out = out[end:]
	}
	return segs
}

// The scrubbing leaves the text and replaces only what varies.
func TestScrubWalkthrough(t *testing.T) {
	in := "  cpu:0     host cpu (amd64)     2 cores\n  drivers/cuda 19µs\n" +
		"musa     yes  /tmp/flagshim-walkthrough.uNwJe0/libmusa.so.1  musa: x\ncpu:0: host cpu (arm64)\n"
	want := "  cpu:0     host cpu (ARCH)     N cores\n  drivers/cuda DUR\n" +
		"musa     yes  /tmp/flagshim-walkthrough.XXXXXX/libmusa.so.1  musa: x\ncpu:0: host cpu (ARCH)\n"
	require.Equal(t, want, scrubWalkthrough(in))
	require.Equal(t, fmt.Sprint(len(in)), fmt.Sprint(len(walkthroughDirRE.ReplaceAllString(in, "/tmp/flagshim-walkthrough.XXXXXX"))),
		"the folder's placeholder has its length: the tables stay aligned")
}
