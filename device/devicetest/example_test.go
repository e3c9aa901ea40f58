package devicetest_test

import (
	"fmt"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
)

// A fake machine stands in for a GPU in a program's own tests: register it
// and use the device model as on real hardware.
func Example() {
	fake := devicetest.New(devicetest.Config{Type: "acme", Devices: []devicetest.Device{{Name: "Acme A1", Memory: 1 << 30}}})
	devs := device.NewRegistry()
	_ = devs.Register(fake)

	d, _ := devs.Parse("acme:0")
	b, _ := devs.Lookup(d.Type)
	p, _ := b.Properties(d.Index)
	mem, _ := device.MemoryOf(b)
	free, total, _ := mem.MemInfo(d.Index)
	fmt.Println(d, p.Name, free == total, total)
	// Output: acme:0 Acme A1 true 1073741824
}
