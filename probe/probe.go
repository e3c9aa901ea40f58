package probe

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Result is one answer of a probe.
type Result struct {
	Available bool   // the runtime can run work now
	Devices   int    // devices it sees (0 when not available)
	Reason    string // why not, or what was found
}

// Func is a probe. It must be safe to call from many goroutines; probes that
// do real work (opening a library) cache their outcome themselves.
type Func func() Result

// Errors returned by Registry methods; test them with errors.Is.
var (
	ErrDuplicate = errors.New("probe: already registered")
	ErrUnknown   = errors.New("probe: not registered")
	ErrInvalid   = errors.New("probe: invalid argument")
)

// Default is the process-wide registry the drivers register with.
var Default = New()

// Registry holds named probes. The zero value is not usable; call New.
//
// Writers (Register, Redirect, restore) serialise on a mutex and publish a
// fresh immutable snapshot; readers (Live, Original, RedirectedBy, Names)
// only load an atomic pointer, so they never block and never allocate.
type Registry struct {
	mu     sync.Mutex // serialises writers
	nextID uint64     // guarded by mu
	snap   atomic.Pointer[snapshot]
}

// snapshot is immutable once published.
type snapshot struct {
	entries map[string]*entry
	names   []string // sorted
}

// entry is immutable once published; a change publishes a new entry.
type entry struct {
	original  Func
	redirects []redirect // oldest first
}

type redirect struct {
	id uint64
	by string
	f  Func
}

// New returns an empty registry.
func New() *Registry {
	r := &Registry{}
	r.snap.Store(&snapshot{entries: map[string]*entry{}})
	return r
}

// Register sets the original probe of name. A second Register of the same
// name is an error wrapping ErrDuplicate.
func (r *Registry) Register(name string, f Func) error {
	if name == "" || f == nil {
		return fmt.Errorf("%w: Register(%q) needs a name and a non-nil probe", ErrInvalid, name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.snap.Load()
	if _, ok := cur.entries[name]; ok {
		return fmt.Errorf("%w: probe %q has an original already; redirect it instead of registering it twice", ErrDuplicate, name)
	}
	next := cur.with(name, &entry{original: f})
	// name inserted in order, not sorted again (Init registers a probe per
	// vendor: a sort each time made that quadratic).
	i, _ := slices.BinarySearch(cur.names, name)
	next.names = slices.Insert(slices.Clone(cur.names), i, name)
	r.snap.Store(next)
	return nil
}

// Redirect replaces the live answer of name with f, on behalf of the writer
// by. Redirects stack: the newest one answers Live. The returned restore
// removes exactly this redirect, whatever the order in which redirects are
// undone; calling it again does nothing. Original is never affected.
func (r *Registry) Redirect(name, by string, f Func) (restore func(), err error) {
	if by == "" || f == nil {
		return nil, fmt.Errorf("%w: Redirect(%q) needs the writer's name and a non-nil probe", ErrInvalid, name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.snap.Load()
	e, ok := cur.entries[name]
	if !ok {
		return nil, fmt.Errorf("%w: cannot redirect probe %q for %q: no original is registered (known: %v); run the step after the drivers phase",
			ErrUnknown, name, by, cur.names)
	}
	r.nextID++
	id := r.nextID
	ne := &entry{original: e.original, redirects: append(slices.Clone(e.redirects), redirect{id: id, by: by, f: f})}
	r.snap.Store(cur.with(name, ne))
	var once sync.Once
	return func() { once.Do(func() { r.remove(name, id) }) }, nil
}

func (r *Registry) remove(name string, id uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.snap.Load()
	e := cur.entries[name]
	i := slices.IndexFunc(e.redirects, func(rd redirect) bool { return rd.id == id })
	if i < 0 {
		return
	}
	ne := &entry{original: e.original, redirects: slices.Delete(slices.Clone(e.redirects), i, i+1)}
	r.snap.Store(cur.with(name, ne))
}

// with returns a copy of s in which name maps to e; names is shared.
func (s *snapshot) with(name string, e *entry) *snapshot {
	m := make(map[string]*entry, len(s.entries)+1)
	for k, v := range s.entries {
		m[k] = v
	}
	m[name] = e
	return &snapshot{entries: m, names: s.names}
}

// Live answers "is name available?" as the program sees it now: the newest
// redirect if any, else the original. An unregistered name is not available.
func (r *Registry) Live(name string) Result {
	e, ok := r.snap.Load().entries[name]
	if !ok {
		return notRegistered(name)
	}
	if n := len(e.redirects); n > 0 {
		return e.redirects[n-1].f()
	}
	return e.original()
}

// Original runs the true probe of name, whatever was redirected.
func (r *Registry) Original(name string) Result {
	e, ok := r.snap.Load().entries[name]
	if !ok {
		return notRegistered(name)
	}
	return e.original()
}

// RedirectedBy lists the writers of the live probe of name, oldest first;
// nil when it is not redirected.
func (r *Registry) RedirectedBy(name string) []string {
	e, ok := r.snap.Load().entries[name]
	if !ok || len(e.redirects) == 0 {
		return nil
	}
	by := make([]string, len(e.redirects))
	for i, rd := range e.redirects {
		by[i] = rd.by
	}
	return by
}

// Names lists the registered probes, sorted. The slice must not be modified.
func (r *Registry) Names() []string { return r.snap.Load().names }

func notRegistered(name string) Result {
	return Result{Reason: "no probe is registered for " + name + " (its driver was not linked or the drivers phase has not run)"}
}
