// Package flagos is the virtual flagos device: a device.Backend of type
// "flagos" that routes every call to one vendor backend, the accelerator
// that is really there. When the cuda->flagos alias is active (see package
// alias), code written for "cuda" lands here and from here on the MUSA (or
// other) device of the machine.
//
// flagos is the router, not a vendor. It lives in drivers/ beside the vendor
// packages because it is a backend too, but it has no driver.Vendor, never
// registers with the vendor registry (package vendors refuses its type:
// vendors.ErrReserved) and imports no vendor package: it finds the backends
// it routes to in the device registry, and their order under auto in
// [WithAutoOrder] (vendors.AutoOrder, which flagshim.Init passes).
//
// # Choosing the vendor backend
//
// FLAGOS_BACKEND (see [EnvVar]) chooses, case-insensitively and ignoring
// surrounding spaces:
//
//   - auto, empty or unset: musa if it is available, else cuda;
//   - a vendor type registered in the device registry: musa, cuda, or a
//     plugin's own backend type ("acme"); it must be available.
//
// "flagos" and "cpu" are refused, and so is anything that is not a type name
// ([ParseChoice], errors wrap [ErrBadChoice]). A name that is not registered
// or a backend that is not available is an error that says so (wrapping
// [ErrNoRoute]): flagos never falls back silently to another backend.
// "Available" means the vendor backend's own probe answers Available with at
// least one device.
//
// # When the route is decided
//
// [New] does no I/O and reads no environment. The route is decided on first
// use (any Backend method, [Backend.Route] or [Backend.Describe]), exactly
// once, and cached: concurrent first callers wait for the one decision, and a
// route that failed keeps failing with the same error. Deciding late lets
// backends that plugins register later in the drivers phase be chosen.
//
// The decision looks vendor backends up with device.Registry.Backends, never
// Lookup (which follows the alias and could answer flagos for cuda), and
// reads each vendor backend's own Available, its original probe, never a live
// probe of the probe registry. So a redirect of the live cuda probe to flagos
// can never make flagos route to itself. Vendor backends must keep that
// promise: their Available reports their own runtime.
//
// # Devices
//
// flagos:N is vendor device N: indices map one to one. The device count is
// the vendor's DeviceCount, read once when the route is decided. An index
// outside 0..count-1 is an error wrapping [ErrIndex] that names the range and
// the vendor ("flagos:3: index out of range, flagos has 2 devices (0..1)
// through musa"). Errors of the vendor backend are wrapped with the flagos
// device and the vendor device ("flagos:1 (musa:1): synchronize: ..."), so
// errors.Is against the vendor's sentinels still works.
//
// Properties are the vendor's with one change: Name says which vendor device
// answered, "<vendor name> (musa:1)" (just "musa:1" when the vendor gives no
// name). Vendor and every other field keep the vendor's values.
//
// Available is flagos's original probe: the routed backend's answer with its
// reason prefixed, "routes to musa: 2 devices (libmusa.so.1, driver 3.1)".
// Describe reports RoutesTo, the vendor's Library and DriverVersion, and
// Extra["backend_choice"] ("auto" or the name); Extra["route_error"] when
// there is no route.
//
// # Registering
//
// Nothing is registered in init. flagshim's drivers phase does, after the
// vendor backends:
//
//	fl := flagos.New(devs, flagos.WithLogger(log))
//	devs.Register(fl)
//	probes.Register("flagos", fl.Available)
//
// The decision is logged once at debug level with the fields choice, routed
// and reason (and error when there is no route).
package flagos
