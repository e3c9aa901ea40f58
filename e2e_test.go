package flagshim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/drivers/hip"
	"github.com/flagos-ai/flagshim/drivers/musa"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/cli"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/probe"
	"github.com/flagos-ai/flagshim/report"
	"github.com/flagos-ai/flagshim/vendors"
)

// fakes are the fake driver libraries, built once per test binary into a
// folder that lives as long as the binary (TestMain removes it), so that
// every test may use them whichever runs first.
var fakes struct {
	once       sync.Once
	dir        string
	cuda, musa string // absolute paths of libcuda.so.1 / libmusa.so.1
	hip        string // libamdhip64.so.6
	nvml       string // libnvidia-ml.so.1 (the presence tier's NVML)
	missing    string // a folder that holds no library
}

func TestMain(m *testing.M) {
	flagshim.ServeProbeChild() // the isolated tier's tests re-execute this binary as their probe children
	code := m.Run()
	if fakes.dir != "" {
		os.RemoveAll(fakes.dir)
	}
	os.Exit(code)
}

func buildFakes(t *testing.T) {
	t.Helper()
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake driver libraries")
	}
	fakes.once.Do(func() {
		dir, err := os.MkdirTemp("", "flagshim-fakes-")
		require.NoError(t, err)
		fakes.dir = dir
		require.NoError(t, os.Chmod(dir, 0o755))
		lib := filepath.Join(dir, "lib")
		fakes.missing = filepath.Join(dir, "empty")
		require.NoError(t, os.MkdirAll(lib, 0o755))
		require.NoError(t, os.MkdirAll(fakes.missing, 0o755))
		cuda := vendorstest.Driver(t, cuda.Vendor(), lib)
		musa := vendorstest.Driver(t, musa.Vendor(), lib)
		hip := vendorstest.Driver(t, hip.Vendor(), lib)
		nvml := vendorstest.Management(t, "nvml", lib)
		fakes.cuda, fakes.musa, fakes.hip, fakes.nvml = cuda, musa, hip, nvml
	})
	if fakes.cuda == "" {
		t.Fatal("building the fake driver libraries failed in an earlier test")
	}
}

// machine is one scenario of drivers present on a machine.
type machine struct {
	name       string
	cuda       bool   // a libcuda is there
	cudaEnv    string // FAKE_CUDA_* settings of that library
	musa       bool
	musaEnv    string
	hip        bool
	hipEnv     string
	cudaUsable bool // the true CUDA runtime works with at least one device
	musaDevs   int  // usable MUSA devices (0: none or not usable)
	hipDevs    int  // usable HIP devices
	cudaDevs   int
}

var machines = []machine{
	{name: "no drivers"},
	{name: "musa only, 1 device", musa: true, musaEnv: "DEVICE_COUNT=1", musaDevs: 1},
	{name: "musa only, 2 devices", musa: true, musaEnv: "DEVICE_COUNT=2", musaDevs: 2},
	{name: "musa with 0 devices", musa: true, musaEnv: "DEVICE_COUNT=0"},
	{name: "cuda only", cuda: true, cudaEnv: "DEVICE_COUNT=2", cudaUsable: true, cudaDevs: 2},
	{name: "cuda and musa", cuda: true, cudaEnv: "DEVICE_COUNT=2", musa: true, musaEnv: "DEVICE_COUNT=3", cudaUsable: true, cudaDevs: 2, musaDevs: 3},
	{name: "stub libcuda with musa", cuda: true, cudaEnv: "STUB=1", musa: true, musaEnv: "DEVICE_COUNT=2", musaDevs: 2},
	{name: "cuInit 100 with musa", cuda: true, cudaEnv: "INIT_RESULT=100", musa: true, musaEnv: "DEVICE_COUNT=2", musaDevs: 2},
	{name: "cuInit 803 with musa", cuda: true, cudaEnv: "INIT_RESULT=803", musa: true, musaEnv: "DEVICE_COUNT=1", musaDevs: 1},
	{name: "hip only, 2 devices", hip: true, hipEnv: "DEVICE_COUNT=2", hipDevs: 2},
	{name: "hip init failing", hip: true, hipEnv: "INIT_RESULT=100"},
	{name: "musa and hip", musa: true, musaEnv: "DEVICE_COUNT=1", hip: true, hipEnv: "DEVICE_COUNT=2", musaDevs: 1, hipDevs: 2},
	{name: "hip with cuda", cuda: true, cudaEnv: "DEVICE_COUNT=1", hip: true, hipEnv: "DEVICE_COUNT=3", cudaUsable: true, cudaDevs: 1, hipDevs: 3},
}

