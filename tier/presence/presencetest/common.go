package presencetest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// Common is what every management-library binding is tested for alike,
// and what those cases need to know of the binding and its fake. With
// Suite.Common set, Suite.Test runs them besides the binding's own Cases:
// the opening cases in the test's process (nothing is loaded), the others
// each in a child against the fake. A case whose facts are not given (a
// zero field) is not run.
type Common struct {
	Source string // Report.Source: "nvml"
	Label  string // the label of the library's errors and sentences: "NVML"
	// Vars are the fake's variables; unset, VarsOf("FAKE_<SOURCE>_").
	Vars Vars

	Init, Shutdown string // as the call log names them; Shutdown "" where the library has none
	// ErrorString is the error-string function, as the call log names it:
	// called once after a failed init ("" where the binding has none).
	ErrorString string
	Count       string // the count function: "nvmlDeviceGetCount_v2"
	// Handle is the function giving device i's handle, named Handle(i) in
	// its error: "nvmlDeviceGetHandleByIndex_v2" ("" where no device read
	// fails the answer).
	Handle string
	// DeviceCalls are the calls that ask for a device: none may come after
	// a refused count. Default: Handle.
	DeviceCalls []string
	// Answer is the fake's answer by default: checked as a whole by the
	// case "default answer"; the other cases expect its number of devices.
	Answer Answer

	InitFail   Failure // an init result, given to Vars.InitResult
	CountFail  Failure // a count result, given to Vars.CountResult
	HandleFail Failure // the result of the handle Vars.HandleFail fails
	Missing    Missing // a build of the fake without a required function
	// Optional is a build of the fake without the optional functions: what
	// they would tell is left out, and nothing is noted.
	Optional Build
	// NoErrorString is the -D flag of a build without the error-string
	// function: errors then carry no message.
	NoErrorString string
	// Visible is the runtime's visible-devices variable, read as a list of
	// ordinals; Ignored are variables it does not read (another runtime's,
	// a container toolkit's).
	Visible string
	// EmptyUndecidable: how the runtime reads the variable set and empty
	// is not public, so the tier says it cannot decide.
	EmptyUndecidable bool
	Ignored          []string
	// Also runs the binding's other presence sources (its device nodes,
	// ...) in the case that proves no source loads a driver.
	Also func(*presence.Env)
}

// Vars are a fake's variables for the roles the common cases use; "" for a
// role the fake does not have.
type Vars struct {
	InitResult  string // init's result code
	Count       string // the devices the fake has
	CountResult string // the count's result code
	CountRaw    string // the count the fake reports instead, whatever devices it has
	HandleFail  string // an index whose handle the fake refuses
}

// VarsOf are the variables of a fake on fake_env.h: prefix ("FAKE_NVML_")
// then INIT_RESULT, COUNT, COUNT_RESULT, COUNT_RAW and HANDLE_FAIL.
func VarsOf(prefix string) Vars {
	return Vars{InitResult: prefix + "INIT_RESULT", Count: prefix + "COUNT", CountResult: prefix + "COUNT_RESULT",
		CountRaw: prefix + "COUNT_RAW", HandleFail: prefix + "HANDLE_FAIL"}
}

// Answer is what a fake answers by default.
type Answer struct {
	DriverVersion string
	Devices       []presence.Device
}

// Build is a build of a fake (its -D flags, with the child's environment)
// and its answer.
type Build struct {
	Defines []string
	Env     []string
	Answer  Answer
}

// Missing is a build of a fake without a required function: its -D flag
// ("FAKE_NO_NAME") and the function's names, newest first.
type Missing struct {
	Define string
	Names  []string
}

// Failure is a result code as the library names it.
type Failure struct {
	Code    int
	Name    string // "NVML_ERROR_DRIVER_NOT_LOADED"
	Message string // the error-string function's words for it; "" none
	Reason  string // InitFail only: a part of the binding's sentence for it
}

// prefix is the fake's variables' prefix by default: FAKE_<SOURCE>_.
func (c *Common) prefix() string { return "FAKE_" + strings.ToUpper(c.Source) + "_" }

// vars are Vars, or their default.
func (c *Common) vars() Vars {
	if c.Vars == (Vars{}) {
		return VarsOf(c.prefix())
	}
	return c.Vars
}

