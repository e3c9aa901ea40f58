package flagos

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// EnvVar chooses the vendor backend flagos routes to: auto (the default) or
// a registered vendor type such as musa, cuda or a plugin's own.
const EnvVar = "FLAGOS_BACKEND"

// Errors of the router; test them with errors.Is.
var (
	// ErrNoRoute: flagos has no vendor backend to route to (none available
	// under auto, the chosen one is not registered or not available, or the
	// choice itself is invalid). Every call of an unrouted Backend wraps it.
	ErrNoRoute = errors.New("flagos: no backend to route to")
	// ErrBadChoice: the FLAGOS_BACKEND value is not auto nor a vendor type
	// name (flagos and cpu are refused too). Such errors also wrap ErrNoRoute
	// when they come from Route.
	ErrBadChoice = errors.New("flagos: invalid " + EnvVar)
	// ErrUnknownBackend: FLAGOS_BACKEND names a type no backend is
	// registered for (a typo, or a driver that is not linked). Such errors
	// also wrap ErrNoRoute.
	ErrUnknownBackend = errors.New("flagos: " + EnvVar + " names no registered backend")
)

// Option configures New.
type Option func(*Backend)

// WithLogger sets the logger of the routing decision (debug level). The
// default is a no-op logger.
func WithLogger(l *zap.Logger) Option {
	return func(b *Backend) {
		if l != nil {
			b.log = l
		}
	}
}

// WithAutoOrder sets the preference of FLAGOS_BACKEND=auto: the vendor
// types to try, first choice first (flagshim passes the vendor registry's
// order, vendors.AutoOrder). Without it auto tries every registered vendor
// backend in registration order.
func WithAutoOrder(order []device.Type) Option {
	return func(b *Backend) { b.auto = append([]device.Type(nil), order...) }
}

// WithGetenv replaces os.Getenv for reading FLAGOS_BACKEND (for tests).
func WithGetenv(f func(string) string) Option {
	return func(b *Backend) {
		if f != nil {
			b.getenv = f
		}
	}
}

// Backend is the virtual flagos device: a device.Backend and a
// device.Describer that routes every call to one vendor backend of a device
// registry. The route is decided on first use, once; see the package doc.
type Backend struct {
	devs   *device.Registry
	log    *zap.Logger
	getenv func(string) string
	auto   []device.Type // WithAutoOrder; nil: registration order

	once sync.Once
	r    *route // written once inside once.Do

	// reason caches the composed Available reason so that a steady answer
	// costs no allocation.
	reason atomic.Pointer[label]
}

type label struct{ in, out string }

// route is the cached decision.
type route struct {
	choice string         // "auto" or the chosen name; the raw value when invalid
	to     device.Backend // nil when err != nil
	typ    device.Type
	count  int    // the vendor's DeviceCount at decision time
	why    string // how the route was chosen, for logs
	err    error  // wraps ErrNoRoute
}

// New returns a flagos backend that looks vendor backends up in devs (through
// devs.Backends, which never follows the alias). It does no I/O and reads no
// environment: both happen on first use. Register it in the drivers phase
// after the vendor backends.
func New(devs *device.Registry, opts ...Option) *Backend {
	b := &Backend{devs: devs, log: zap.NewNop(), getenv: os.Getenv}
	for _, o := range opts {
		o(b)
	}
	return b
}

