package alias_test

import (
	"fmt"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/probe"
)

// Decide reads the original probes only: a compatibility layer that
// redirected "is cuda available?" to say yes changes nothing.
func ExampleDecide() {
	probes := probe.New()
	_ = probes.Register("cuda", func() probe.Result { return probe.Result{Reason: "libcuda.so.1 not found"} })
	_ = probes.Register("flagos", func() probe.Result { return probe.Result{Available: true, Devices: 2, Reason: "routes to musa"} })
	_, _ = probes.Redirect("cuda", "vendor_compat", func() probe.Result { return probe.Result{Available: true, Devices: 2} })

	d, _ := alias.Decide(probes, "")
	fmt.Println(d.Active, d.From, "->", d.To)
	d, _ = alias.Decide(probes, "0")
	fmt.Println(d.Active, d.Blocked)
	_, err := alias.Decide(probes, "perhaps")
	fmt.Println(err != nil)
	// Output:
	// true cuda -> flagos
	// false true
	// true
}
