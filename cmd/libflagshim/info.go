package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flagos-ai/flagshim"
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
	b, err := json.Marshal(report.Collect(rep, report.Options{FreeMemory: true, DefaultTier: tier.Presence, Host: Host}))
	if err != nil {
		setErr(fmt.Errorf("flagshim: the report cannot be written as JSON: %w", err))
		return "", failInit
	}
	return string(b), failNone
}
