package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// embeddingDoc is the page whose C example must run as written.
const embeddingDoc = "../../docs/embedding.md"

// docBlock is the body of the fenced block that follows the marker line
// <!-- c-example: name --> in doc.
func docBlock(t *testing.T, doc, name string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)<!-- c-example: " + regexp.QuoteMeta(name) + " -->\n```[a-z]*\n(.*?)\n```\n")
	m := re.FindStringSubmatch(doc)
	require.NotNil(t, m, "%s has a block marked <!-- c-example: %s -->", embeddingDoc, name)
	return m[1]
}

// TestCExampleRunsAsWritten builds docs/embedding.md's C example with the
// page's own lines, from a folder laid out as the repository root is (the
// header under cmd/libflagshim), and runs it with no LD_LIBRARY_PATH: the
// link line's rpath is what lets the program find libflagshim.so. A link
// line without it (the page's old one) fails here.
func TestCExampleRunsAsWritten(t *testing.T) {
	lib := buildCheck(t) // skips where the C library cannot be built
	lib = filepath.Join(filepath.Dir(lib), "libflagshim.so")
	raw, err := os.ReadFile(embeddingDoc)
	require.NoError(t, err)
	doc := string(raw)
	src, build := docBlock(t, doc, "app.c"), docBlock(t, doc, "build")

	root := dltest.PrivateDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "cmd"), 0o700))
	require.NoError(t, os.Symlink(dltest.Abs(t, "."), filepath.Join(root, "cmd", "libflagshim")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "app.c"), []byte(src), 0o600))
	b, err := os.ReadFile(lib)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "libflagshim.so"), b, 0o700))

	cc := dltest.CC()
	var ran []string
	for _, line := range strings.Split(build, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "CGO_ENABLED=1 go build -buildmode=c-shared -o libflagshim.so ./cmd/libflagshim"):
			ran = append(ran, "go build") // done above, by the same command (buildCheck)
		case strings.HasPrefix(line, "cc "):
			runShell(t, root, cc+line[len("cc"):], nil)
			ran = append(ran, "cc")
		case line == "./app":
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "FLAGOS_") && !strings.HasPrefix(kv, "FAKE_") && !strings.HasPrefix(kv, "LD_LIBRARY_PATH=") &&
					!strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=") {
					env = append(env, kv)
				}
			}
			// No accelerator: cuda keeps its meaning.
			none := filepath.Join(root, "none")
			env = append(env, "FLAGOS_LIBCUDA_PATH="+none+"/libcuda.so.1", "FLAGOS_LIBMUSA_PATH="+none+"/libmusa.so.1",
				"FLAGOS_LIBNVML_PATH="+none+"/libnvidia-ml.so.1", "FLAGOS_LIBMTML_PATH="+none+"/libmtml.so")
			out := runShell(t, root, line, env)
			assert.Equal(t, "cuda:1 means cuda:1 here\n", out)
			ran = append(ran, "run")
		default:
			t.Fatalf("%s: a line of the build block this test does not know how to run: %q", embeddingDoc, line)
		}
	}
	assert.Equal(t, []string{"go build", "cc", "run"}, ran, "the page builds the library, links the program and runs it")
}

// runShell runs line with sh in dir (env nil: this process's) and returns
// its stdout; it fails the test on an error.
func runShell(t *testing.T, dir, line string, env []string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s\nstdout:\n%s\nstderr:\n%s", line, &stdout, &stderr)
	return stdout.String()
}