// err is the *clib.Error of f returned by fn.
func (c *Common) err(fn string, f Failure) *clib.Error {
	return &clib.Error{Library: c.Label, Func: fn, Code: f.Code, Name: f.Name, Message: f.Message}
}

// paired checks init first and shutdown last, once each, where the
// library has a shutdown.
func (c *Common) paired(t *testing.T, calls []string) {
	t.Helper()
	if c.Shutdown != "" {
		Paired(t, calls, c.Init, c.Shutdown)
	}
}

// cases are the common cases a child runs against the fake.
func (c *Common) cases(lib Lib, source func(*presence.Env) presence.Report) []Case {
	var cases []Case
	vars := c.vars()
	add := func(ok bool, cs ...Case) {
		if ok {
			cases = append(cases, cs...)
		}
	}
	itoa := strconv.Itoa
	add(true, Case{Name: "default answer", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		n := len(c.Answer.Devices)
		assert.Equal(t, c.Source, r.Source)
		assert.Equal(t, os.Getenv(lib.Override), r.Library)
		assert.Equal(t, c.Answer.DriverVersion, r.DriverVersion)
		assert.Equal(t, n, r.Total)
		assert.Equal(t, "", r.Visibility)
		assert.Equal(t, c.Answer.Devices, r.Devices)
		assert.Equal(t, c.Label+" sees "+itoa(n)+" device"+presence.Plural(n), r.Reason)
		assert.Empty(t, r.Notes)
		require.NotEmpty(t, calls)
		assert.Equal(t, c.Init, calls[0], "init comes first")
		c.paired(t, calls)
	}})
	add(c.InitFail.Name != "", Case{Name: "init fails", Env: []string{vars.InitResult + "=" + itoa(c.InitFail.Code)},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrInit)
			var e *clib.Error
			require.True(t, errors.As(r.Err, &e))
			assert.Equal(t, c.err(c.Init, c.InitFail), e)
			assert.ErrorIs(t, r.Err, &clib.Error{Library: c.Label, Code: c.InitFail.Code}, "an *clib.Error of the same library and code matches")
			assert.Contains(t, r.Reason, c.InitFail.Reason)
			assert.Empty(t, r.Devices)
			want := []string{c.Init}
			if c.ErrorString != "" {
				want = append(want, c.ErrorString)
			}
			assert.Equal(t, want, calls, "nothing after a failed init, no shutdown")
		}})
	add(vars.Count != "", Case{Name: "zero devices", Env: []string{vars.Count + "=0"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Empty(t, r.Devices)
			assert.False(t, r.Available())
			assert.Equal(t, c.Label+" sees no device", r.Reason)
			c.paired(t, calls)
		}})
	add(c.CountFail.Name != "", Case{Name: "count fails", Env: []string{vars.CountResult + "=" + itoa(c.CountFail.Code)},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrQuery)
			assert.Equal(t, c.err(c.Count, c.CountFail).Error(), r.Reason)
			c.paired(t, calls)
		}})
	// A library answering an absurd count: refused before anything is
	// allocated for it, and no device is asked for.
	for _, n := range []uint64{1<<32 - 1, 3000000} {
		add(vars.CountRaw != "", Case{Name: "count " + strconv.FormatUint(n, 10), Env: []string{vars.CountRaw + "=" + strconv.FormatUint(n, 10)},
			Run: func(t *testing.T) presence.Report {
				var r presence.Report
				a := Allocated(func() { r = source(presence.NewEnv()) })
				assert.Less(t, a, uint64(16<<20), "%s allocated %d bytes", c.Label, a)
				return r
			},
			Check: func(t *testing.T, r presence.Report, calls []string) {
				TooMany(t, r, n)
				assert.Contains(t, r.Reason, c.Label+": "+c.Count+" reported ")
				asks := c.DeviceCalls
				if asks == nil {
					asks = []string{c.Handle}
				}
				for _, call := range calls {
					assert.NotContains(t, asks, call, "no device is asked for")
				}
				c.paired(t, calls)
			}})
	}
	add(vars.CountRaw != "" && c.Handle != "", Case{Name: "count 4096", Env: []string{vars.CountRaw + "=4096"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.NotErrorIs(t, r.Err, presence.ErrTooManyDevices, "the bound itself is allowed")
			n := len(c.Answer.Devices)
			assert.ErrorIs(t, r.Err, presence.ErrQuery, "the fake has no device %d", n)
			assert.Contains(t, r.Reason, c.Handle+"("+itoa(n)+")")
			c.paired(t, calls)
		}})
	add(c.HandleFail.Name != "", Case{Name: "handle fails", Env: []string{vars.HandleFail + "=1"},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrQuery)
			assert.Equal(t, c.err(c.Handle+"(1)", c.HandleFail).Error(), r.Reason)
			assert.Empty(t, r.Devices)
			c.paired(t, calls)
		}})
	add(c.Missing.Define != "", Case{Name: "required function missing", Defines: []string{"-D" + c.Missing.Define},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrMissingSymbol)
			var me *clib.MissingSymbolError
			require.True(t, errors.As(r.Err, &me))
			assert.Equal(t, [][]string{c.Missing.Names}, me.Missing)
			assert.Contains(t, r.Reason, "lacks the required symbol "+strings.Join(c.Missing.Names, " / "))
			assert.Contains(t, r.Reason, " or point "+lib.Override+" at its "+lib.Soname, "the reason names the override")
			assert.Empty(t, calls, "nothing is called before every required function is there")
		}})
	add(c.Optional.Defines != nil, Case{Name: "optional functions missing", Defines: c.Optional.Defines, Env: c.Optional.Env,
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Equal(t, c.Optional.Answer.DriverVersion, r.DriverVersion)
			assert.Equal(t, c.Optional.Answer.Devices, r.Devices, "what the library cannot say stays empty")
			assert.Empty(t, r.Notes)
			c.paired(t, calls)
		}})
	add(c.NoErrorString != "" && c.CountFail.Name != "", Case{Name: "no error string", Defines: []string{"-D" + c.NoErrorString},
		Env: []string{vars.CountResult + "=" + itoa(c.CountFail.Code)},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.ErrorIs(t, r.Err, presence.ErrQuery)
			bare := c.CountFail
			bare.Message = ""
			assert.Equal(t, c.err(c.Count, bare).Error(), r.Reason, "no message")
		}})
	vis := c.Visible + "=1,3"
	add(c.Visible != "" && vars.Count != "", Case{Name: "visible", Env: []string{vars.Count + "=4", vis},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Equal(t, 4, r.Total)
			require.Len(t, r.Devices, 2)
			assert.Equal(t, [2]int{1, 3}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
			assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
			assert.Equal(t, vis, r.Visibility)
			assert.Equal(t, c.Label+" sees 4 devices, 2 visible through "+vis, r.Reason)
			c.paired(t, calls)
		}})
	add(c.Visible != "", Case{Name: "visible empty", Env: []string{c.Visible + "="},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.Equal(t, c.Visible+"=", r.Visibility)
			if c.EmptyUndecidable {
				assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "not documented: not guessed")
				return
			}
			require.NoError(t, r.Err)
			assert.Equal(t, len(c.Answer.Devices), r.Total)
			assert.Empty(t, r.Devices, "set and empty hides every device")
		}})
	for _, v := range c.Ignored {
		add(vars.Count != "", Case{Name: v + " ignored", Env: []string{vars.Count + "=2", v + "=1"},
			Check: func(t *testing.T, r presence.Report, calls []string) {
				require.NoError(t, r.Err)
				assert.Len(t, r.Devices, 2, "not the runtime's variable")
				assert.Equal(t, "", r.Visibility)
			}})
	}
	// Sixteen callers at once agree, whether the library counts its inits
	// or not: presence.Query runs one session of a library at a time.
	add(true, Case{Name: "concurrent calls",
		Run: func(t *testing.T) presence.Report {
			var wg sync.WaitGroup
			reports := make([]presence.Report, 16)
			for i := range reports {
				wg.Go(func() { reports[i] = source(presence.NewEnv()) })
			}
			wg.Wait()
			for _, r := range reports[1:] {
				require.NoError(t, r.Err)
				require.Equal(t, reports[0].Devices, r.Devices)
			}
			return reports[0]
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			assert.Len(t, r.Devices, len(c.Answer.Devices))
			assert.Equal(t, 16, Count(calls, c.Init))
			if c.Shutdown != "" {
				assert.Equal(t, 16, Count(calls, c.Shutdown))
			}
		}})
	// No source of the presence tier loads a driver: the binding and the
	// vendor's other sources, with a tripwire libcuda first on
	// LD_LIBRARY_PATH.
	add(true, Case{Name: "no driver is loaded", Setup: Tripwire,
		Run: func(t *testing.T) presence.Report {
			e := presence.NewEnv()
			r := source(e)
			require.NoError(t, r.Err)
			if c.Also != nil {
				c.Also(e)
			}
			return r
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			assert.Len(t, r.Devices, len(c.Answer.Devices))
			assert.Equal(t, c.Source, r.Source)
			NoDriverLoaded(t)
		}})
	return cases
}

