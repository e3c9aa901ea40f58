package dl

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestGoString(t *testing.T) {
	b := []byte("libcuda.so.1\x00after")
	p := uintptr(unsafe.Pointer(&b[0]))
	assert.Equal(t, "libcuda.so.1", GoString(p, MaxCString))
	assert.Equal(t, "libcuda.so.1", GoString(p, len("libcuda.so.1")), "a bound right at the NUL")
	assert.Equal(t, "libc", GoString(p, 4), "no NUL within the bound: cut at the bound")
	assert.Equal(t, "", GoString(p, 0))
	assert.Equal(t, "", GoString(p, -1))
	assert.Equal(t, "", GoString(0, MaxCString))
	runtime.KeepAlive(b)
}

// TestGoStringGuardPage: a string without its NUL whose last byte is the
// last of a readable page, a PROT_NONE page after it, is cut at the page:
// the scan never touches the page it cannot read (it once crashed the CLI
// on an unterminated name from a management library).
func TestGoStringGuardPage(t *testing.T) {
	page := unix.Getpagesize()
	m, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Munmap(m) })
	require.NoError(t, unix.Mprotect(m[page:], unix.PROT_NONE))
	name := "MLU590 without a NUL"
	for i := range m[:page] {
		m[i] = 'x'
	}
	copy(m[page-len(name):page], name)
	p := uintptr(unsafe.Pointer(&m[page-len(name)]))
	assert.Equal(t, name, GoString(p, MaxCString))
	assert.Equal(t, name[:6], GoString(p, 6), "the bound still cuts first")
	whole := GoString(uintptr(unsafe.Pointer(&m[0])), 2*page)
	assert.Len(t, whole, page, "a whole page, then the guard")
	assert.True(t, strings.HasSuffix(whole, name))
	assert.Equal(t, "", GoString(uintptr(unsafe.Pointer(&m[page])), MaxCString), "a pointer into the guard page itself reads nothing")

	// A string that runs on into a readable page is read whole.
	require.NoError(t, unix.Mprotect(m[page:], unix.PROT_READ|unix.PROT_WRITE))
	m[page], m[page+1], m[page+2] = 'a', 'b', 0
	assert.Equal(t, name+"ab", GoString(p, MaxCString))
}
