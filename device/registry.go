package device

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Errors of Registry methods; test them with errors.Is.
var (
	ErrDuplicate = errors.New("device: backend already registered")
	ErrAliased   = errors.New("device: alias conflict")
	// ErrNotLinked is returned by Default when the flagshim root package,
	// which fills it, is not linked into the program.
	ErrNotLinked = errors.New("device: flagshim is not linked")
)

// Registry holds backends by type and an alias table from one type to
// another. Writers serialise on a mutex and publish an immutable snapshot;
// Parse, Resolve and Lookup read it with one atomic load and do not
// allocate on success.
type Registry struct {
	mu     sync.Mutex // serialises writers
	nextID uint64     // guarded by mu
	snap   atomic.Pointer[regState]

	// Only Default has needsInit: its first reader (Parse, Lookup,
	// Resolve, Types, Backends, Aliases) runs the initializer handed over by
	// the root package.
	needsInit bool
	lazy      atomic.Pointer[lazyInit]
}

type regState struct {
	backends map[Type]Backend
	aliases  map[Type]aliasEntry // from -> to
	known    []Type              // backends and alias sources, sorted
	types    []Type              // backends, sorted
}

type aliasEntry struct {
	to Type
	id uint64
}

type lazyInit struct {
	once sync.Once
	run  func() error
	err  error
	// running is true while run runs: readers called from inside it (a
	// step of flagshim.Init listing the backends, as drivers/flagos does)
	// must not wait for the once they are part of.
	running atomic.Bool
}

func (l *lazyInit) do() error {
	l.once.Do(func() {
		l.running.Store(true)
		defer l.running.Store(false)
		l.err = l.run()
	})
	return l.err
}

// Default is the process-wide registry used by the package-level functions.
var Default = newDefault()

func newDefault() *Registry {
	r := NewRegistry()
	r.needsInit = true
	return r
}

// NewRegistry returns a registry holding only the cpu backend (one device).
func NewRegistry() *Registry {
	r := &Registry{}
	r.snap.Store(&regState{
		backends: map[Type]Backend{CPU: cpuBackend{}},
		aliases:  map[Type]aliasEntry{},
		known:    []Type{CPU},
		types:    []Type{CPU},
	})
	return r
}

// OnFirstUse hands the registry the function that fills it. The flagshim
// root package calls it on Default when it is linked; the function runs once,
// on the first use of the registry by any of its readers (Parse, Resolve,
// Lookup, Types, Backends, Aliases), and its error is returned by every one
// of them that can return an error. Only the first call has an effect; it
// does no I/O. It has an effect on Default only: registries from NewRegistry
// have no initializer.
func (r *Registry) OnFirstUse(run func() error) {
	r.lazy.CompareAndSwap(nil, &lazyInit{run: run})
}

// ready runs the initializer of Default once. It costs one atomic load on
// registries made by NewRegistry and after the first call.
func (r *Registry) ready() error {
	if !r.needsInit {
		return nil
	}
	l := r.lazy.Load()
	if l == nil {
		return fmt.Errorf("%w: device.Default is filled by flagshim.Init; add `import _ \"github.com/flagos-ai/flagshim\"` to the program (forgotten import?), or use a registry of your own from device.NewRegistry", ErrNotLinked)
	}
	return l.do()
}

// readyToList is ready for the readers that cannot return an error (Types,
// Backends, Aliases): they answer with what is registered whether or not the
// initializer succeeded. They run the initializer only while the registry
// holds nothing but the built-in cpu backend, the state that reads as "no
// accelerator" before Init. Once anything else is registered, the registry
// is being filled (by the steps of a flagshim.Init that is running or done,
// or by the program itself) and they list what is there without waiting: a
// step of Init may list the backends (drivers/flagos does, to choose its
// route), and waiting for the Init it runs in would deadlock. For the same
// reason they do not wait while the initializer runs.
func (r *Registry) readyToList() {
	if !r.needsInit {
		return
	}
	l := r.lazy.Load()
	if l == nil || l.running.Load() || len(r.snap.Load().backends) > 1 {
		return
	}
	_ = l.do()
}