// expectation is what the rules of docs/architecture.md say a scenario must give.
type expectation struct {
	initFails   bool        // a bad setting
	badVars     []string    // the variables Init must name
	route       device.Type // where flagos routes; "" for none
	flagosDevs  int
	aliasActive bool
	aliasOff    bool // FLAGOS_ALIAS_CUDA forbids the alias
}

func expect(m machine, aliasEnv, backendEnv string) expectation {
	var e expectation
	allow, err := alias.ParseEnv(aliasEnv)
	if err != nil {
		e.badVars = append(e.badVars, alias.EnvVar)
	}
	if backendEnv == "bogus" {
		e.badVars = append(e.badVars, flagos.EnvVar)
	}
	e.initFails = len(e.badVars) > 0
	e.aliasOff = err == nil && !allow
	switch backendEnv {
	case "", "auto": // musa, then hip, then cuda
		switch {
		case m.musaDevs > 0:
			e.route, e.flagosDevs = device.MUSA, m.musaDevs
		case m.hipDevs > 0:
			e.route, e.flagosDevs = device.HIP, m.hipDevs
		case m.cudaUsable:
			e.route, e.flagosDevs = device.CUDA, m.cudaDevs
		}
	case "hip":
		if m.hipDevs > 0 {
			e.route, e.flagosDevs = device.HIP, m.hipDevs
		}
	case "musa":
		if m.musaDevs > 0 {
			e.route, e.flagosDevs = device.MUSA, m.musaDevs
		}
	case "cuda":
		if m.cudaUsable {
			e.route, e.flagosDevs = device.CUDA, m.cudaDevs
		}
	}
	e.aliasActive = !e.initFails && allow && !m.cudaUsable && e.flagosDevs > 0
	return e
}

func (m machine) env(aliasEnv, backendEnv, out string) []string {
	env := []string{
		"E2E_OUT=" + out,
		"FLAGOS_LIBCUDA_PATH=" + filepath.Join(fakes.missing, "libcuda.so.1"),
		"FLAGOS_LIBMUSA_PATH=" + filepath.Join(fakes.missing, "libmusa.so.1"),
		"FLAGOS_LIBHIP_PATH=" + filepath.Join(fakes.missing, "libamdhip64.so.6"),
		// Not on these machines: a host's own MACA or XRE stays out.
		"FLAGOS_LIBMCRUNTIME_PATH=" + filepath.Join(fakes.missing, "libmcruntime.so"),
		"FLAGOS_LIBXPURT_PATH=" + filepath.Join(fakes.missing, "libxpurt.so.1"),
	}
	if m.hip {
		env[3] = "FLAGOS_LIBHIP_PATH=" + fakes.hip
	}
	if m.cuda {
		env[1] = "FLAGOS_LIBCUDA_PATH=" + fakes.cuda
	}
	if m.musa {
		env[2] = "FLAGOS_LIBMUSA_PATH=" + fakes.musa
	}
	for _, kv := range strings.Fields(m.cudaEnv) {
		env = append(env, "FAKE_CUDA_"+kv)
	}
	for _, kv := range strings.Fields(m.musaEnv) {
		env = append(env, "FAKE_MUSA_"+kv)
	}
	for _, kv := range strings.Fields(m.hipEnv) {
		env = append(env, "FAKE_HIP_"+kv)
	}
	if aliasEnv != "<unset>" {
		env = append(env, alias.EnvVar+"="+aliasEnv)
	}
	if backendEnv != "<unset>" {
		env = append(env, flagos.EnvVar+"="+backendEnv)
	}
	return env
}

// observed is what the child process saw, through the library API and the
// CLI, in the one process.
type observed struct {
	InitErr     string
	Alias       alias.Decision
	ParseCUDA1  string
	ParseErr    string
	LookupCUDA  device.Type
	LookupErr   string
	UseCUDAErr  string // SetCurrent(0) on what Lookup(cuda) gave
	UseCUDANA   bool   // that error matches device.ErrNotAvailable
	UseCUDAName string // Properties(0).Name on it
	ComputeErr  string // an allocation, a copy both ways and a free on what Lookup(cuda) gave
	ComputeOK   bool
	Original    probe.Result
	Live        probe.Result
	RedirectBy  []string
	FlagosRoute device.Type
	FlagosDevs  int
	CLIInfo     json.RawMessage
	CLICode     int
	CLIStderr   string
	Resolve     string
	ResolveCode int
}

