package clib

import (
	"sync"
	"sync/atomic"

	"github.com/ebitengine/purego"
)

// Host functions: a Go func for a C library to call once, later, from a
// thread of its own (cuLaunchHostFunc's CUhostFn, hipHostFn_t: void
// fn(void *userData)). purego makes a C-callable function of a Go func, but
// a process may make only a few thousand and never frees one, so there is
// one: a fixed trampoline, made on first use, that finds the Go func by
// the id it is given as userData and runs it. Each id is used once.

var (
	hostOnce sync.Once
	hostAddr uintptr
	hostMu   sync.Mutex
	hostFns  = map[uintptr]func(){}
	hostSeq  atomic.Uintptr
)

// hostTrampoline runs the func registered under id, once. An unknown id
// (a second call, a forged one) runs nothing. A panic of the func is
// recovered: it must not unwind into the C library's thread.
func hostTrampoline(id uintptr) {
	hostMu.Lock()
	f := hostFns[id]
	delete(hostFns, id)
	hostMu.Unlock()
	if f == nil {
		return
	}
	defer func() { _ = recover() }()
	f()
}

// HostFunc registers f to be called once by C through the fixed trampoline:
// fn is the address of a C function void fn(void *userData), userData the
// value to pass it. cancel forgets f when the C library will not call it (its
// enqueue failed); after the call it does nothing. HostFunc panics where
// purego cannot make callbacks (a platform without them).
func HostFunc(f func()) (fn, userData uintptr, cancel func()) {
	hostOnce.Do(func() { hostAddr = purego.NewCallback(hostTrampoline) })
	id := hostSeq.Add(1)
	hostMu.Lock()
	hostFns[id] = f
	hostMu.Unlock()
	return hostAddr, id, func() {
		hostMu.Lock()
		delete(hostFns, id)
		hostMu.Unlock()
	}
}

// PendingHostFuncs counts the funcs registered and not yet called or
// cancelled (tests, leak checks).
func PendingHostFuncs() int {
	hostMu.Lock()
	defer hostMu.Unlock()
	return len(hostFns)
}