// ParseChoice reads a FLAGOS_BACKEND value. Unset, empty and "auto" give
// auto; otherwise the value (case-insensitive, surrounding spaces trimmed)
// must be a type name (a letter, then letters, digits or '_'). "flagos" and
// "cpu" are refused: flagos cannot route to itself and the host cpu is not an
// accelerator. Whether the name is registered is checked by Route, not here.
func ParseChoice(v string) (auto bool, name device.Type, err error) {
	s := strings.ToLower(strings.TrimSpace(v))
	switch s {
	case "", "auto":
		return true, "", nil
	case string(device.FlagOS):
		return false, "", fmt.Errorf("%w=%q: flagos cannot route to itself; use auto or a registered vendor backend's name", ErrBadChoice, v)
	case string(device.CPU):
		return false, "", fmt.Errorf("%w=%q: cpu is not a flagos target; use auto or a registered vendor backend's name", ErrBadChoice, v)
	}
	if !device.ValidType(device.Type(s)) {
		return false, "", fmt.Errorf("%w=%q: want auto or a registered vendor backend's name (a lowercase device type such as cuda)", ErrBadChoice, v)
	}
	return false, device.Type(s), nil
}

// decided returns the route, deciding it on the first call. Concurrent first
// callers wait for the one decision.
func (b *Backend) decided() *route {
	b.once.Do(b.decide)
	return b.r
}

func (b *Backend) decide() {
	r := b.computeRoute()
	b.r = r
	fields := []zap.Field{zap.String("choice", r.choice), zap.String("routed", string(r.typ)), zap.String("reason", r.why)}
	if r.err != nil {
		fields = append(fields, zap.Error(r.err))
	}
	b.log.Debug("flagos route decided", fields...)
}

func (b *Backend) computeRoute() *route {
	raw := b.getenv(EnvVar)
	auto, name, err := ParseChoice(raw)
	if err != nil {
		return &route{choice: raw, err: fmt.Errorf("%w: %w", ErrNoRoute, err), why: "invalid choice"}
	}
	if b.devs == nil {
		return &route{choice: choiceName(auto, name), err: fmt.Errorf("%w: flagos.New was given no device registry", ErrNoRoute), why: "no registry"}
	}
	vendors, names := b.vendors()
	if auto {
		return b.routeAuto(vendors, names)
	}
	r := &route{choice: string(name)}
	vb, ok := vendors[name]
	if !ok {
		r.why = "not registered"
		r.err = unknownChoice(name, names)
		return r
	}
	res := vb.Available()
	if !usable(res) {
		r.why = "not available"
		r.err = fmt.Errorf("%w: %s=%s: %s is not available: %s", ErrNoRoute, EnvVar, name, name, describe(res))
		return r
	}
	return b.finish(r, vb, "chosen by "+EnvVar+": "+describe(res))
}

// vendors are the registered vendor backends (every one but cpu and
// flagos), by type, and their names in registration order.
func (b *Backend) vendors() (map[device.Type]device.Backend, []string) {
	vendors := map[device.Type]device.Backend{}
	var names []string
	for _, vb := range b.devs.Backends() {
		t := vb.Type()
		if t == device.FlagOS || t == device.CPU {
			continue
		}
		vendors[t] = vb
		names = append(names, string(t))
	}
	return vendors, names
}

// unknownChoice is the error of a FLAGOS_BACKEND naming no registered backend.
func unknownChoice(name device.Type, registered []string) error {
	accepted := "auto (no vendor backend is registered besides cpu and flagos)"
	if len(registered) > 0 {
		accepted = "auto, " + strings.Join(registered, ", ")
	}
	return unknownBackend{fmt.Errorf("%w: %s=%q names no registered backend; accepted values: %s", ErrNoRoute, EnvVar, string(name), accepted)}
}

// CheckChoice validates FLAGOS_BACKEND as Route would, without routing:
// an error matching ErrBadChoice for a value that is not a choice, or
// ErrUnknownBackend for a name no backend is registered under; nil for auto
// or a registered name. It probes nothing, so a caller that only needs to
// refuse a bad setting (Init does) does not make the route ask every
// vendor's driver before it is needed.
func (b *Backend) CheckChoice() error {
	auto, name, err := ParseChoice(b.getenv(EnvVar))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoRoute, err)
	}
	if auto || b.devs == nil {
		return nil
	}
	if vendors, names := b.vendors(); vendors[name] == nil {
		return unknownChoice(name, names)
	}
	return nil
}

