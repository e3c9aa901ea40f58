package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/internal/logging"
	"github.com/flagos-ai/flagshim/tier"
	"github.com/flagos-ai/flagshim/vendors"
)

// The plugin's state: the backend flagos routes to, decided on the first
// call (flagshim.Init, exact tier: the driver is initialized in FlagCX's
// process, as FlagCX's own adaptors do), and the name FlagCX was told at
// load (loadName). Every function answers a flagcxResult_t; a failure's
// reason goes to flagshim's logger (FLAGOS_LOG) and to lastError, which
// flagcxshim_last_error reads (FlagCX's v1 has no getLastError).

// result is flagcxResult_t (flagcx.h): the codes the plugin answers.
type result int32

const (
	resSuccess         result = 0
	resUnhandledDevice result = 1 // a driver's failure, as the built-in adaptors' DEVCHECK gives
	resSystem          result = 2
	resInternal        result = 3
	resInvalidArgument result = 4
	resInProgress      result = 7
	resNotSupported    result = 9
)

type plugin struct {
	once sync.Once
	b    *driver.Backend // the routed vendor backend; nil when none
	typ  device.Type
	err  error // why there is no backend
	// direct: the hot fields are served in C (fast.go)
	direct bool
	log    *zap.Logger
}

var the plugin

// lastError is the last failure's reason, for flagcxshim_last_error.
var lastError atomic.Pointer[string]

// backend returns the routed backend, deciding it on first use.
func (p *plugin) backend() (*driver.Backend, error) {
	p.once.Do(p.init)
	return p.b, p.err
}

func (p *plugin) logger() *zap.Logger {
	p.once.Do(p.init)
	return p.log
}

func (p *plugin) init() {
	p.log = zap.NewNop()
	if l, err := logging.FromEnv(); err == nil && l != nil {
		p.log = l.Named("flagcx")
	}
	_, err := flagshim.Init(context.Background(), flagshim.WithDefaultProbe(tier.Exact), flagshim.WithoutChildProcesses(), flagshim.WithLogger(p.log))
	if err != nil {
		p.err = fmt.Errorf("flagshim: Init: %w", err)
		p.log.Error("no backend for FlagCX", zap.Error(p.err))
		return
	}
	fb, err := device.Lookup(device.FlagOS)
	if err != nil {
		p.err = fmt.Errorf("flagshim: the flagos backend: %w", err)
		p.log.Error("no backend for FlagCX", zap.Error(p.err))
		return
	}
	fl, ok := fb.(*flagos.Backend)
	if !ok {
		p.err = fmt.Errorf("flagshim: the flagos backend is a %T, not flagshim's", fb)
		return
	}
	to, err := fl.Route()
	if err != nil {
		p.err = fmt.Errorf("flagshim: flagos routes nowhere: %w", err)
		p.log.Error("no backend for FlagCX", zap.Error(p.err))
		return
	}
	b, ok := to.(*driver.Backend)
	if !ok {
		p.err = fmt.Errorf("flagshim: flagos routes to %s, a %T, not a backend of flagshim's driver core", to.Type(), to)
		return
	}
	p.b, p.typ = b, b.Type()
	if want := loadName.Load(); want != nil && *want != nameOf(p.typ) {
		p.log.Warn("FlagCX was told another backend at load than flagos routes to now",
			zap.String("told", *want), zap.String("routes_to", string(p.typ)))
	}
	p.log.Info("FlagCX device adaptor ready", zap.String("backend", string(p.typ)), zap.String("vendor", vendorOf(b)))
	fastSetup(p)
}

// nameOf is the plugin's name for a backend: "flagshim:cuda".
func nameOf(t device.Type) string { return "flagshim:" + string(t) }

// loadName is the name written into the exported struct at load.
var loadName atomic.Pointer[string]

// decideAtLoad names the backend the plugin will use, for the struct's
// name field, without running any code of a driver: it runs inside the
// library's constructor, under the dynamic loader's lock, where a driver's
// init (which loads libraries from other threads) would deadlock. It is
// FLAGOS_BACKEND's vendor when it names one, else the first vendor of
// flagos's auto order whose library is found and whose device nodes are
// there (the facts the exact tier checks before it loads anything); the
// real route is decided on the first call, and a different answer then is
// logged.
func decideAtLoad(getenv func(string) string) string {
	auto, name, err := flagos.ParseChoice(getenv(flagos.EnvVar))
	if err != nil {
		return "flagshim:invalid"
	}
	if !auto {
		return nameOf(name)
	}
	for _, t := range vendors.AutoOrder() {
		v, ok := vendors.Lookup(t)
		if !ok {
			continue
		}
		if _, _, err := v.Library.Find(getenv); err != nil {
			continue
		}
		// A library named by its override is loaded whatever nodes are
		// there (the driver core's rule).
		if (v.Library.EnvVar != "" && getenv(v.Library.EnvVar) != "") || nodesPresent(v.Library.Nodes) {
			return nameOf(t)
		}
	}
	return "flagshim:none"
}

