package device

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/probe"
)

// fakeBackend is a Backend with a fixed number of devices.
type fakeBackend struct {
	typ Type
	n   int
}

func (f fakeBackend) Type() Type { return f.typ }
func (f fakeBackend) Available() probe.Result {
	return probe.Result{Available: f.n > 0, Devices: f.n}
}
func (f fakeBackend) DeviceCount() (int, error)          { return f.n, nil }
func (f fakeBackend) Current() (int, error)              { return 0, nil }
func (f fakeBackend) SetCurrent(int) error               { return nil }
func (f fakeBackend) Synchronize(int) error              { return nil }
func (f fakeBackend) Properties(int) (Properties, error) { return Properties{Name: string(f.typ)}, nil }

func newTestRegistry(t testing.TB) *Registry {
	r := NewRegistry()
	for _, b := range []Backend{fakeBackend{CUDA, 0}, fakeBackend{MUSA, 2}, fakeBackend{FlagOS, 2}} {
		require.NoError(t, r.Register(b))
	}
	return r
}

func TestAlias(t *testing.T) {
	r := newTestRegistry(t)
	restore, err := r.Alias(CUDA, FlagOS)
	require.NoError(t, err)

	d, err := r.Parse("cuda:1")
	require.NoError(t, err)
	assert.Equal(t, Device{FlagOS, 1}, d)
	b, err := r.Lookup(CUDA)
	require.NoError(t, err)
	assert.Equal(t, FlagOS, b.Type())
	assert.Equal(t, FlagOS, r.Resolve(CUDA))
	assert.Equal(t, map[Type]Type{CUDA: FlagOS}, r.Aliases())

	restore()
	restore() // idempotent
	d, err = r.Parse("cuda:1")
	require.NoError(t, err)
	assert.Equal(t, Device{CUDA, 1}, d)
	assert.Equal(t, CUDA, r.Resolve(CUDA))
	assert.Empty(t, r.Aliases())
}