// TestE2EChild is the child's side of TestEndToEnd: it runs only when
// re-executed for a scenario.
func TestE2EChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as the child process of TestEndToEnd")
	}
	var o observed
	rep, err := flagshim.Init(context.Background())
	if err != nil {
		o.InitErr = err.Error()
	}
	o.Alias = rep.Alias
	if d, err := device.Parse("cuda:1"); err != nil {
		o.ParseErr = err.Error()
	} else {
		o.ParseCUDA1 = d.String()
	}
	if b, err := device.Lookup(device.CUDA); err != nil {
		o.LookupErr = err.Error()
	} else {
		o.LookupCUDA = b.Type()
		if err := b.SetCurrent(0); err != nil {
			o.UseCUDAErr = err.Error()
			o.UseCUDANA = errors.Is(err, device.ErrNotAvailable)
		} else if p, err := b.Properties(0); err == nil {
			o.UseCUDAName = p.Name
		}
		o.ComputeOK, o.ComputeErr = roundTrip(b)
	}
	o.Original = probe.Default.Original("cuda")
	o.Live = probe.Default.Live("cuda")
	o.RedirectBy = probe.Default.RedirectedBy("cuda")
	for _, b := range device.Default.Backends() {
		if fl, ok := b.(*flagos.Backend); ok {
			if r, err := fl.Route(); err == nil {
				o.FlagosRoute = r.Type()
				o.FlagosDevs, _ = fl.DeviceCount()
			}
		}
	}
	var stdout, stderr bytes.Buffer
	o.CLICode = cli.Run([]string{"info", "--json"}, &stdout, &stderr)
	o.CLIInfo, o.CLIStderr = bytes.Clone(stdout.Bytes()), stderr.String()
	if len(o.CLIInfo) == 0 {
		o.CLIInfo = json.RawMessage("null")
	}
	stdout.Reset()
	o.ResolveCode = cli.Run([]string{"resolve", "cuda:1"}, &stdout, &stderr)
	o.Resolve = strings.TrimSpace(stdout.String())

	b, err := json.Marshal(o)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(os.Getenv("E2E_OUT"), b, 0o600))
}

// roundTrip allocates on device 0 of b, copies bytes there and back and
// frees: what code written for cuda does first.
func roundTrip(b device.Backend) (bool, string) {
	mem, err := device.MemoryOf(b)
	if err != nil {
		return false, err.Error()
	}
	p, err := mem.Alloc(0, 16)
	if err != nil {
		return false, err.Error()
	}
	defer mem.Free(0, p)
	in, out := []byte("flagshim-e2e-123"), make([]byte, 16)
	if err := mem.CopyHtoD(0, p, in); err != nil {
		return false, err.Error()
	}
	if err := mem.CopyDtoH(0, out, p); err != nil {
		return false, err.Error()
	}
	return bytes.Equal(in, out), ""
}

// cliInfo is the part of `flagshim info --json` the scenarios check.
type cliInfo struct {
	Alias struct {
		Active   bool
		From, To string
		Reason   string
	}
	Backends []struct {
		Type      string
		Available bool
		Devices   int
		Reason    string
		Library   string
		RoutesTo  string `json:"routes_to"`
		Attempts  []report.Attempt
	}
	Probes []struct {
		Name         string
		Live         probe.Result
		Original     probe.Result
		RedirectedBy []string `json:"redirected_by"`
	}
	Phases []struct {
		Name, Step, Error string
	}
}

// expand follows the JSON's pointers ("see backend cuda": info --json gives
// each backend's reason once, report.ReferOnce) back to the reasons they
// stand for, so that a reason can be compared with the Go API's.
func (c cliInfo) expand(s string) string {
	for range len(c.Backends) + 1 { // a backend's reason may point to another's
		prev := s
		for i, b := range c.Backends {
			s = strings.ReplaceAll(s, report.Pointer(device.Type(b.Type)), c.ownReason(i))
		}
		if s == prev {
			break
		}
	}
	return s
}

