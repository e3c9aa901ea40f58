package presence

// The management-library kit: the flow every handle-based management
// library (NVML's shape: init, count, a handle per index, shutdown) is read
// with, written once. A vendor package gives a Management, the parts that
// differ (its library, its symbol table beside the header it comes from,
// its codes, how it reads one device), and Query does the rest.

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/visible"
)

// Management is one vendor's management library as the presence tier reads
// it: what differs from one library to another. The funcs run after the
// symbol table is resolved, on one locked OS thread, and may close over the
// table's clib.Funcs and the library's own handles; build a Management per
// call (Query keeps nothing).
type Management struct {
	Source  string       // Report.Source: "nvml"
	Library clib.Library // where the library is (Env.Open)
	Symbols []clib.Sym   // the symbol table, resolved before anything is called
	// Codes are the library's result codes. Codes.Library labels the
	// symbol table, the errors and the Report's sentences ("NVML sees 2
	// devices").
	Codes *clib.Codes
	// Ships names what the library comes with, for the advice when a
	// required symbol is missing: "the NVIDIA driver" gives "update the
	// NVIDIA driver or point FLAGOS_LIBNVML_PATH at its libnvidia-ml.so.1".
	Ships string

	// Init initializes the library; an error (a *clib.Error) fails the
	// answer with ErrInit, and nothing else is called.
	Init func() error
	// InitReason, when set, is the sentence for a failed Init's
	// *clib.Error: what it means for the user and what to do. Without it,
	// or for another error, the reason is the error's text.
	InitReason func(*clib.Error) string
	// Shutdown, when set, releases what Init took; it runs last, whatever
	// happened after a successful Init, and its error is a note.
	Shutdown func() error
	// Version, when set, reads the versions the library tells into r
	// (DriverVersion, CUDAVersion). note records an error of a read that
	// did not answer and reports whether err was nil.
	Version func(r *Report, note func(err error) bool)
	// Count is the number of devices the library reports and the function
	// that reported it; an error fails the answer with ErrQuery. A count
	// above device.MaxDevices is refused (CheckCount) before anything is
	// allocated or asked for a device.
	Count func() (n uint64, fn string, err error)
	// Device reads device i (0 <= i < the count) into d, whose Index and
	// SourceIndex are i. An error (no handle for the device) fails the
	// answer with ErrQuery; a Skip leaves the device out with a note. What
	// else does not answer is noted through note ("device i: err"), which
	// reports whether err was nil, and the rest of the device is read.
	Device func(i int, d *Device, note func(err error) bool) error
	// Partitions, when set, lists the partitions of device i (read into
	// d), each with Parent set (NVML's MIG instances); they follow it
	// in Report.All. Failures are noted through note.
	Partitions func(i int, d *Device, note func(err error) bool) []Device
	// DeviceName, when set, is how the notes name device i ("card 1
	// device 0"); else "device i".
	DeviceName func(i int) string
	// Visible applies the runtime's visible-devices variables to every
	// device kept, in the library's order (Env.VisibleBy for a variable
	// read with CUDA's rules): the devices the runtime would see, numbered
	// in its order, the variables applied ("" when none is set), and an
	// error (ErrUndecidable) where this tier cannot decide.
	Visible func(all []Device) (devs []Device, applied string, err error)
	// Rules, when set, are the runtime's visibility rules, applied in
	// Visible's place (Env.VisibleRules) with their notes.
	Rules *visible.Rules
	// Runtime is what an undecidable variable needs, for the reason:
	// "NVML sees 2 devices, but CUDA_VISIBLE_DEVICES=MIG-1 cannot be
	// resolved without CUDA: ...". "" where Visible's error names the
	// variable itself: "MXSML sees 2 devices, but <error>".
	Runtime string
}

// Skip, returned by Management.Device, leaves the device out of the answer
// (it is no device of the runtime's) with the note "device i is <Why>: not
// counted".
type Skip struct{ Why string }

func (s Skip) Error() string { return "is " + s.Why + ": not counted" }

