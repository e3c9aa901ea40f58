package dl

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
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