func nodesPresent(nodes []string) bool {
	for _, n := range nodes {
		if _, err := os.Stat(n); err != nil {
			return false
		}
	}
	return true
}

// flagcxVendors maps whose runtime answered (driver.Backend's Describe
// Vendor, the maker named from facts) to FlagCX's vocabulary: the strings
// its own adaptors' getVendor write (FlagCX at 0c721293,
// flagcx/adaptor/device/: cuda_adaptor.cc "NVIDIA", ixcuda_adaptor.cc
// "ILUVATAR_COREX", ppu_cuda_adaptor.cc "PPU", maca_adaptor.cc "METAX",
// kunlunxin_adaptor.cc "KUNLUNXIN", musa_adaptor.cc "MUSA", hip_adaptor.cc
// "AMD", ducuda_adaptor.cc "DU" (FlagCX's DU platform, whose collective
// library DUCCL comes from Hygon's developer site: Hygon's DCUs, inferred),
// mlu_adaptor.cc "MLU", cann_adaptor.cc "ASCEND", tops_adaptor.cc
// "ENFLAME"). FlagCX's core/cluster.cc keys algorithms on "NVIDIA",
// "ILUVATAR_COREX", "MLU" and "METAX": a runtime behind libcuda that is not
// NVIDIA's must not say "NVIDIA".
var flagcxVendors = map[string]string{
	"NVIDIA":          "NVIDIA",
	"Iluvatar CoreX":  "ILUVATAR_COREX",
	"T-Head PPU":      "PPU",
	"MetaX cu-bridge": "METAX",
	"MetaX":           "METAX",
	"Kunlunxin":       "KUNLUNXIN",
	"Moore Threads":   "MUSA",
	"AMD":             "AMD",
	"Hygon":           "DU",
	"Cambricon":       "MLU",
	"Huawei":          "ASCEND",
	"Enflame":         "ENFLAME",
}

// unknownVendor is getVendor's answer when no fact names the maker (or the
// devices are of several makers): never another maker's name.
const unknownVendor = "UNKNOWN"

// vendorOf is FlagCX's name for whose runtime answers b.
func vendorOf(b *driver.Backend) string {
	if v, ok := flagcxVendors[b.Describe().Vendor]; ok {
		return v
	}
	return unknownVendor
}

// fail records err (what was called, why) and returns its FlagCX code.
func fail(fn string, err error) result {
	r := codeOf(err)
	msg := fn + ": " + strings.ReplaceAll(err.Error(), "\n", "; ")
	lastError.Store(&msg)
	the.logger().Warn("FlagCX call failed", zap.String("function", fn), zap.Int("flagcx_result", int(r)), zap.Error(err))
	return r
}

// bad records an argument FlagCX should not have passed.
func bad(fn, why string) result { return fail(fn, fmt.Errorf("%w: %s", errBadArgument, why)) }

var errBadArgument = errors.New("invalid argument")

// codeOf maps flagshim's sentinels to FlagCX's codes: arguments the
// plugin or the driver refused are InvalidArgument, work not done yet
// InProgress, what the backend lacks NotSupported, and the driver's other
// failures UnhandledDeviceError (as the built-in adaptors' DEVCHECK).
func codeOf(err error) result {
	switch {
	case err == nil:
		return resSuccess
	case errors.Is(err, errBadArgument), errors.Is(err, device.ErrInvalidValue), errors.Is(err, device.ErrInvalidIndex),
		errors.Is(err, device.ErrReleased), errors.Is(err, device.ErrNotFound):
		return resInvalidArgument
	case errors.Is(err, device.ErrNotReady):
		return resInProgress
	case errors.Is(err, device.ErrNotSupported):
		return resNotSupported
	}
	return resUnhandledDevice
}

// call runs f with the backend, mapping its error.
func call(fn string, f func(b *driver.Backend) error) result {
	b, err := the.backend()
	if err != nil {
		return fail(fn, err)
	}
	if err := f(b); err != nil {
		return fail(fn, err)
	}
	return resSuccess
}
