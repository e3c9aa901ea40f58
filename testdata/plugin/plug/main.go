// Command plug is a Go plugin (go build -buildmode=plugin) that adds a
// backend of type "plug" to flagshim when it is opened, for plugin_test.go.
// Its init is the only code that runs on plugin.Open, and it cannot return an
// error: the outcome is exported as RegisterErr for the host to read.
package main

import (
	"context"
	"fmt"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// Type is the plugin's backend type and probe name.
const Type device.Type = "plug"

// RegisterErr is the error of adding the plugin's step: it wraps
// flagshim.ErrInitDone when the plugin was opened after flagshim.Init.
var RegisterErr error

// Devices is the device registry the plugin sees, for the host to compare
// with its own.
var Devices = device.Default

func init() {
	err := flagshim.AddStep(flagshim.PhaseDrivers, string(Type), func(context.Context) error {
		b := backend{n: 2}
		if err := device.Register(b); err != nil {
			return err
		}
		return probe.Default.Register(string(Type), b.Available)
	})
	if err != nil {
		RegisterErr = fmt.Errorf("plug plugin: %w", err)
	}
}

func main() {}

type backend struct{ n int }

func (b backend) Type() device.Type { return Type }
func (b backend) Available() probe.Result {
	return probe.Result{Available: true, Devices: b.n, Reason: "2 devices from the plug plugin"}
}
func (b backend) DeviceCount() (int, error) { return b.n, nil }
func (b backend) Current() (int, error)     { return 0, nil }
func (b backend) SetCurrent(int) error      { return nil }
func (b backend) Synchronize(int) error     { return nil }
func (b backend) Properties(i int) (device.Properties, error) {
	return device.Properties{Name: fmt.Sprintf("plug %d", i), Vendor: "plug"}, nil
}