// Query asks a management library which devices are here, the flow written
// once: open the library (Env.Open: the override, the search, the checks),
// resolve m.Symbols, lock the OS thread, m.Init (ErrInit, with
// m.InitReason's sentence), m.Shutdown deferred (a failure is a note;
// under WithoutShutdown it is left for the process's exit or the library's
// next query),
// m.Version, m.Count (ErrQuery; bounded by CheckCount before anything is
// allocated), m.Device for each index (ErrQuery for a device the library
// cannot give; notes for the rest), then m.Visible. It never panics (Guard)
// and keeps no state. Queries of one library (by Source) run one at a time:
// not every management library counts its inits (a release by one caller
// would end another's session), and none is asked often.
func Query(e *Env, m Management) (r Report) {
	r.Source = m.Source
	defer Guard(&r)
	ses := sessionOf(m.Source)
	ses.mu.Lock()
	defer ses.mu.Unlock()
	label := m.Codes.Library
	e.Step(label + ": opening " + fileOf(m.Library))
	lib := e.Open(m.Library, &r)
	if lib == nil {
		return r
	}
	if err := lib.Resolve(label, m.Symbols); err != nil {
		r.Err = err
		r.Reason = fmt.Sprintf("%v; update %s or point %s at its %s", err, m.Ships, m.Library.EnvVar, fileOf(m.Library))
		return r
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	e.Step(label + ": shutdown of the session an earlier query left open")
	ses.close(&r) // the session an earlier query left open (WithoutShutdown)
	e.Step(label + ": init")
	if err := m.Init(); err != nil {
		r.Err = fmt.Errorf("%w: %w", ErrInit, err)
		r.Reason = err.Error()
		var ce *clib.Error
		if m.InitReason != nil && errors.As(err, &ce) {
			r.Reason = m.InitReason(ce)
		}
		e.log.Debug("presence: "+m.Source+" init failed", zap.Error(err))
		return r
	}
	switch {
	case m.Shutdown == nil:
	case e.noShutdown:
		ses.open = m.Shutdown
	default:
		defer func() {
			e.Step(label + ": shutdown")
			if err := m.Shutdown(); err != nil {
				r.Notes = append(r.Notes, err.Error())
			}
		}()
	}
	if m.Version != nil {
		e.Step(label + ": versions")
		m.Version(&r, func(err error) bool {
			if err != nil {
				r.Notes = append(r.Notes, err.Error())
			}
			return err == nil
		})
	}

	e.Step(label + ": device count")
	n, fn, err := m.Count()
	if err != nil {
		r.Err = fmt.Errorf("%w: %w", ErrQuery, err)
		r.Reason = err.Error()
		return r
	}
	if !CheckCount(&r, label, fn, n) {
		return r
	}
	all, err := m.devices(e, label, int(n), &r.Notes)
	if err != nil {
		r.Err = fmt.Errorf("%w: %w", ErrQuery, err)
		r.Reason = err.Error()
		return r
	}

	r.Total = 0
	for _, d := range all {
		if d.Parent == "" {
			r.Total++ // partitions are counted apart
		}
	}
	r.All = all
	r.Indexed = true
	devs, applied := all, ""
	switch {
	case m.Rules != nil:
		var mp visible.Mapping
		devs, mp, err = e.applyRules(m.Rules, all)
		applied = mp.Applied
		r.Notes = append(r.Notes, mp.Notes...)
	case m.Visible != nil:
		devs, applied, err = m.Visible(all)
	}
	r.Visibility = applied
	if err != nil {
		r.Err = err
		if m.Runtime != "" && m.Rules == nil {
			r.Reason = fmt.Sprintf("%s sees %d device%s, but %s cannot be resolved without %s: %v; use FLAGOS_PROBE=isolated", label, r.Total, Plural(r.Total), applied, m.Runtime, err)
			return r
		}
		if m.Rules != nil {
			r.Reason = undecidableReason(label, r.Total, applied, err)
			return r
		}
		r.Reason = fmt.Sprintf("%s sees %d device%s, but %v; use FLAGOS_PROBE=isolated", label, r.Total, Plural(r.Total), err)
		return r
	}
	r.Devices = devs
	r.Reason = CountReason(label, r.Total, len(devs), applied)
	e.log.Debug("presence: "+m.Source, zap.Int("total", r.Total), zap.Int("visible", len(devs)))
	return r
}

// devices reads the n devices (n bounded already), numbering those kept.
func (m *Management) devices(e *Env, label string, n int, notes *[]string) ([]Device, error) {
	all := make([]Device, 0, n)
	i := 0
	name := func() string {
		if m.DeviceName != nil {
			return m.DeviceName(i)
		}
		return "device " + strconv.Itoa(i)
	}
	note := func(err error) bool {
		if err != nil {
			*notes = append(*notes, name()+": "+err.Error())
		}
		return err == nil
	}
	for ; i < n; i++ {
		d := Device{Index: i, SourceIndex: i}
		e.Step(label + ": " + name())
		err := m.Device(i, &d, note)
		var skip Skip
		switch {
		case errors.As(err, &skip):
			*notes = append(*notes, name()+" "+skip.Error())
			continue
		case err != nil:
			return nil, err
		}
		for _, why := range Plausible(&d) {
			*notes = append(*notes, name()+": "+why)
		}
		d.Index = len(all)
		all = append(all, d)
		if m.Partitions == nil {
			continue
		}
		for _, p := range m.Partitions(i, &all[len(all)-1], note) {
			if len(all) >= device.MaxDevices {
				*notes = append(*notes, name()+": more partitions than flagshim accepts: not all listed")
				break
			}
			p.Index, p.SourceIndex = len(all), i
			all = append(all, p)
		}
	}
	return all, nil
}

// ErrorString is a Codes.Message from a library's
// "const char *errorString(code)" function: its words for a code, "" while
// f is unresolved (an optional function the library lacks).
func ErrorString(f *clib.Func) func(code int) string {
	return func(code int) string {
		if !f.OK() {
			return ""
		}
		return clib.GoString(f.Call(uintptr(uint32(int32(code)))), clib.MaxCString)
	}
}

// session is one management library's (Source's) lock and, under
// WithoutShutdown, the shutdown of the session a query left open.
type session struct {
	mu   sync.Mutex
	open func() error
}

// close ends the session an earlier query left open, if any, so that at
// most one is open at a time whatever the libraries' init counting: a
// failure is a note of r.
func (s *session) close(r *Report) {
	if s.open == nil {
		return
	}
	shutdown := s.open
	s.open = nil
	if err := shutdown(); err != nil {
		r.Notes = append(r.Notes, "the session left open by an earlier query: "+err.Error())
	}
}

// sessions holds one session per management library (Source).
var sessions sync.Map

func sessionOf(source string) *session {
	s, _ := sessions.LoadOrStore(source, new(session))
	return s.(*session)
}
