package flagshim

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/onecpu"
)

// The child side of the isolated probe (isolated.go). It runs from this
// package's init, before the program's main, only when FLAGSHIM_PROBE_CHILD
// names this process's parent: a variable inherited by anything else (a
// grandchild, a program started with it by hand) is ignored, and the child
// removes it so its own children never see it.
func init() {
	v, ok := os.LookupEnv(probeChildEnv)
	if !ok {
		return
	}
	os.Unsetenv(probeChildEnv)
	ppid, rest, _ := strings.Cut(v, ":")
	name, memory, _ := strings.Cut(rest, ":")
	if pid, err := strconv.Atoi(ppid); err != nil || pid != os.Getppid() {
		return
	}
	os.Exit(probeChild(device.Type(name), memory == childMemory, os.NewFile(3, "flagshim-probe")))
}

// probeChild loads vendor t's driver exactly and writes its steps and facts
// to out; the exit status.
func probeChild(t device.Type, freeMemory bool, out *os.File) int {
	if out == nil {
		return 3
	}
	defer out.Close()
	// A process that initializes a driver and exits: on one CPU its exit
	// is cheaper (internal/onecpu), and the parent waits for it. Best
	// effort: a child that cannot be pinned answers all the same.
	_, _ = onecpu.Pin()
	var v *driver.Vendor
	for _, vd := range vendors {
		if vd.v.Type == t {
			v = vd.v
		}
	}
	if v == nil {
		fmt.Fprintf(os.Stderr, "flagshim probe child: unknown vendor %q\n", t)
		return 2
	}
	b := driver.New(v,
		driver.WithInitTimeout(1<<62), // the parent keeps the time
		driver.WithStepHook(func(step string) { fmt.Fprintf(out, "step %s\n", step) }))
	f := b.ExactFacts(freeMemory)
	line, err := json.Marshal(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "flagshim probe child: %v\n", err)
		return 1
	}
	fmt.Fprintf(out, "facts %s\n", line)
	return 0
}