// Register adds a backend under its Type. A second backend of the same type
// is refused with ErrDuplicate.
func (r *Registry) Register(b Backend) error {
	if b == nil {
		return fmt.Errorf("device: Register(nil)")
	}
	t := b.Type()
	if !ValidType(t) {
		return fmt.Errorf("device: cannot register a backend of type %q: a type is a lowercase name (letters, digits, '_')", t)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.snap.Load()
	if _, ok := cur.backends[t]; ok {
		return fmt.Errorf("%w: a %q backend is registered already (each type registers once, in the drivers phase)", ErrDuplicate, t)
	}
	next := cur.clone()
	next.backends[t] = b
	// The sorted lists with t inserted, not sorted again: Init registers a
	// backend per vendor, and a sort each time made that quadratic.
	next.types = insertSorted(cur.types, t)
	next.known = cur.known
	if _, ok := cur.aliases[t]; !ok {
		next.known = insertSorted(cur.known, t)
	}
	r.snap.Store(next)
	return nil
}

// insertSorted is a copy of the sorted s with t inserted in order.
func insertSorted(s []Type, t Type) []Type {
	i, _ := slices.BinarySearch(s, t)
	out := make([]Type, 0, len(s)+1)
	out = append(out, s[:i]...)
	out = append(out, t)
	return append(out, s[i:]...)
}

// Alias makes from mean to: Parse, Resolve and Lookup of from answer with to.
// The target must be a registered backend that is not itself aliased, and from
// must not be aliased already. restore removes exactly this alias; calling it
// again does nothing.
func (r *Registry) Alias(from, to Type) (restore func(), err error) {
	if !ValidType(from) || !ValidType(to) || from == to {
		return nil, fmt.Errorf("%w: cannot alias %q to %q: both must be distinct lowercase type names", ErrAliased, from, to)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.snap.Load()
	if e, ok := cur.aliases[from]; ok {
		return nil, fmt.Errorf("%w: %q already means %q; undo that alias first", ErrAliased, from, e.to)
	}
	if e, ok := cur.aliases[to]; ok {
		return nil, fmt.Errorf("%w: cannot alias %q to %q, which is itself an alias of %q", ErrAliased, from, to, e.to)
	}
	for src, e := range cur.aliases {
		if e.to == from {
			return nil, fmt.Errorf("%w: cannot alias %q, which %q already points to", ErrAliased, from, src)
		}
	}
	if _, ok := cur.backends[to]; !ok {
		return nil, fmt.Errorf("%w %q: cannot alias %q to it (registered: %s)", ErrUnknownType, to, from, joinTypes(cur.types))
	}
	r.nextID++
	id := r.nextID
	next := cur.clone()
	next.aliases[from] = aliasEntry{to: to, id: id}
	r.publish(next)
	var once sync.Once
	return func() { once.Do(func() { r.unalias(from, id) }) }, nil
}

func (r *Registry) unalias(from Type, id uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.snap.Load()
	if e, ok := cur.aliases[from]; !ok || e.id != id {
		return
	}
	next := cur.clone()
	delete(next.aliases, from)
	r.publish(next)
}

// Resolve follows the alias table: Resolve(CUDA) is FlagOS while cuda is
// aliased to flagos, else t itself. On Default it first runs the initializer;
// if that failed, t is returned unchanged (Lookup and Parse report the error).
func (r *Registry) Resolve(t Type) Type {
	if r.ready() != nil {
		return t
	}
	return r.snap.Load().resolve(t)
}

// Lookup returns the backend that answers for t, following the alias.
func (r *Registry) Lookup(t Type) (Backend, error) {
	if err := r.ready(); err != nil {
		return nil, err
	}
	s := r.snap.Load()
	to := s.resolve(t)
	if b, ok := s.backends[to]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("%w %q: no backend is registered for it (registered: %s); is its driver linked and flagshim.Init run?", ErrUnknownType, t, joinTypes(s.types))
}

// Parse reads a device string, "type" or "type:index", checks that the type
// is known, then follows the alias: with cuda aliased to flagos,
// Parse("cuda:1") is flagos:1. Errors quote the input and list the known
// types.
func (r *Registry) Parse(s string) (Device, error) {
	if err := r.ready(); err != nil {
		return Device{}, err
	}
	st := r.snap.Load()
	typ, index, ok := split(s)
	if !ok {
		return Device{}, syntaxError(s, st.known)
	}
	t := Type(typ)
	if _, isBackend := st.backends[t]; !isBackend {
		if _, isAlias := st.aliases[t]; !isAlias {
			return Device{}, unknownTypeError(s, t, st.known)
		}
	}
	return Device{Type: st.resolve(t), Index: index}, nil
}

// Types lists the registered backend types, sorted. Aliases are not listed.
//
// On Default, while nothing but cpu is registered, it first runs the
// initializer (flagshim.Init), as Parse does, so that it never answers "cpu
// only" merely because nothing has run yet. It cannot return an error: where
// the initializer failed (or the flagshim root package is not linked), it
// lists what is registered; Parse and Lookup report the error. While Init is
// running, it lists what is registered so far instead of waiting (steps of
// Init may call it).
func (r *Registry) Types() []Type {
	r.readyToList()
	return slices.Clone(r.snap.Load().types)
}

// Aliases returns a copy of the alias table (from -> to). On Default it first
// runs the initializer, with the same rules as Types: an initializer that
// failed leaves the table as far as it got (often empty), and no error is
// returned.
func (r *Registry) Aliases() map[Type]Type {
	r.readyToList()
	s := r.snap.Load()
	m := make(map[Type]Type, len(s.aliases))
	for from, e := range s.aliases {
		m[from] = e.to
	}
	return m
}

func (s *regState) resolve(t Type) Type {
	if e, ok := s.aliases[t]; ok {
		return e.to
	}
	return t
}

func (s *regState) clone() *regState {
	n := &regState{
		backends: make(map[Type]Backend, len(s.backends)+1),
		aliases:  make(map[Type]aliasEntry, len(s.aliases)+1),
	}
	for k, v := range s.backends {
		n.backends[k] = v
	}
	for k, v := range s.aliases {
		n.aliases[k] = v
	}
	return n
}

// publish recomputes the sorted lists of next and stores it. Callers hold mu.
func (r *Registry) publish(next *regState) {
	next.types = next.types[:0]
	for t := range next.backends {
		next.types = append(next.types, t)
	}
	slices.Sort(next.types)
	next.known = slices.Clone(next.types)
	for t := range next.aliases {
		if _, ok := next.backends[t]; !ok {
			next.known = append(next.known, t)
		}
	}
	slices.Sort(next.known)
	r.snap.Store(next)
}

// Parse is Default.Parse.
func Parse(s string) (Device, error) { return Default.Parse(s) }

// Lookup is Default.Lookup.
func Lookup(t Type) (Backend, error) { return Default.Lookup(t) }

// Register is Default.Register.
func Register(b Backend) error { return Default.Register(b) }

// Backends lists the registered backends sorted by type, without following
// any alias: Backends never returns flagos in place of cuda. On Default it
// first runs the initializer, with the same rules as Types: no error is
// returned, a failed initializer leaves what was registered, and a call from
// inside the initializer (drivers/flagos choosing its route) lists what is
// registered so far.
func (r *Registry) Backends() []Backend {
	r.readyToList()
	s := r.snap.Load()
	out := make([]Backend, len(s.types))
	for i, t := range s.types {
		out[i] = s.backends[t]
	}
	return out
}
