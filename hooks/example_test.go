package hooks_test

import (
	"fmt"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
	"github.com/flagos-ai/flagshim/hooks"
)

// A scoped hook runs only on the modules its scope matches: NVSHMEM's init
// only on modules that carry NVSHMEM's device symbols.
func ExampleHooks() {
	hs := hooks.NewHooks()
	remove, _ := hs.Register(hooks.Hook{
		Name:  "nvshmem-like",
		Scope: hooks.HasGlobals("nvshmemi_device_lib_version_d", "nvshmemi_device_state_d"),
		Init: func(m device.Module) error {
			fmt.Println("init on", m.Label())
			return nil
		},
	})
	defer remove()
	gpu := devicetest.New(devicetest.Config{Hooks: hs})
	plain := gpu.AddModule("plain", devicetest.Module{})
	shmem := gpu.AddModule("shmem", devicetest.Module{Globals: map[string]uint64{"nvshmemi_device_lib_version_d": 4, "nvshmemi_device_state_d": 8}})
	a, _ := gpu.LoadModule(0, plain, "a plain kernel")
	b, _ := gpu.LoadModule(0, shmem, "an NVSHMEM kernel")
	fmt.Println(hs.Applied(a), hs.Applied(b))
	// Output:
	// init on an NVSHMEM kernel
	// [] [nvshmem-like]
}
