package probe

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fixed(avail bool, n int, reason string) Func {
	return func() Result { return Result{Available: avail, Devices: n, Reason: reason} }
}

func TestRegisterOnce(t *testing.T) {
	r := New()
	require.NoError(t, r.Register("cuda", fixed(false, 0, "no libcuda")))
	require.ErrorIs(t, r.Register("cuda", fixed(true, 1, "")), ErrDuplicate)
	require.ErrorIs(t, r.Register("", fixed(true, 1, "")), ErrInvalid)
	require.ErrorIs(t, r.Register("musa", nil), ErrInvalid)
	assert.Equal(t, []string{"cuda"}, r.Names())
	assert.Equal(t, "no libcuda", r.Original("cuda").Reason, "the first registration stays")
}

func TestUnregistered(t *testing.T) {
	r := New()
	assert.False(t, r.Live("cuda").Available)
	assert.Contains(t, r.Original("cuda").Reason, "no probe is registered for cuda")
	assert.Nil(t, r.RedirectedBy("cuda"))
	_, err := r.Redirect("cuda", "compat", fixed(true, 1, ""))
	require.ErrorIs(t, err, ErrUnknown)
}

func TestRedirectKeepsOriginal(t *testing.T) {
	r := New()
	require.NoError(t, r.Register("cuda", fixed(false, 0, "libcuda.so.1: not found")))
	restore, err := r.Redirect("cuda", "vendor_compat", fixed(true, 2, "flagos"))
	require.NoError(t, err)

	assert.Equal(t, Result{Available: true, Devices: 2, Reason: "flagos"}, r.Live("cuda"))
	assert.Equal(t, Result{Reason: "libcuda.so.1: not found"}, r.Original("cuda"))
	assert.Equal(t, []string{"vendor_compat"}, r.RedirectedBy("cuda"))

	restore()
	restore()
	assert.Equal(t, r.Original("cuda"), r.Live("cuda"))
	assert.Nil(t, r.RedirectedBy("cuda"))
}

func TestRedirectArguments(t *testing.T) {
	r := New()
	require.NoError(t, r.Register("cuda", fixed(false, 0, "")))
	_, err := r.Redirect("cuda", "", fixed(true, 1, ""))
	require.ErrorIs(t, err, ErrInvalid)
	_, err = r.Redirect("cuda", "x", nil)
	require.ErrorIs(t, err, ErrInvalid)
}

// Every order of undoing three stacked redirects leaves the others intact,
// and Live always answers with the newest that remains.
func TestRedirectsUndoInAnyOrder(t *testing.T) {
	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, order := range orders {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			r := New()
			require.NoError(t, r.Register("cuda", fixed(false, 0, "original")))
			writers := []string{"a", "b", "c"}
			restores := make([]func(), 3)
			for i, w := range writers {
				var err error
				restores[i], err = r.Redirect("cuda", w, fixed(true, i+1, w))
				require.NoError(t, err)
			}
			assert.Equal(t, writers, r.RedirectedBy("cuda"))
			alive := []bool{true, true, true}
			for _, i := range order {
				restores[i]()
				alive[i] = false
				var want []string
				for j, w := range writers {
					if alive[j] {
						want = append(want, w)
					}
				}
				assert.Equal(t, want, r.RedirectedBy("cuda"))
				wantLive := "original"
				if len(want) > 0 {
					wantLive = want[len(want)-1]
				}
				assert.Equal(t, wantLive, r.Live("cuda").Reason)
				assert.Equal(t, "original", r.Original("cuda").Reason)
			}
		})
	}
}

func TestConcurrentRedirects(t *testing.T) {
	r := New()
	require.NoError(t, r.Register("cuda", fixed(false, 0, "original")))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 200 {
				restore, err := r.Redirect("cuda", fmt.Sprintf("w%d", i), fixed(true, 1, "redirected"))
				if !assert.NoError(t, err) {
					return
				}
				restore()
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				assert.Equal(t, "original", r.Original("cuda").Reason)
				assert.Contains(t, []string{"original", "redirected"}, r.Live("cuda").Reason)
				_ = r.RedirectedBy("cuda")
			}
		}()
	}
	wg.Wait()
	assert.Nil(t, r.RedirectedBy("cuda"), "every redirect was undone")
	assert.Equal(t, "original", r.Live("cuda").Reason)
}

func TestLiveDoesNotAllocate(t *testing.T) {
	r := New()
	require.NoError(t, r.Register("cuda", fixed(false, 0, "original")))
	_, err := r.Redirect("cuda", "alias", fixed(true, 1, "flagos"))
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = r.Live("cuda") }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = r.Original("cuda") }))
}

func BenchmarkLive(b *testing.B) {
	for _, redirected := range []bool{false, true} {
		b.Run(fmt.Sprintf("redirected=%v", redirected), func(b *testing.B) {
			r := New()
			require.NoError(b, r.Register("cuda", fixed(false, 0, "original")))
			if redirected {
				_, err := r.Redirect("cuda", "alias", fixed(true, 1, "flagos"))
				require.NoError(b, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Live("cuda")
			}
		})
	}
}
