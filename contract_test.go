package flagshim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/phases"
	"github.com/flagos-ai/flagshim/probe"
)

// The public contract of docs/architecture.md, checked by the compiler: other code and
// acceptance checks rely on these names and signatures, so a change to any of
// them breaks this file's build before it breaks someone else's.
var (
	_                                                                                 = probe.Result{Available: true, Devices: 1, Reason: ""}
	_ probe.Func                                                                      = func() probe.Result { return probe.Result{} }
	_ func() *probe.Registry                                                          = probe.New
	_ *probe.Registry                                                                 = probe.Default
	_ func(*probe.Registry, string, probe.Func) error                                 = (*probe.Registry).Register
	_ func(*probe.Registry, string, string, probe.Func) (func(), error)               = (*probe.Registry).Redirect
	_ func(*probe.Registry, string) probe.Result                                      = (*probe.Registry).Live
	_ func(*probe.Registry, string) probe.Result                                      = (*probe.Registry).Original
	_ func(*probe.Registry, string) []string                                          = (*probe.Registry).RedirectedBy
	_                                                                                 = [4]device.Type{device.CPU, device.CUDA, device.MUSA, device.FlagOS}
	_                                                                                 = device.Device{Type: device.CUDA, Index: -1}
	_ func(device.Device) string                                                      = device.Device.String
	_                                                                                 = device.Properties{Name: "", Vendor: "", UUID: "", TotalMemory: 0, Major: 0, Minor: 0, MultiProcessors: 0}
	_ func() *device.Registry                                                         = device.NewRegistry
	_ *device.Registry                                                                = device.Default
	_ func(*device.Registry, device.Backend) error                                    = (*device.Registry).Register
	_ func(*device.Registry, device.Type) (device.Backend, error)                     = (*device.Registry).Lookup
	_ func(*device.Registry, device.Type) device.Type                                 = (*device.Registry).Resolve
	_ func(*device.Registry, device.Type, device.Type) (func(), error)                = (*device.Registry).Alias
	_ func(*device.Registry, string) (device.Device, error)                           = (*device.Registry).Parse
	_ func(string) (device.Device, error)                                             = device.Parse
	_ func(device.Type) (device.Backend, error)                                       = device.Lookup
	_ func(device.Backend) error                                                      = device.Register
	_                                                                                 = alias.EnvVar == "FLAGOS_ALIAS_CUDA"
	_                                                                                 = alias.Decision{Active: false, From: device.CUDA, To: device.FlagOS, Reason: ""}
	_ func(*probe.Registry, string) (alias.Decision, error)                           = alias.Decide
	_ func(*device.Registry, *probe.Registry, string) (alias.Decision, func(), error) = alias.Install
	_ func(context.Context, ...flagshim.Option) (*flagshim.Report, error)             = flagshim.Init
	_ func(string, string, func(context.Context) error) error                         = flagshim.AddStep
	_                                                                                 = flagshim.Report{Phases: []phases.Result{}, Alias: alias.Decision{}}
)

// The wave 2 contract: compute through any backend, vendor-neutral errors.
var (
	_ device.Ptr                                                                             = device.Ptr(0)
	_ func(device.Memory) (uint64, uint64, error)                                            = func(m device.Memory) (uint64, uint64, error) { return m.MemInfo(0) }
	_ func(device.Memory, int, uint64) (device.Ptr, error)                                   = device.Memory.Alloc
	_ func(device.Memory, int, device.Ptr) error                                             = device.Memory.Free
	_ func(device.Memory, int, device.Ptr, []byte) error                                     = device.Memory.CopyHtoD
	_ func(device.Memory, int, []byte, device.Ptr) error                                     = device.Memory.CopyDtoH
	_ func(device.Compute, int, []byte, string) (device.LoadedModule, error)                 = device.Compute.LoadModule
	_ func(device.Compute, int, device.Function, [3]uint32, [3]uint32, uint32, ...any) error = device.Compute.Launch
	_ func(device.LoadedModule, string) (device.Function, error)                             = device.LoadedModule.Function
	_ func(device.LoadedModule) error                                                        = device.LoadedModule.Unload
	_ device.Module                                                                          = device.LoadedModule(nil)
	_ func(device.Function) string                                                           = device.Function.Name
	_                                                                                        = [...]error{device.ErrInvalidIndex, device.ErrOutOfMemory, device.ErrNotFound, device.ErrNotSupported}
	_                                                                                        = device.HIP
)

// The wave 4 contract: one record per device, in every tier (issue 35).
var (
	_ func(device.Identifier, int) (device.Record, error) = device.Identifier.Record
	_ func(device.Identifier) []device.Record             = device.Identifier.Unusable
	_                                                     = device.Record{Device: "", Type: "", VisibleIndex: 0, Index: 0, Vendor: "", VendorNames: device.VendorNames{FlagOS: "", FlagGems: "", FlagCX: "", FlagTree: ""}, Name: "", UUID: "", PCIBusID: "", TotalMemory: 0, Major: 0, Minor: 0, MultiProcessors: 0, NUMANode: 0, DriverVersion: "", Parent: "", Tier: "", Usable: false, Reason: ""}
	_ func(device.Backend) (device.Identifier, error)     = device.IdentifierOf
)

// The Backend interface has exactly the contract's methods (a type with only
// these satisfies it).
var _ device.Backend = contractBackend{}

type contractBackend struct{}

func (contractBackend) Type() device.Type                         { return device.CPU }
func (contractBackend) Available() probe.Result                   { return probe.Result{} }
func (contractBackend) DeviceCount() (int, error)                 { return 0, nil }
func (contractBackend) Current() (int, error)                     { return 0, nil }
func (contractBackend) SetCurrent(int) error                      { return nil }
func (contractBackend) Synchronize(int) error                     { return nil }
func (contractBackend) Properties(int) (device.Properties, error) { return device.Properties{}, nil }

// The contract's values, which the compiler cannot check.
func TestContractValues(t *testing.T) {
	assert.Equal(t, "FLAGOS_ALIAS_CUDA", alias.EnvVar)
	assert.Equal(t, []device.Type{"cpu", "cuda", "musa", "flagos"}, []device.Type{device.CPU, device.CUDA, device.MUSA, device.FlagOS})
	assert.Equal(t, []string{"drivers", "vendor_compat", "ecosystem"}, []string{flagshim.PhaseDrivers, flagshim.PhaseVendorCompat, flagshim.PhaseEcosystem})
	assert.Equal(t, "cuda", device.Device{Type: device.CUDA, Index: -1}.String())
	assert.Equal(t, "flagos:1", device.Device{Type: device.FlagOS, Index: 1}.String())
}