func (b *Backend) routeAuto(vendors map[device.Type]device.Backend, names []string) *route {
	r := &route{choice: "auto"}
	var tried []string
	order := b.auto
	if order == nil {
		for _, n := range names {
			order = append(order, device.Type(n))
		}
	}
	for _, t := range order {
		vb, ok := vendors[t]
		if !ok {
			tried = append(tried, string(t)+" is not registered")
			continue
		}
		res := vb.Available()
		if usable(res) {
			why := "auto: " + string(t) + " is available: " + describe(res)
			if len(tried) > 0 {
				why = "auto: " + strings.Join(tried, "; ") + "; " + string(t) + " is available: " + describe(res)
			}
			return b.finish(r, vb, why)
		}
		tried = append(tried, string(t)+" is not available ("+describe(res)+")")
	}
	r.why = "nothing available"
	r.err = fmt.Errorf("%w: %s=auto: %s; set %s to a registered vendor backend to choose one", ErrNoRoute, EnvVar, strings.Join(tried, "; "), EnvVar)
	return r
}

// finish completes a route to vb, reading its device count once.
func (b *Backend) finish(r *route, vb device.Backend, why string) *route {
	t := vb.Type()
	n, err := vb.DeviceCount()
	if err != nil {
		r.why = "device count failed"
		r.err = fmt.Errorf("%w: %s is available but its device count failed: %w", ErrNoRoute, t, err)
		return r
	}
	r.to, r.typ, r.count, r.why = vb, t, n, why
	return r
}

func choiceName(auto bool, name device.Type) string {
	if auto {
		return "auto"
	}
	return string(name)
}

// usable is the availability rule: available with at least one device.
func usable(r probe.Result) bool { return r.Available && r.Devices > 0 }

func describe(r probe.Result) string {
	if r.Reason != "" {
		return r.Reason
	}
	if r.Available {
		return fmt.Sprintf("%d devices", r.Devices)
	}
	return "no reason given"
}

// Route returns the vendor backend flagos routes to, or why there is none
// (an error wrapping ErrNoRoute, and ErrBadChoice for an invalid value). The
// first call decides; later calls return the same answer.
func (b *Backend) Route() (device.Backend, error) {
	r := b.decided()
	return r.to, r.err
}

// Type is device.FlagOS.
func (b *Backend) Type() device.Type { return device.FlagOS }

// Available is the routed backend's own probe result, its reason prefixed
// with "routes to <type>: ". Without a route it is not available and the
// reason says why. It is flagos's original probe.
func (b *Backend) Available() probe.Result {
	r := b.decided()
	if r.err != nil {
		return probe.Result{Reason: r.err.Error()}
	}
	res := r.to.Available()
	if !res.Available {
		res.Devices = 0
	}
	in := res.Reason
	if l := b.reason.Load(); l != nil && l.in == in {
		res.Reason = l.out
		return res
	}
	l := &label{in: in, out: "routes to " + string(r.typ) + ": " + describe(res)}
	b.reason.Store(l)
	res.Reason = l.out
	return res
}

// DeviceCount is the routed backend's device count, read once when the route
// is decided (vendor runtimes fix their visible devices at initialisation).
func (b *Backend) DeviceCount() (int, error) {
	r := b.decided()
	if r.err != nil {
		return 0, r.err
	}
	return r.count, nil
}

// Current is the routed backend's current device; indices map one to one.
func (b *Backend) Current() (int, error) {
	r := b.decided()
	if r.err != nil {
		return 0, r.err
	}
	i, err := r.to.Current()
	if err != nil {
		return 0, fmt.Errorf("flagos: current device through %s: %w", r.typ, err)
	}
	return i, nil
}

// SetCurrent makes vendor device index current.
func (b *Backend) SetCurrent(index int) error {
	r, err := b.check(index)
	if err != nil {
		return err
	}
	if err := r.to.SetCurrent(index); err != nil {
		return r.wrap("set current", index, err)
	}
	return nil
}

