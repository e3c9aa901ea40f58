package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/report"
	"github.com/flagos-ai/flagshim/tier"
)

// Host is how the verdict names this library where its default tier
// answered: the Python package is its host too.
const Host = "libflagshim (the C library and Python)"

// infoJSON is the report of this process's Init (report.Info, the object
// `flagshim info --json` prints), as compact JSON. Its verdict and
// probe_source say which tier answered and why (the library's default,
// presence, or FLAGOS_PROBE), where the CLI's default is isolated. A bad
// setting is a failure, as it is for the CLI; a step that failed is in the
// report's phases, as the CLI's JSON has it.
func infoJSON() (string, failure) {
	rep, err := initHost()
	if rep == nil || errors.Is(err, flagshim.ErrBadSetting) {
		if err == nil {
			err = errors.New("flagshim: Init gave no report")
		}
		setInitErr(err)
		return "", failInit
	}
	askAll(rep)
	b, err := json.Marshal(report.Collect(rep, report.Options{FreeMemory: true, DefaultTier: tier.Presence, Host: Host}))
	if err != nil {
		setErr(fmt.Errorf("flagshim: the report cannot be written as JSON: %w", err))
		return "", failInit
	}
	s := string(b)
	infoBuilds.Add(1)
	if onInfo != nil {
		onInfo(s)
	}
	return s, failNone
}

// onInfo gets every answer infoJSON builds (fork.go's publishes it for
// forked children); infoBuilds counts them.
var (
	onInfo     func(string)
	infoBuilds atomic.Int32
)

// askAll asks every vendor backend's probe at once, each on a goroutine of
// its own, where the presence tier answers: the report asks each of them
// anyway (flagos's route asks them one after the other, each vendor's
// management library and device nodes), and the Python package reads the
// report right after its first call (what a forked child answers from), so
// a host's first answer waited for every absent vendor in turn (1.5 ms of
// 3 on a 2-core machine with fakes, issue 40). Each backend's probe runs
// once whoever asks, and so does askAll; the exact tier, which would
// initialize the drivers, is left to ask in order.
func askAll(rep *flagshim.Report) {
	if rep.Probe == tier.Presence {
		askedAll.Do(askEach)
	}
}

var askedAll sync.Once

func askEach() {
	var wg sync.WaitGroup
	for _, b := range device.Default.Backends() {
		if t := b.Type(); t == device.CPU || t == device.FlagOS {
			continue // answers at once, and flagos routes to the others
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Available()
		}()
	}
	wg.Wait()
}
