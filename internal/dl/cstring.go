package dl

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// GoString copies the NUL-terminated C string at p, scanning at most max
// bytes and never past readable memory: a string with no NUL in its first
// max bytes is cut there, and one whose bytes run into an unreadable page
// (a guard page, the end of its mapping) is cut at that page, so a missing
// terminator cannot crash the process. p == 0 or max <= 0 gives "". p
// points to memory owned by C (a library's static strings, the loader's
// file names); MaxCString is the usual bound. A string in a buffer of known
// length is read with that length as max (or with clib.CString on the
// buffer).
//
// Before it reads the first byte of a page, GoString asks the kernel
// whether the page is readable (readable): a page the scan does not reach
// is never touched, and one that cannot be read is never read.
func GoString(p uintptr, max int) string {
	if p == 0 || max <= 0 {
		return ""
	}
	page := uintptr(unix.Getpagesize())
	n := 0
	for n < max {
		a := p + uintptr(n)
		if a < p { // the address space ends
			break
		}
		if n == 0 || a%page == 0 {
			ok, known := readable(a)
			if !ok && (known || n > 0) {
				break // unknown: the string's own first page only
			}
		}
		if *(*byte)(ptr(a)) == 0 {
			break
		}
		n++
	}
	return string(unsafe.Slice((*byte)(ptr(p)), n))
}

// probe is the pipe readable writes one byte of a page to: the kernel
// copies it from the process's memory and answers EFAULT where it cannot
// read it, instead of a fault in the process.
var probe struct {
	once sync.Once
	mu   sync.Mutex
	r, w int
	ok   bool
}

// readable reports whether the byte at a, and so its page, can be read;
// known is false when it cannot tell (the process was out of descriptors
// for the pipe), and GoString then reads the string's first page only.
func readable(a uintptr) (ok, known bool) {
	probe.once.Do(func() {
		var fds [2]int
		if unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK) == nil {
			probe.r, probe.w, probe.ok = fds[0], fds[1], true
		}
	})
	if !probe.ok {
		return false, false
	}
	probe.mu.Lock()
	defer probe.mu.Unlock()
	n, _, errno := unix.Syscall(unix.SYS_WRITE, uintptr(probe.w), a, 1)
	if errno != 0 || n != 1 {
		return false, errno == unix.EFAULT
	}
	var b [1]byte
	_, _ = unix.Read(probe.r, b[:]) // drain: the pipe holds nothing between calls
	return true, true
}
