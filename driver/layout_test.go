package driver

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLaunchRecordsLayout keeps what a launch reads of a Function and its
// Module in the fewest cache lines: Go's allocator places an object of a
// size class that is a power of two of 64 bytes or more at a multiple of
// that size (the class's spans are page-aligned), so a Function of 256
// bytes and a Module of 128 start a cache line, and the fields a launch
// reads lie in the offsets checked here. A field added to either changes
// its size: move the padding, keep the hot fields in front.
func TestLaunchRecordsLayout(t *testing.T) {
	var f Function
	require.Equal(t, uintptr(256), unsafe.Sizeof(f), "Function's size: adjust its padding")
	hotF := map[string]uintptr{
		"h":         unsafe.Offsetof(f.h) + unsafe.Sizeof(f.h),
		"m":         unsafe.Offsetof(f.m) + unsafe.Sizeof(f.m),
		"ordinal":   unsafe.Offsetof(f.ordinal) + unsafe.Sizeof(f.ordinal),
		"nparams":   unsafe.Offsetof(f.nparams) + unsafe.Sizeof(f.nparams),
		"call":      unsafe.Offsetof(f.call) + 3*unsafe.Sizeof(uintptr(0)), // fn, pre, preArg
		"psize[:8]": unsafe.Offsetof(f.psize) + 8*unsafe.Sizeof(f.psize[0]),
	}
	for name, end := range hotF {
		assert.LessOrEqual(t, end, uintptr(128), "Function.%s ends past its first two cache lines", name)
	}

	var m Module
	require.Equal(t, uintptr(128), unsafe.Sizeof(m), "Module's size: adjust its padding")
	hotM := map[string]uintptr{
		"b":        unsafe.Offsetof(m.b) + unsafe.Sizeof(m.b),
		"s":        unsafe.Offsetof(m.s) + unsafe.Sizeof(m.s),
		"dev":      unsafe.Offsetof(m.dev) + unsafe.Sizeof(m.dev),
		"gone":     unsafe.Offsetof(m.gone) + unsafe.Sizeof(m.gone),
		"launches": unsafe.Offsetof(m.launches) + unsafe.Sizeof(m.launches),
	}
	for name, end := range hotM {
		assert.LessOrEqual(t, end, uintptr(64), "Module.%s ends past its first cache line", name)
	}
}
