package presence

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
)

// libDesc says where a management library lives.
type libDesc struct {
	human   string   // "NVML"
	name    string   // dl.Spec.Name: "libnvidia-ml"
	file    string   // the file a user installs: "libnvidia-ml.so.1"
	envVar  string   // NVMLEnvVar
	sonames []string // bare names, most specific first
	dirs    []string // well-known absolute folders
}

// specEdit lets tests replace the search (never the override) so that a
// machine's real library cannot answer for a fake.
type specEdit struct{ Sonames, Dirs []string }

// open finds and opens the library, recording the attempts in r; on failure
// it fills r.Err and r.Reason and returns nil.
func (c *config) open(d libDesc, r *Report) *dl.Library {
	spec := dl.Spec{Name: d.name, EnvVar: d.envVar, Sonames: d.sonames, Dirs: d.dirs, Getenv: c.getenv}
	if c.spec != nil {
		e := specEdit{Sonames: spec.Sonames, Dirs: spec.Dirs}
		c.spec(&e)
		spec.Sonames, spec.Dirs = e.Sonames, e.Dirs
	}
	lib, err := dl.Open(spec)
	if err == nil {
		r.Library = lib.Path
		r.Attempts = attempts(lib.Attempts)
		c.log.Debug("presence: opened", zap.String("library", lib.Path))
		return lib
	}
	var oe *dl.OpenError
	if !errors.As(err, &oe) {
		r.Err = fmt.Errorf("%w: %w", ErrNoLibrary, err)
		r.Reason = err.Error()
		return nil
	}
	r.Attempts = attempts(oe.Attempts)
	if oe.Override != "" {
		detail := "the path must be absolute"
		if oe.Cause != nil {
			detail = oe.Cause.Error()
		}
		r.Err = fmt.Errorf("%w: %w", ErrBadOverride, err)
		r.Reason = fmt.Sprintf("%s=%q cannot be used: %s; set %s=/abs/path/to/%s or unset it to search the usual places",
			d.envVar, oe.Override, detail, d.envVar, d.file)
		return nil
	}
	tried := make([]string, 0, len(oe.Attempts))
	for _, a := range oe.Attempts {
		tried = append(tried, a.Path)
	}
	if len(tried) == 0 {
		tried = append(tried, "nothing")
	}
	r.Err = fmt.Errorf("%w: %w", ErrNoLibrary, err)
	r.Reason = fmt.Sprintf("%s not found (tried %s); install the driver's management library or set %s=/abs/path/to/%s",
		d.file, strings.Join(tried, ", "), d.envVar, d.file)
	c.log.Debug("presence: not found", zap.String("library", d.file), zap.String("tried", strings.Join(tried, ", ")))
	return nil
}

func attempts(as []dl.Attempt) []device.Attempt {
	out := make([]device.Attempt, 0, len(as))
	for _, a := range as {
		out = append(out, device.Attempt{Path: a.Path, Error: a.Message()})
	}
	return out
}

// sym is one entry of a binding's symbol table: C names, preferred first.
type sym struct {
	addr     *uintptr
	names    []string
	required bool
}

// resolve looks every symbol up once. A missing optional one stays 0 (its
// feature is skipped); a missing required one is an error naming it.
func resolve(lib *dl.Library, table []sym) error {
	var missing []string
	for _, s := range table {
		a, _, err := lib.SymAny(s.names...)
		if err != nil {
			if s.required {
				missing = append(missing, strings.Join(s.names, " or "))
			}
			continue
		}
		*s.addr = a
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s lacks %s", ErrMissingSymbol, lib.Path, strings.Join(missing, ", "))
	}
	return nil
}

// call calls fn (never 0: callers check optional symbols first) and returns
// its C enum result; the upper half of the return register is undefined.
func call(fn uintptr, args ...uintptr) int {
	r, _, _ := purego.SyscallN(fn, args...)
	return int(int32(uint32(r)))
}

// cString is the NUL-terminated prefix of b.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// goString copies the NUL-terminated C string at p (at most 4 KiB).
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p)) // memory owned by C
	n := 0
	for n < 4096 && *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}