// Synchronize waits for vendor device index.
func (b *Backend) Synchronize(index int) error {
	r, err := b.check(index)
	if err != nil {
		return err
	}
	if err := r.to.Synchronize(index); err != nil {
		return r.wrap("synchronize", index, err)
	}
	return nil
}

// Properties are the vendor device's properties, attributed: Name becomes
// "<vendor name> (<type>:<index>)", e.g. "MTT S4000 (musa:1)" ("musa:1"
// alone when the vendor gives no name). Every other field, Vendor included,
// is the vendor backend's own value.
func (b *Backend) Properties(index int) (device.Properties, error) {
	r, err := b.check(index)
	if err != nil {
		return device.Properties{}, err
	}
	p, err := r.to.Properties(index)
	if err != nil {
		return device.Properties{}, r.wrap("properties", index, err)
	}
	if index < 0 {
		if index, err = r.to.Current(); err != nil {
			return device.Properties{}, r.wrap("properties", -1, err)
		}
	}
	tag := device.Device{Type: r.typ, Index: index}.String()
	if p.Name == "" {
		p.Name = tag
	} else {
		p.Name = p.Name + " (" + tag + ")"
	}
	return p, nil
}

// Describe reports the route: RoutesTo is the vendor type ("" without a
// route), Library, DriverVersion, Vendor and VendorFacts are copied from the
// vendor's Describe when it has one, Extra["backend_choice"] is "auto" or the chosen name, and
// Extra["route_error"] says why there is no route.
func (b *Backend) Describe() device.Info {
	r := b.decided()
	info := device.Info{RoutesTo: r.typ, Extra: map[string]string{"backend_choice": r.choice}}
	if r.err != nil {
		info.Extra["route_error"] = r.err.Error()
		return info
	}
	if d, ok := r.to.(device.Describer); ok {
		vi := d.Describe()
		info.Library, info.DriverVersion = vi.Library, vi.DriverVersion
		info.Vendor, info.VendorFacts = vi.Vendor, vi.VendorFacts
	}
	return info
}

// check returns the route for a call on device index: 0..count-1, or -1
// for the current device, which is passed on as -1 (the vendor's current
// device is flagos's).
func (b *Backend) check(index int) (*route, error) {
	r := b.decided()
	if r.err != nil {
		return nil, r.err
	}
	if index < -1 || index >= r.count {
		return nil, r.rangeError(index)
	}
	return r, nil
}

func (r *route) rangeError(index int) error {
	if r.count == 0 {
		return fmt.Errorf("%w: flagos:%d: flagos has no devices through %s", device.ErrInvalidIndex, index, r.typ)
	}
	noun := "devices"
	if r.count == 1 {
		noun = "device"
	}
	return fmt.Errorf("%w: flagos:%d: flagos has %d %s (0..%d, or -1 for the current device) through %s",
		device.ErrInvalidIndex, index, r.count, noun, r.count-1, r.typ)
}

func (r *route) wrap(op string, index int, err error) error {
	if index < 0 {
		return fmt.Errorf("flagos (%s, current device): %s: %w", r.typ, op, err)
	}
	return fmt.Errorf("flagos:%d (%s:%d): %s: %w", index, r.typ, index, op, err)
}

// unknownBackend is a route error that also matches ErrUnknownBackend.
type unknownBackend struct{ error }

func (e unknownBackend) Unwrap() []error { return []error{e.error, ErrUnknownBackend} }

var (
	_ device.Backend   = (*Backend)(nil)
	_ device.Describer = (*Backend)(nil)
	_ device.Memory    = (*Backend)(nil)
	_ device.Compute   = (*Backend)(nil)
	_ device.Streams   = (*Backend)(nil)
	_ device.Graphs    = (*Backend)(nil)
)
