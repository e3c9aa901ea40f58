package devicetest

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/probe"
)

// Config describes the fake machine.
type Config struct {
	// Type is the device type the backend registers under; "fake" when
	// empty.
	Type device.Type
	// Devices are the machine's devices; one "Fake GPU 0" when empty.
	Devices []Device
	// Unavailable, when set, makes the backend unavailable with this
	// reason: every call fails with an error matching
	// device.ErrNotAvailable.
	Unavailable string
	// Hooks is the module hook registry applied on LoadModule;
	// hooks.DefaultHooks when nil.
	Hooks *hooks.Hooks
}

// Device is one fake device. Zero fields get defaults: a name "Fake GPU
// <i>", a UUID, 16 GiB of memory, compute capability 9.0, 132
// multiprocessors.
type Device struct {
	Name            string
	Vendor          string // "devicetest" when empty
	UUID            string
	Memory          uint64
	Major, Minor    int
	MultiProcessors int
}

// Backend is the fake machine: a device.Backend, device.Describer,
// device.Memory, device.Compute, device.Streams and device.Graphs. Its methods are safe
// for concurrent use.
type Backend struct {
	typ    device.Type
	devs   []*dev
	reason string
	hooks  *hooks.Hooks
	cur    atomic.Int32

	mu      sync.Mutex
	modules map[string]Module // by name, see AddModule
	modSeq  int
	host    []*HostBuffer // live pinned buffers
}

// dev is one device's state.
type dev struct {
	index int
	props device.Properties
	mem   memory
}

var (
	_ device.Backend   = (*Backend)(nil)
	_ device.Describer = (*Backend)(nil)
	_ device.Memory    = (*Backend)(nil)
	_ device.Compute   = (*Backend)(nil)
	_ device.Streams   = (*Backend)(nil)
)

// New makes a fake machine.
func New(c Config) *Backend {
	b := &Backend{typ: c.Type, reason: c.Unavailable, hooks: c.Hooks, modules: map[string]Module{}}
	if b.typ == "" {
		b.typ = "fake"
	}
	if b.hooks == nil {
		b.hooks = hooks.DefaultHooks
	}
	if len(c.Devices) == 0 {
		c.Devices = []Device{{}}
	}
	for i, d := range c.Devices {
		p := device.Properties{Name: d.Name, Vendor: d.Vendor, UUID: d.UUID, TotalMemory: d.Memory,
			Major: d.Major, Minor: d.Minor, MultiProcessors: d.MultiProcessors}
		if p.Name == "" {
			p.Name = "Fake GPU " + strconv.Itoa(i)
		}
		if p.Vendor == "" {
			p.Vendor = "devicetest"
		}
		if p.UUID == "" {
			p.UUID = fmt.Sprintf("FAKE-%08x-0000-0000-0000-%012x", i, i)
		}
		if p.TotalMemory == 0 {
			p.TotalMemory = 16 << 30
		}
		if p.Major == 0 && p.Minor == 0 {
			p.Major = 9
		}
		if p.MultiProcessors == 0 {
			p.MultiProcessors = 132
		}
		b.devs = append(b.devs, &dev{index: i, props: p, mem: newMemory(i, p.TotalMemory)})
	}
	return b
}

// Type is the configured device type.
func (b *Backend) Type() device.Type { return b.typ }

// Available is the machine's probe.
func (b *Backend) Available() probe.Result {
	if b.reason != "" {
		return probe.Result{Reason: b.reason}
	}
	return probe.Result{Available: true, Devices: len(b.devs), Reason: fmt.Sprintf("devicetest: %d fake device(s)", len(b.devs))}
}

// Describe reports the fake as a Describer: no library, no attempts.
func (b *Backend) Describe() device.Info {
	r := b.Available()
	return device.Info{DriverVersion: "devicetest", Extra: map[string]string{"available": strconv.FormatBool(r.Available), "reason": r.Reason}}
}

// DeviceCount is the number of devices (an error when unavailable).
func (b *Backend) DeviceCount() (int, error) {
	if b.reason != "" {
		return 0, b.unavailable()
	}
	return len(b.devs), nil
}

// Current is the current device, 0 until SetCurrent.
func (b *Backend) Current() (int, error) {
	if b.reason != "" {
		return -1, b.unavailable()
	}
	return int(b.cur.Load()), nil
}

// SetCurrent makes index the current device (-1 keeps it).
func (b *Backend) SetCurrent(index int) error {
	d, err := b.device(index)
	if err != nil {
		return err
	}
	b.cur.Store(int32(d.index))
	return nil
}

// Synchronize runs the device's queued stream work.
func (b *Backend) Synchronize(index int) error {
	d, err := b.device(index)
	if err != nil {
		return err
	}
	return d.mem.flushAll()
}

// Properties describes device index.
func (b *Backend) Properties(index int) (device.Properties, error) {
	d, err := b.device(index)
	if err != nil {
		return device.Properties{}, err
	}
	return d.props, nil
}

func (b *Backend) unavailable() error {
	return fmt.Errorf("%w: %s: %s", device.ErrNotAvailable, b.typ, b.reason)
}

// device is device index's state (-1: the current device).
func (b *Backend) device(index int) (*dev, error) {
	if b.reason != "" {
		return nil, b.unavailable()
	}
	if index == -1 {
		index = int(b.cur.Load())
	}
	if index < 0 || index >= len(b.devs) {
		return nil, fmt.Errorf("%w: %s:%d: valid indexes are 0..%d, or -1 for the current device", device.ErrInvalidIndex, b.typ, index, len(b.devs)-1)
	}
	return b.devs[index], nil
}