// testOpen runs, in the test's own process, the cases where the library is
// not opened: not found (its reason names the library's file and override),
// a relative override and an override in a folder others may write to.
func (c *Common) testOpen(t *testing.T, lib Lib, source func(*presence.Env) presence.Report) {
	t.Run("not found", func(t *testing.T) {
		dir := dltest.PrivateDir(t)
		absent := "presencetest-absent-" + lib.Soname
		r := source(presence.NewEnv(presence.WithLookupEnv(Lookup()), presence.WithSearch(func(l *clib.Library) {
			l.Sonames = []string{absent}
			l.Dirs = []string{dir}
		})))
		assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
		assert.Equal(t, c.Source, r.Source)
		assert.Equal(t, lib.Soname+" not found (tried "+absent+"); install the driver's management library or set "+
			lib.Override+"=/abs/path/to/"+lib.Soname, r.Reason)
		require.Len(t, r.Attempts, 1, "a folder without the file is no attempt")
		assert.Equal(t, absent, r.Attempts[0].Path)
		assert.Contains(t, r.Attempts[0].Error, "not found in LD_LIBRARY_PATH", "the attempt says where the loader's search looked")
		assert.False(t, r.Available())
	})
	t.Run("relative override", func(t *testing.T) {
		r := source(presence.NewEnv(presence.WithLookupEnv(Lookup(lib.Override, lib.Soname))))
		assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
		assert.Contains(t, r.Reason, lib.Override+`="`+lib.Soname+`" cannot be used: the path must be absolute`)
	})
	t.Run("override in an open folder", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o777))
		p := filepath.Join(dir, lib.Soname)
		require.NoError(t, os.WriteFile(p, []byte("not loaded: the folder is checked first"), 0o644))
		r := source(presence.NewEnv(presence.WithLookupEnv(Lookup(lib.Override, p))))
		assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
		assert.Contains(t, r.Reason, "chmod o-w")
		require.Len(t, r.Attempts, 1)
		assert.Equal(t, p, r.Attempts[0].Path)
	})
}

