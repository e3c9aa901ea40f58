package device_test

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/probe"
)

// musaMachine is a machine whose only accelerator is a MUSA GPU (two
// devices, in the test double), with flagos in front of it and no CUDA.
func musaMachine() (*device.Registry, *probe.Registry, *devicetest.Backend) {
	musa := devicetest.New(devicetest.Config{Type: device.MUSA, Devices: []devicetest.Device{{Name: "MTT S4000"}, {Name: "MTT S4000"}}, Hooks: hooks.NewHooks()})
	noCUDA := devicetest.New(devicetest.Config{Type: device.CUDA, Unavailable: "libcuda.so.1 not found"})
	devs := device.NewRegistry()
	_ = devs.Register(musa)
	_ = devs.Register(noCUDA)
	fl := flagos.New(devs, flagos.WithGetenv(func(string) string { return "" }))
	_ = devs.Register(fl)
	probes := probe.New()
	_ = probes.Register("cuda", noCUDA.Available)
	_ = probes.Register("flagos", fl.Available)
	return devs, probes, musa
}

// Parse reads a device string; where the cuda->flagos alias is installed,
// "cuda:1" means "flagos:1".
func ExampleRegistry_Parse() {
	devs, probes, _ := musaMachine()
	d, _ := devs.Parse("cuda:1")
	fmt.Println("before the alias:", d)

	_, undo, _ := alias.Install(devs, probes, "") // FLAGOS_ALIAS_CUDA unset
	defer undo()
	d, _ = devs.Parse("cuda:1")
	fmt.Println("after the alias:", d)

	_, err := devs.Parse("cuda:x")
	fmt.Println(errors.Is(err, device.ErrSyntax))
	// Output:
	// before the alias: cuda:1
	// after the alias: flagos:1
	// true
}

// Code written for cuda allocates, copies and launches through whatever cuda
// means: here the flagos device, routing to the MUSA backend.
func ExampleComputeOf() {
	devs, probes, musa := musaMachine()
	_, undo, _ := alias.Install(devs, probes, "")
	defer undo()
	image := musa.AddModule("inc", devicetest.Module{Kernels: map[string]devicetest.Kernel{
		"inc": func(l *devicetest.Launch) error { // a Go function stands for the GPU kernel
			b, err := l.Bytes(l.Args[0].(device.Ptr), 4)
			if err == nil {
				binary.LittleEndian.PutUint32(b, binary.LittleEndian.Uint32(b)+1)
			}
			return err
		},
	}})

	b, _ := devs.Lookup(device.CUDA) // the flagos backend
	mem, _ := device.MemoryOf(b)
	cmp, _ := device.ComputeOf(b)
	p, _ := mem.Alloc(1, 4)
	_ = mem.CopyHtoD(1, p, []byte{41, 0, 0, 0})
	m, _ := cmp.LoadModule(1, image, "inc")
	fn, _ := m.Function("inc")
	one := [3]uint32{1, 1, 1}
	_ = cmp.Launch(1, fn, one, one, 0, p)
	out := make([]byte, 4)
	_ = mem.CopyDtoH(1, out, p)
	fmt.Println(b.Type(), "ran it on", m.Backend(), "and got", out[0])

	_, err := mem.Alloc(7, 4)
	fmt.Println(errors.Is(err, device.ErrInvalidIndex))
	// Output:
	// flagos ran it on musa and got 42
	// true
}