// reasonOf is backend i's reason with its pointers followed: the attempts'
// errors it stands for, and other backends' reasons.
func (c cliInfo) reasonOf(i int) string { return c.expand(c.ownReason(i)) }

// ownReason is backend i's reason with the attempts' errors it stands for
// ("see attempts": info --json gives each attempt's error once,
// report.ReferAttemptsOnce) put back.
func (c cliInfo) ownReason(i int) string {
	b := c.Backends[i]
	typ := device.Type(b.Type)
	s := b.Reason
	for _, a := range b.Attempts {
		e := a.Error
		for _, o := range c.Backends { // an error given whole by an earlier backend's attempts
			if e == report.AttemptsPointer(device.Type(o.Type), typ) {
				for _, oa := range o.Attempts {
					if len([]rune(oa.Error)) > report.ReferMin {
						e = oa.Error
					}
				}
			}
		}
		if len([]rune(e)) > report.ReferMin {
			s = strings.Replace(s, report.AttemptsPointer(typ, typ), e, 1)
		}
	}
	return s
}

// TestEndToEnd runs every scenario of drivers present, FLAGOS_ALIAS_CUDA and
// FLAGOS_BACKEND in a process of its own, and checks the alias decision,
// resolve, routing, probes and exit codes through the library and the CLI.
func TestEndToEnd(t *testing.T) {
	buildFakes(t)
	aliasEnvs := []string{"<unset>", "0", "1", "bogus"}
	backendEnvs := []string{"<unset>", "musa", "hip", "cuda", "bogus"}
	// A bad setting fails Init whatever the machine: its cases run on three
	// machines (none, MUSA only, CUDA and MUSA), every other case on all.
	badOn := map[string]bool{"no drivers": true, "musa only, 2 devices": true, "cuda and musa": true}
	t.Logf("%d machines under every FLAGOS_ALIAS_CUDA and FLAGOS_BACKEND: one process per scenario, in parallel", len(machines))
	for _, m := range machines {
		for _, ae := range aliasEnvs {
			for _, be := range backendEnvs {
				if (ae == "bogus" || be == "bogus") && !badOn[m.name] {
					continue
				}
				name := fmt.Sprintf("%s/FLAGOS_ALIAS_CUDA=%s/FLAGOS_BACKEND=%s", m.name, ae, be)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					out := filepath.Join(t.TempDir(), "observed.json")
					dltest.MustChild(t, "TestE2EChild", m.env(ae, be, out)...)
					raw, err := os.ReadFile(out)
					require.NoError(t, err)
					var o observed
					require.NoError(t, json.Unmarshal(raw, &o))
					checkScenario(t, m, expect(m, strings.TrimPrefix(ae, "<unset>"), strings.TrimPrefix(be, "<unset>")), o)
				})
			}
		}
	}
}