func TestAliasConflicts(t *testing.T) {
	r := newTestRegistry(t)
	_, err := r.Alias(CUDA, FlagOS)
	require.NoError(t, err)

	tests := []struct {
		name     string
		from, to Type
		wantErr  error
	}{
		{"twice", CUDA, MUSA, ErrAliased},
		{"to an alias", MUSA, CUDA, ErrAliased},
		{"chain onto a source", FlagOS, MUSA, ErrAliased},
		{"to itself", MUSA, MUSA, ErrAliased},
		{"to an unregistered type", "xpu", "npu", ErrUnknownType},
		{"bad name", "CUDA", FlagOS, ErrAliased},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Alias(tt.from, tt.to)
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}

func TestAliasSourceNeedNotBeRegistered(t *testing.T) {
	r := NewRegistry()
	require.NoError(t, r.Register(fakeBackend{FlagOS, 1}))
	_, err := r.Parse("cuda")
	require.ErrorIs(t, err, ErrUnknownType)
	_, err = r.Alias(CUDA, FlagOS)
	require.NoError(t, err)
	d, err := r.Parse("cuda:0")
	require.NoError(t, err)
	assert.Equal(t, Device{FlagOS, 0}, d)
	_, err = r.Parse("rocm")
	assert.ErrorContains(t, err, "cpu, cuda, flagos", "alias sources count as known types")
}

func TestRestoreOfAnOldAliasLeavesANewOne(t *testing.T) {
	r := newTestRegistry(t)
	first, err := r.Alias(CUDA, FlagOS)
	require.NoError(t, err)
	first()
	_, err = r.Alias(CUDA, MUSA)
	require.NoError(t, err)
	first() // a stale restore must not remove the newer alias
	assert.Equal(t, MUSA, r.Resolve(CUDA))
}

func TestRegister(t *testing.T) {
	r := NewRegistry()
	assert.Equal(t, []Type{CPU}, r.Types(), "a new registry holds the cpu")
	require.NoError(t, r.Register(fakeBackend{CUDA, 1}))
	require.ErrorIs(t, r.Register(fakeBackend{CUDA, 2}), ErrDuplicate)
	require.ErrorIs(t, r.Register(cpuBackend{}), ErrDuplicate)
	require.Error(t, r.Register(nil))
	require.Error(t, r.Register(fakeBackend{"Bad Name", 1}))
	assert.Equal(t, []Type{CPU, CUDA}, r.Types())

	_, err := r.Lookup(MUSA)
	require.ErrorIs(t, err, ErrUnknownType)
	assert.ErrorContains(t, err, "registered: cpu, cuda")
}

// Types and the known types stay sorted whatever the order backends
// register in (Register inserts each in place instead of sorting again).
func TestRegisterKeepsOrder(t *testing.T) {
	r := NewRegistry()
	want := []Type{CPU}
	for _, i := range rand.Perm(40) {
		typ := Type(fmt.Sprintf("v%02d", i))
		require.NoError(t, r.Register(fakeBackend{typ, 1}))
		want = append(want, typ)
	}
	slices.Sort(want)
	assert.Equal(t, want, r.Types())
	_, err := r.Alias("zz", "v07")
	require.NoError(t, err)
	require.NoError(t, r.Register(fakeBackend{"aa", 1}))
	_, err = r.Lookup("nope")
	require.ErrorIs(t, err, ErrUnknownType)
	assert.ErrorContains(t, err, "registered: aa, cpu, v00, v01,")
	_, err = r.Parse("nope")
	require.ErrorIs(t, err, ErrUnknownType)
	assert.ErrorContains(t, err, "known types: aa, cpu, v00, v01,", "the known types: backends and aliases, sorted")
	assert.ErrorContains(t, err, "v39, zz)")
}

// BenchmarkRegister is what registering n backends costs (n/op: one
// registry filled per iteration).
func BenchmarkRegister(b *testing.B) {
	for _, n := range []int{8, 64, 512} {
		types := make([]Type, n)
		for i := range types {
			types[i] = Type(fmt.Sprintf("v%04d", (i*7919)%n))
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				r := NewRegistry()
				for _, t := range types {
					if err := r.Register(fakeBackend{t, 1}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/backend")
		})
	}
}

func TestCPUBackend(t *testing.T) {
	b, err := NewRegistry().Lookup(CPU)
	require.NoError(t, err)
	assert.Equal(t, probe.Result{Available: true, Devices: 1, Reason: "the host CPU is always available"}, b.Available())
	n, err := b.DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	require.NoError(t, b.SetCurrent(0))
	require.NoError(t, b.Synchronize(0))
	require.Error(t, b.SetCurrent(1))
	p, err := b.Properties(0)
	require.NoError(t, err)
	assert.Equal(t, "host", p.Vendor)
	_, err = b.Properties(2)
	require.Error(t, err)
}

func TestDefaultWithoutInitializerNamesTheImport(t *testing.T) {
	r := newDefault()
	_, err := r.Parse("cuda")
	require.ErrorIs(t, err, ErrNotLinked)
	assert.Contains(t, err.Error(), `import _ "github.com/flagos-ai/flagshim"`)
	_, err = r.Lookup(CUDA)
	require.ErrorIs(t, err, ErrNotLinked)
	assert.Equal(t, CUDA, r.Resolve(CUDA))
}

func TestDefaultRunsItsInitializerOnceBeforeAnswering(t *testing.T) {
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
	r.OnFirstUse(func() error { t.Error("a second initializer must be ignored"); return nil })

	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := r.Parse("cuda:1")
			assert.NoError(t, err)
			assert.Equal(t, Device{FlagOS, 1}, d, "no caller sees cuda before the alias is decided")
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, calls)
}

func TestDefaultInitializerErrorIsReturned(t *testing.T) {
	r := newDefault()
	boom := errors.New("FLAGOS_ALIAS_CUDA: bad value")
	r.OnFirstUse(func() error { return boom })
	_, err := r.Parse("cpu")
	require.ErrorIs(t, err, boom)
	_, err = r.Lookup(CPU)
	require.ErrorIs(t, err, boom)
}

func TestConcurrentRegistryUse(t *testing.T) {
	r := newTestRegistry(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 200 {
				restore, err := r.Alias(CUDA, FlagOS)
				if err == nil {
					restore()
				} else {
					assert.ErrorIs(t, err, ErrAliased)
				}
			}
		}()
		go func() {
			defer wg.Done()
			_ = r.Register(fakeBackend{Type(fmt.Sprintf("x%d", i)), 1})
			for range 200 {
				d, err := r.Parse("cuda:1")
				assert.NoError(t, err)
				assert.Contains(t, []Type{CUDA, FlagOS}, d.Type)
				b, err := r.Lookup(CUDA)
				assert.NoError(t, err)
				assert.Contains(t, []Type{CUDA, FlagOS}, b.Type())
			}
		}()
	}
	wg.Wait()
	assert.Len(t, r.Types(), 4+8)
}

func BenchmarkParse(b *testing.B) {
	for _, aliased := range []bool{false, true} {
		b.Run(fmt.Sprintf("alias=%v", aliased), func(b *testing.B) {
			r := newTestRegistry(b)
			if aliased {
				_, err := r.Alias(CUDA, FlagOS)
				require.NoError(b, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Parse("cuda:1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLookup(b *testing.B) {
	r := newTestRegistry(b)
	_, err := r.Alias(CUDA, FlagOS)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Lookup(CUDA); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseAndLookupDoNotAllocate(t *testing.T) {
	r := newTestRegistry(t)
	_, err := r.Alias(CUDA, FlagOS)
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = r.Parse("cuda:1") }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = r.Lookup(CUDA) }))
}
