package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/vendors"
)

// registerExtraVendors registers $PROCSPLIT_VENDORS out-of-tree vendors
// whose libraries and device nodes are nowhere (as examples/acme registers
// one), before the CLI's Init: scripts/scale-bench.py measures what each
// vendor searched and not found costs a command, from the slope of its
// time against their number.
func registerExtraVendors() error {
	s := os.Getenv("PROCSPLIT_VENDORS")
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1000 {
		return fmt.Errorf("PROCSPLIT_VENDORS=%q: want a count from 0 to 1000", s)
	}
	for i := range n {
		name := fmt.Sprintf("xv%d", i)
		upper := fmt.Sprintf("XV%d", i)
		v := cuda.Family(name, upper+"_")
		v.Type, v.Name = device.Type(name), "Extra vendor "+strconv.Itoa(i)
		v.Library = clib.Library{
			Name:    "lib" + name,
			EnvVar:  "FLAGOS_LIB" + upper + "_PATH",
			Sonames: []string{"lib" + name + ".so.1", "lib" + name + ".so"},
			Dirs:    []string{"/opt/" + name + "/lib"},
		}
		v.VersionBase = 1000
		v.UUIDPrefix = upper + "-"
		v.VisibleEnv = []string{upper + "_VISIBLE_DEVICES"}
		v.DeviceNodes = presence.NodeSpec{What: "/dev/" + name + "*", Dir: "/dev", Prefixes: []string{name}, Visible: upper + "_VISIBLE_DEVICES"}
		if err := vendors.Register(v); err != nil {
			return err
		}
	}
	return nil
}