func checkScenario(t *testing.T, m machine, e expectation, o observed) {
	// The original cuda probe is the true runtime, always.
	assert.Equal(t, m.cudaUsable, o.Original.Available, "original cuda probe: %s", o.Original.Reason)
	if m.cudaUsable {
		assert.Equal(t, m.cudaDevs, o.Original.Devices)
	}
	switch {
	case strings.Contains(m.cudaEnv, "STUB"):
		assert.Contains(t, o.Original.Reason, "CUDA_ERROR_STUB_LIBRARY")
	case strings.Contains(m.cudaEnv, "INIT_RESULT=100"):
		assert.Contains(t, o.Original.Reason, "CUDA_ERROR_NO_DEVICE")
	case strings.Contains(m.cudaEnv, "INIT_RESULT=803"):
		assert.Contains(t, o.Original.Reason, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH")
	}
	assert.Equal(t, e.route, o.FlagosRoute, "flagos routing")
	assert.Equal(t, e.flagosDevs, o.FlagosDevs)

	var info cliInfo
	if e.initFails {
		for _, v := range e.badVars {
			assert.Contains(t, o.InitErr, v)
			assert.Contains(t, o.ParseErr, v, "device.Default refuses to answer cuda under a bad setting")
			assert.Contains(t, o.CLIStderr, v)
		}
		assert.Contains(t, o.InitErr, flagshim.ErrBadSetting.Error())
		assert.Equal(t, 1, o.CLICode, "a bad setting is exit 1")
		assert.Equal(t, 1, o.ResolveCode)
		assert.Empty(t, o.Resolve)
		return
	}
	require.Empty(t, o.InitErr)
	require.Equal(t, 0, o.CLICode, o.CLIStderr)
	require.NoError(t, json.Unmarshal(o.CLIInfo, &info))
	assert.Equal(t, e.aliasActive, o.Alias.Active, o.Alias.Reason)
	assert.Equal(t, e.aliasActive, info.Alias.Active)
	assert.Equal(t, o.Alias.Reason, info.expand(info.Alias.Reason), "the JSON's reason, its pointers to backends followed")
	assert.Equal(t, 0, o.ResolveCode)

	if e.aliasActive {
		want := "flagos:1"
		assert.Equal(t, want, o.ParseCUDA1)
		assert.Equal(t, want, o.Resolve)
		assert.Equal(t, device.FlagOS, o.LookupCUDA)
		assert.Empty(t, o.UseCUDAErr, "cuda code runs on flagos")
		assert.True(t, o.ComputeOK, "memory through cuda lands on %s: %s", e.route, o.ComputeErr)
		assert.Contains(t, o.UseCUDAName, "("+string(e.route)+":0)", "and lands on the routed vendor's device")
		assert.True(t, o.Live.Available)
		assert.Equal(t, e.flagosDevs, o.Live.Devices)
		assert.Equal(t, []string{alias.Writer}, o.RedirectBy)
		assert.Contains(t, o.Alias.Reason, "set FLAGOS_ALIAS_CUDA=0")
	} else {
		assert.Equal(t, "cuda:1", o.ParseCUDA1)
		assert.Equal(t, "cuda:1", o.Resolve)
		assert.Equal(t, device.CUDA, o.LookupCUDA)
		assert.Equal(t, o.Original, o.Live, "no redirect")
		assert.Empty(t, o.RedirectBy)
		if !m.cudaUsable {
			assert.True(t, o.UseCUDANA, "cuda keeps failing loudly, with device.ErrNotAvailable: %s", o.UseCUDAErr)
			if e.aliasOff && e.flagosDevs > 0 {
				assert.Contains(t, o.UseCUDAErr, "alias is off (FLAGOS_ALIAS_CUDA=0)", "and says the variable turned the alias off")
			} else {
				assert.NotContains(t, o.UseCUDAErr, "alias is off")
			}
		} else {
			assert.Empty(t, o.UseCUDAErr)
		}
	}

	// The CLI's JSON tells the same story.
	byType := map[string]int{}
	for i, b := range info.Backends {
		byType[b.Type] = i
	}
	for _, typ := range []string{"cpu", "cuda", "musa", "hip", "flagos"} {
		require.Contains(t, byType, typ, "backend %s listed", typ)
	}
	fl := info.Backends[byType["flagos"]]
	assert.Equal(t, string(e.route), fl.RoutesTo)
	assert.Equal(t, e.flagosDevs, fl.Devices)
	cu := info.Backends[byType["cuda"]]
	assert.Equal(t, m.cudaUsable, cu.Available)
	if m.cuda {
		assert.Equal(t, fakes.cuda, cu.Library)
	}
	// The JSON lists a probe only where it says more than its backend: the
	// cuda probe when the alias redirected it; otherwise the cuda backend's
	// answer is the probe's.
	listed := false
	for _, p := range info.Probes {
		if p.Name == "cuda" {
			listed = true
			p.Original.Reason, p.Live.Reason = info.expand(p.Original.Reason), info.expand(p.Live.Reason)
			assert.Equal(t, o.Original, p.Original)
			assert.Equal(t, o.Live, p.Live)
			assert.Equal(t, len(o.RedirectBy), len(p.RedirectedBy))
		}
	}
	assert.Equal(t, len(o.RedirectBy) > 0, listed, "the cuda probe is listed when redirected")
	if !listed {
		assert.Equal(t, o.Original, probe.Result{Available: cu.Available, Devices: cu.Devices, Reason: info.reasonOf(byType["cuda"])},
			"the cuda backend gives the probe's answer")
	}
	var steps []string
	for _, p := range info.Phases {
		steps = append(steps, p.Name+"/"+p.Step)
		assert.Empty(t, p.Error)
	}
	want := []string{}
	for _, v := range vendors.All() {
		want = append(want, "drivers/"+string(v.Type))
	}
	want = append(want, "drivers/flagos", "vendor_compat/", "ecosystem/alias")
	assert.Equal(t, want, steps, "a drivers step per built-in vendor, in the registry's order")
}
