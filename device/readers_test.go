package device

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every reader of Default runs the initializer first: before it, Types and
// Backends would answer "cpu only", which reads as "no GPU".
func TestDefaultReadersRunTheInitializer(t *testing.T) {
	readers := map[string]func(r *Registry) any{
		"Types":    func(r *Registry) any { return r.Types() },
		"Backends": func(r *Registry) any { return r.Backends() },
		"Aliases":  func(r *Registry) any { return r.Aliases() },
		"Resolve":  func(r *Registry) any { return r.Resolve(CUDA) },
		"Parse":    func(r *Registry) any { d, _ := r.Parse("cpu"); return d },
		"Lookup":   func(r *Registry) any { b, _ := r.Lookup(CPU); return b },
	}
	for name, read := range readers {
		t.Run(name, func(t *testing.T) {
			r := newDefault()
			var calls int
			r.OnFirstUse(func() error {
				calls++
				if err := r.Register(fakeBackend{FlagOS, 2}); err != nil {
					return err
				}
				_, err := r.Alias(CUDA, FlagOS)
				return err
			})
			read(r)
			assert.Equal(t, 1, calls, "%s ran the initializer", name)
			assert.Equal(t, []Type{CPU, FlagOS}, r.Types())
			assert.Equal(t, map[Type]Type{CUDA: FlagOS}, r.Aliases())
			require.Len(t, r.Backends(), 2)
			assert.Equal(t, FlagOS, r.Backends()[1].Type())
			assert.Equal(t, 1, calls, "once")
		})
	}
}

// A failed initializer leaves what it registered; the readers that cannot
// return errors list that, Parse and Lookup return the error.
func TestDefaultReadersAfterAFailedInitializer(t *testing.T) {
	r := newDefault()
	boom := errors.New("FLAGOS_ALIAS_CUDA: bad value")
	r.OnFirstUse(func() error {
		if err := r.Register(fakeBackend{MUSA, 1}); err != nil {
			return err
		}
		return boom
	})
	assert.Equal(t, []Type{CPU, MUSA}, r.Types())
	assert.Len(t, r.Backends(), 2)
	assert.Empty(t, r.Aliases())
	_, err := r.Parse("musa")
	require.ErrorIs(t, err, boom)
}

// Without the root package, the lists hold what is registered (cpu) and do
// not fail; Parse names the import to add.
func TestDefaultReadersWithoutInitializer(t *testing.T) {
	r := newDefault()
	assert.Equal(t, []Type{CPU}, r.Types())
	assert.Len(t, r.Backends(), 1)
	assert.Empty(t, r.Aliases())
	_, err := r.Parse("cpu")
	require.ErrorIs(t, err, ErrNotLinked)
}

// The initializer's own steps may list the backends (drivers/flagos does, to
// choose its route): they see what is registered so far instead of waiting
// for the initializer they run in, which would deadlock.
func TestDefaultReadersInsideTheInitializer(t *testing.T) {
	r := newDefault()
	var inside []Type
	var insideBackends int
	r.OnFirstUse(func() error {
		if err := r.Register(fakeBackend{MUSA, 1}); err != nil {
			return err
		}
		inside = r.Types()
		insideBackends = len(r.Backends())
		// From another goroutine the initializer waits for, too.
		done := make(chan []Type)
		go func() { done <- r.Types() }()
		assert.Equal(t, []Type{CPU, MUSA}, <-done)
		_ = r.Aliases()
		return r.Register(fakeBackend{FlagOS, 1})
	})
	assert.Equal(t, []Type{CPU, FlagOS, MUSA}, r.Types())
	assert.Equal(t, []Type{CPU, MUSA}, inside)
	assert.Equal(t, 2, insideBackends)
}

// Registries from NewRegistry have no initializer: OnFirstUse on them is
// never run by a reader.
func TestNewRegistryReadersRunNothing(t *testing.T) {
	r := NewRegistry()
	r.OnFirstUse(func() error { t.Error("a NewRegistry registry ran an initializer"); return nil })
	assert.Equal(t, []Type{CPU}, r.Types())
	assert.Len(t, r.Backends(), 1)
	assert.Empty(t, r.Aliases())
	_, err := r.Parse("cpu")
	require.NoError(t, err)
}

// Concurrent first readers wait for the one initializer and all see its
// result.
func TestDefaultConcurrentFirstReaders(t *testing.T) {
	r := newDefault()
	release := make(chan struct{})
	var calls int
	r.OnFirstUse(func() error {
		calls++
		<-release
		return r.Register(fakeBackend{MUSA, 1})
	})
	var wg sync.WaitGroup
	got := make([][]Type, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i] = r.Types() }()
	}
	// The first of them is inside the initializer; the others may have seen
	// it running and answered already, or wait: either way, once released,
	// every one answers.
	close(release)
	wg.Wait()
	assert.Equal(t, 1, calls)
	for _, g := range got {
		assert.Contains(t, [][]Type{{CPU}, {CPU, MUSA}}, g)
	}
	assert.Equal(t, []Type{CPU, MUSA}, r.Types())
}

// flagshim.Init called directly runs the initializer's body without going
// through a reader: a step that lists the backends then (drivers/flagos in
// the ecosystem phase) must not run the initializer again, which would wait
// for the Init it is part of. Once backends are registered, the readers list
// them without running anything.
func TestDefaultReadersDuringAnInitStartedElsewhere(t *testing.T) {
	r := newDefault()
	var once sync.Once // stands for flagshim.Init's own once
	var listed []Type
	initBody := func() {
		if err := r.Register(fakeBackend{MUSA, 1}); err != nil {
			t.Error(err)
		}
		listed = r.Types() // a step of the running Init
	}
	r.OnFirstUse(func() error { once.Do(initBody); return nil })
	once.Do(initBody) // flagshim.Init, called directly
	assert.Equal(t, []Type{CPU, MUSA}, listed)
	assert.Equal(t, []Type{CPU, MUSA}, r.Types())
	_, err := r.Parse("musa")
	require.NoError(t, err, "Parse still runs the initializer, which finds Init done")
}