// CodeNames checks a library's table of result-code names: each starts
// with prefix, and the codes a binding tells apart have the names want
// gives them.
func CodeNames(t *testing.T, names map[int]string, prefix string, want map[int]string) {
	t.Helper()
	for code, name := range names {
		assert.True(t, strings.HasPrefix(name, prefix), "%d: %s", code, name)
	}
	for code, name := range want {
		assert.Equal(t, name, names[code], "code %d", code)
	}
}

// Fallback checks a vendor's presence sources on a machine whose device
// nodes tr holds and whose management library is missing (the search finds
// none; no variable is set): two reports, in order, the first from source
// first, not available, its error matching firstErr, and the device nodes
// last, with devices devices. It returns the reports, for the vendor's own
// further checks.
func Fallback(t *testing.T, sources func(*presence.Env) []presence.Report, tr *Tree, first string, firstErr error, devices int) []presence.Report {
	t.Helper()
	rs := sources(presence.NewEnv(presence.WithRoot(tr.Root), presence.WithLookupEnv(Lookup()),
		presence.WithSearch(func(l *clib.Library) { l.Sonames, l.Dirs = []string{"presencetest-absent-" + l.Name + ".so"}, nil })))
	require.Len(t, rs, 2)
	assert.Equal(t, first, rs[0].Source)
	assert.ErrorIs(t, rs[0].Err, firstErr)
	assert.False(t, rs[0].Available())
	assert.Equal(t, presence.SourceNodes, rs[1].Source, "the device nodes, last")
	assert.Len(t, rs[1].Devices, devices)
	assert.Equal(t, devices > 0, rs[1].Available())
	return rs
}
