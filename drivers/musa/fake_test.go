package musa

import (
	"os"
	"testing"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/gpudrv/gpudrvtest"
)

var harness = &gpudrvtest.Harness{
	Pkg:        "musa",
	Sym:        "mu",
	ErrPrefix:  "MUSA_",
	EnvVar:     EnvVar,
	VisibleEnv: VisibleDevicesEnv,
	Lib:        "libmusa",
	Source:     "testdata/fake_libmusa.c",
	Include:    "../../internal/gpudrv/testdata",
	Version:    [2]int{3, 1},
	Errs:       errs,
	New:        func(spec dl.Spec) gpudrvtest.Backend { return New(withSpec(spec)) },
	NewWith: func(spec dl.Spec, hooks *device.Hooks, note func() string) gpudrvtest.Backend {
		return New(withSpec(spec), WithHooks(hooks), WithUnavailableNote(note))
	},
	Spec:  defaultSpec(),
	Child: "TestFakeChild",
}

func TestMain(m *testing.M) {
	code := m.Run()
	gpudrvtest.Cleanup()
	os.Exit(code)
}

// TestFakes runs every loader-dependent case against testdata's fake
// libmusa.so.1, each in a child process.
func TestFakes(t *testing.T) { harness.Run(t) }

// TestFakeChild is the child side of TestFakes.
func TestFakeChild(t *testing.T) { harness.ChildMain(t) }

func TestNewDoesNoIO(t *testing.T) {
	b := New(WithLogger(nil))
	if b.b.Loaded() {
		t.Fatal("New loaded the library")
	}
	if b.Type() != "musa" || b.b.Loaded() {
		t.Fatal("Type loaded the library")
	}
}

func BenchmarkCurrent(b *testing.B)                    { harness.BenchCurrent(b) }
func BenchmarkSetCurrent(b *testing.B)                 { harness.BenchSetCurrent(b) }
func BenchmarkSynchronize(b *testing.B)                { harness.BenchSynchronize(b) }
func BenchmarkSynchronizeRegisterLibFunc(b *testing.B) { harness.BenchSynchronizeRegisterLibFunc(b) }

var one = [3]uint32{1, 1, 1}

func BenchmarkLaunch3Args(b *testing.B) {
	harness.BenchLaunch(b, "nop3", func(be gpudrvtest.Backend, fn Function, p DevicePtr) error {
		return be.(*Backend).Launch(0, fn, one, one, 0, p, p+8, uint32(1000))
	})
}

func BenchmarkLaunch8Args(b *testing.B) {
	harness.BenchLaunch(b, "nop8", func(be gpudrvtest.Backend, fn Function, p DevicePtr) error {
		return be.(*Backend).Launch(0, fn, one, one, 0, p, p+8, uint32(1000), uint32(7), uint64(1<<40), uint64(3), float32(0.5), float64(2.5))
	})
}
