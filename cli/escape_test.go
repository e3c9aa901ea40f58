package cli

import (
	"bytes"
	"encoding/json"
	"github.com/flagos-ai/flagshim/drivers/musa"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/report"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA H200":             "NVIDIA H200",
		"MTT S4000 (musa:0) µ 显卡": "MTT S4000 (musa:0) µ 显卡",
		"a\nb":                    `a\nb`,
		"a\r\nb\tc":               `a\r\nb\tc`,
		"\x1b[2J\x1b[31mred":      `\x1b[2J\x1b[31mred`,
		"\x00\x7f":                `\x00\x7f`,
		"c1\u0085\u009b":          `c1\u0085\u009b`,
		"bidi\u202eevil\u2066":    `bidi\u202eevil\u2066`,
		"zero\u200bwidth\ufeff":   `zero\u200bwidth\ufeff`,
		"line\u2028sep":           `line\u2028sep`,
		"bad\xffutf8\xc3":         `bad\xffutf8\xc3`,
		`back\slash`:              `back\slash`,
	} {
		assert.Equal(t, want, escape(in), "%q", in)
		assert.False(t, needsEscape(escape(in)), "%q: escaped once is enough", in)
	}
}

// escapeInfo escapes every text of the report but the variables' values
// (explain quotes those), and leaves the report it was given untouched.
func TestEscapeInfo(t *testing.T) {
	s := report.Info{
		Alias:    report.Alias{Reason: "a\nb"},
		Backends: []report.Backend{{Type: "musa", Reason: "r\x1b", Extra: map[string]string{"k\n": "v\n"}, Properties: []report.Device{{Name: "n\n"}}}},
		Env:      []report.Variable{{Name: "X", Value: "v\n"}},
	}
	e := escapeInfo(s)
	assert.Equal(t, `a\nb`, e.Alias.Reason)
	assert.Equal(t, `r\x1b`, e.Backends[0].Reason)
	assert.Equal(t, map[string]string{`k\n`: `v\n`}, e.Backends[0].Extra)
	assert.Equal(t, `n\n`, e.Backends[0].Properties[0].Name)
	assert.Equal(t, "v\n", e.Env[0].Value)
	assert.Equal(t, "n\n", s.Backends[0].Properties[0].Name, "the caller's report is untouched")
	assert.Equal(t, "r\x1b", s.Backends[0].Reason)
}

// hostileNames are device names a driver could report: one that prints a
// line looking like another device's, one with terminal escapes and a
// bidirectional override.
const hostileNames = "GPU0\ncuda:7: NVIDIA H200 (UUID: GPU-spoofed),\x1b[2J\x1b[31mRed\u202eevil"

// Device names with newlines and escape sequences, from the fake libmusa,
// reach every text output escaped: list prints one line per device, and no
// output carries a raw control character. JSON keeps the names as they
// are (encoding/json escapes them).
func TestHostileDeviceNames(t *testing.T) {
	if !dltest.IsChild(t) {
		lib := vendorstest.Driver(t, musa.Vendor(), dltest.PrivateDir(t))
		dltest.MustChild(t, t.Name(), "FLAGOS_LIBCUDA_PATH=/nonexistent/libcuda.so.1", "FLAGOS_LIBMUSA_PATH="+lib,
			"FLAGOS_LIBHIP_PATH=/nonexistent/libamdhip64.so.6", "FAKE_MUSA_DEVICE_NAMES="+hostileNames)
		return
	}
	code, out, errOut := runCLI("list")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 5, "cpu:0, musa:0, musa:1, flagos:0, flagos:1: one line each\n%s", out)
	assert.Equal(t, `musa:0: GPU0\ncuda:7: NVIDIA H200 (UUID: GPU-spoofed) (UUID: 10111213-1415-1617-1819-1a1b1c1d1e1f)`, lines[1])
	assert.Equal(t, `musa:1: \x1b[2J\x1b[31mRed\u202eevil (UUID: 20212223-2425-2627-2829-2a2b2c2d2e2f)`, lines[2])
	assert.True(t, strings.HasPrefix(lines[3], `flagos:0: GPU0\ncuda:7: `), lines[3])
	for _, args := range [][]string{{"list"}, {"info"}, {"explain"}, {"info", "-L"}, {"list", "--accelerators-only"}} {
		code, out, errOut := runCLI(args...)
		require.Equal(t, exitOK, code, "%v: %s", args, errOut)
		assert.False(t, hasRawControl(out), "%v prints a raw control character:\n%s", args, out)
		assert.NotContains(t, out, "\ncuda:7", "%v: a name's newline started a line", args)
	}
	code, out, _ = runCLI("list", "--json")
	require.Equal(t, exitOK, code)
	var l listOutput
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	assert.Equal(t, "GPU0\ncuda:7: NVIDIA H200 (UUID: GPU-spoofed)", l.Devices[1].Name, "JSON carries the name as it is")
}

// hasRawControl reports whether s has a control character other than the
// newlines that end its lines.
func hasRawControl(s string) bool {
	return needsEscape(strings.ReplaceAll(s, "\n", "")) || bytes.ContainsRune([]byte(s), '\u202e')
}
