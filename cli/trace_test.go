package cli

import (
	"bytes"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// traceLine is one traced call as zap's console encoder writes it to
// stderr: "... INFO trace ... call {"lib": "cuda", "func": "cuInit", ...}".
var traceLine = regexp.MustCompile(`(?m)^\S+\tINFO\ttrace\t\S+\tcall\t(\{.*\})$`)

// traced runs args in a child with FLAGOS_TRACE=1 on the fake libcuda
// (FLAGOS_LOG unset: the trace shows anyway) and returns the JSON of each
// traced call it logged and everything it printed.
func traced(t *testing.T, probe string) (calls []string, out string) {
	t.Helper()
	lib := vendorstest.Driver(t, cuda.Vendor(), dltest.PrivateDir(t))
	out = dltest.MustChild(t, "TestTraceChild", "FLAGOS_TRACE=1", "TRACE_TEST_PROBE="+probe,
		"FLAGOS_LIBCUDA_PATH="+lib, "FLAGOS_LIBMUSA_PATH=/nonexistent/libmusa.so.1", "FLAGOS_LIBHIP_PATH=/nonexistent/libamdhip64.so.6",
		"FAKE_CUDA_DEVICE_NAMES=SECRET-NAME-0,SECRET-NAME-1")
	for _, m := range traceLine.FindAllStringSubmatch(out, -1) {
		calls = append(calls, m[1])
	}
	return calls, out
}

// TestTraceChild is the child of the trace tests: flagshim list under
// FLAGOS_TRACE=1, its stdout marked so that the parent can tell it from
// the trace on stderr.
func TestTraceChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("run by TestTrace*")
	}
	args := []string{"list"}
	if p := os.Getenv("TRACE_TEST_PROBE"); p != "" {
		args = append(args, "--probe", p)
	}
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, Run(args, &out, &errOut), errOut.String())
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		t.Logf("LIST %s", l)
	}
}

// FLAGOS_TRACE=1 logs every C call flagshim makes: in this process (exact),
// and in the isolated tier's child, which sends its calls to this process
// (the CLI's default). Each names the vendor, the function, the arguments
// that are values, the result and the duration; a pointer is "*", and the
// data behind one (a device's name) is never shown.
func TestTraceExact(t *testing.T) {
	calls, out := traced(t, "exact")
	checkTrace(t, calls, out, false)
}

func TestTraceIsolated(t *testing.T) {
	calls, out := traced(t, "")
	checkTrace(t, calls, out, true)
}

func checkTrace(t *testing.T, calls []string, out string, child bool) {
	t.Helper()
	assert.Contains(t, out, "LIST cuda:1: SECRET-NAME-1 (UUID: ", "the command's own output")
	require.NotEmpty(t, calls, "no call was traced:\n%s", out)
	joined := strings.Join(calls, "\n")
	for _, want := range []string{
		`"lib": "cuda", "func": "cuInit", "args": "0", "result": 0, "duration": "`,
		`"func": "cuDriverGetVersion", "args": "*", "result": 0`,
		`"func": "cuDeviceGetCount", "args": "*", "result": 0`,
		`"func": "cuDeviceGetName", "args": "*, 256, `,
	} {
		assert.Contains(t, joined, want)
	}
	for _, c := range calls {
		assert.Regexp(t, `"lib": "\w+", "func": "\w+", "args": "[^"]*", "result": -?\d+, "duration": "[0-9.]+[nµm]?s"`, c)
		assert.Equal(t, child, strings.Contains(c, `"child": "cuda"`) || strings.Contains(c, `"child": `), c)
	}
	assert.NotContains(t, joined, "SECRET-NAME", "a pointer's data is never traced")
}
