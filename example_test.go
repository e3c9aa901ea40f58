package flagshim_test

import (
	"context"
	"fmt"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
)

// A plugin adds its step to the default plan before Init; Init then runs
// every phase once, in order, and its report says what ran and how the cuda
// alias was decided. (The drivers found differ from machine to machine; the
// plan does not.)
func Example() {
	err := flagshim.AddStep(flagshim.PhaseVendorCompat, "acme-compat", func(context.Context) error {
		return nil // e.g. redirect a live probe for a framework's "is cuda available?"
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	rep, err := flagshim.Init(context.Background())
	if err != nil {
		fmt.Println("init:", err) // a bad setting, such as FLAGOS_ALIAS_CUDA=maybe
		return
	}
	// The drivers phase has a step per registered vendor, then flagos.
	drivers, driversOK := 0, true
	for _, r := range rep.Phases {
		if r.Phase == flagshim.PhaseDrivers {
			drivers++
			driversOK = driversOK && r.Err == nil
			continue
		}
		fmt.Printf("%s/%s ok=%v\n", r.Phase, r.Step, r.Err == nil)
	}
	fmt.Printf("drivers: a step per vendor and flagos's ok=%v\n", drivers > 1 && driversOK)
	// Whether cuda means flagos here, and why, in one sentence:
	fmt.Println("alias decided:", rep.Alias.From, "->", rep.Alias.To, rep.Alias.Reason != "")

	// Later calls answer from the same, once-per-process outcome.
	again, _ := flagshim.Init(context.Background())
	fmt.Println("same report:", again == rep)
	// Output:
	// vendor_compat/acme-compat ok=true
	// ecosystem/alias ok=true
	// drivers: a step per vendor and flagos's ok=true
	// alias decided: cuda -> flagos true
	// same report: true
}

// Listing the devices of this machine: every backend device.Default knows
// (Init runs first), and what each is now.
func Example_listDevices() {
	for _, b := range device.Default.Backends() {
		n, err := b.DeviceCount()
		if err != nil || n == 0 {
			continue // not available here; flagshim explain says why
		}
		for i := range n {
			d := device.Device{Type: b.Type(), Index: i}
			fmt.Println(d)
		}
	}
}
