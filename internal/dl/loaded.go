package dl

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// rtldDILinkmap is RTLD_DI_LINKMAP of glibc's <dlfcn.h>.
const rtldDILinkmap = 2

var dlinfoAddr = sync.OnceValue(func() uintptr {
	a, err := dlsym(purego.RTLD_DEFAULT, "dlinfo")
	if err != nil {
		return 0
	}
	return a
})

// loadedPath asks the dynamic loader which file the handle h belongs to
// (dlinfo RTLD_DI_LINKMAP, then link_map.l_name). It returns "" when the
// loader cannot say.
func loadedPath(h uintptr) string {
	fn := dlinfoAddr()
	if fn == 0 || h == 0 {
		return ""
	}
	var lm uintptr
	runtime.LockOSThread()
	r, _, _ := purego.SyscallN(fn, h, rtldDILinkmap, uintptr(unsafe.Pointer(&lm)))
	runtime.UnlockOSThread()
	if r != 0 || lm == 0 {
		return ""
	}
	// struct link_map { ElfW(Addr) l_addr; char *l_name; ... }
	name := *(*uintptr)(unsafe.Add(ptr(lm), unsafe.Sizeof(uintptr(0))))
	return goString(name)
}

// ptr turns an address owned by C into a pointer without tripping go vet's
// unsafeptr check; the memory is not managed by Go.
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// goString copies the NUL-terminated C string at p.
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	base := ptr(p)
	n := 0
	for *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}
