// Command host imports flagshim and opens a Go plugin that imports it too,
// for plugin_test.go:
//
//	host before PLUGIN.so   open the plugin, then flagshim.Init
//	host after PLUGIN.so    flagshim.Init, then open the plugin
//
// It prints one JSON object (see result) and exits 0 unless the plugin
// could not be opened.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"plugin"
	"slices"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

type result struct {
	RegisterErr        string       `json:"register_err"`
	RegisterErrIsDone  bool         `json:"register_err_is_init_done"`
	SameRegistry       bool         `json:"same_registry"`
	InitErr            string       `json:"init_err"`
	Steps              []string     `json:"steps"`
	Types              []string     `json:"types"`
	LookupErr          string       `json:"lookup_err"`
	Devices            int          `json:"devices"`
	Probe              probe.Result `json:"probe"`
	ParsedPlug1        string       `json:"parsed_plug1"`
	LateAddStepIsDone  bool         `json:"late_add_step_is_init_done"`
	LateAddStepMessage string       `json:"late_add_step_message"`
}

func main() {
	if len(os.Args) != 3 || (os.Args[1] != "before" && os.Args[1] != "after") {
		fmt.Fprintln(os.Stderr, "usage: host before|after PLUGIN.so")
		os.Exit(2)
	}
	mode, path := os.Args[1], os.Args[2]
	var res result
	var rep *flagshim.Report
	var initErr error
	if mode == "after" {
		rep, initErr = flagshim.Init(context.Background())
	}

	p, err := plugin.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "host: open plugin:", err)
		os.Exit(1)
	}
	sym, err := p.Lookup("RegisterErr")
	if err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		os.Exit(1)
	}
	if regErr := *sym.(*error); regErr != nil {
		// What a host does with a late plugin: say why it was refused.
		fmt.Fprintln(os.Stderr, "host: plugin refused:", regErr)
		res.RegisterErr = regErr.Error()
		res.RegisterErrIsDone = errors.Is(regErr, flagshim.ErrInitDone)
	}
	if sym, err := p.Lookup("Devices"); err == nil {
		res.SameRegistry = *sym.(**device.Registry) == device.Default
	}

	if mode == "before" {
		rep, initErr = flagshim.Init(context.Background())
	}
	if initErr != nil {
		res.InitErr = initErr.Error()
	}
	for _, r := range rep.Phases {
		res.Steps = append(res.Steps, r.Phase+"/"+r.Step)
	}
	for _, t := range device.Default.Types() {
		res.Types = append(res.Types, string(t))
	}
	slices.Sort(res.Types)
	if b, err := device.Lookup("plug"); err != nil {
		res.LookupErr = err.Error()
	} else {
		res.Devices, _ = b.DeviceCount()
	}
	res.Probe = probe.Default.Original("plug")
	if d, err := device.Parse("plug:1"); err == nil {
		res.ParsedPlug1 = d.String()
	}
	err = flagshim.AddStep(flagshim.PhaseDrivers, "late", func(context.Context) error { return nil })
	res.LateAddStepIsDone = errors.Is(err, flagshim.ErrInitDone)
	if err != nil {
		res.LateAddStepMessage = err.Error()
	}

	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		os.Exit(1)
	}
}
