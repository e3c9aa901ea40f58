package main

import "github.com/flagos-ai/flagshim/driver"

// The hooks of the direct calls (fast.go, with cgo; without it they do
// nothing and every field goes through Go).
var (
	fastSetup    = func(*plugin) {}
	fastPublish  = func(*driver.Backend, int) {}
	fastRegister = func(obj, h uintptr, dev, kind int) bool { return true }
	fastForget   = func(obj uintptr) {}
	fastAdopt    = func(obj uintptr) (h uintptr, dev int, ok bool) { return 0, 0, false }
)

// The kinds of registered objects (fast.h's FX_STREAM, FX_EVENT).
const (
	kindStream = 1
	kindEvent  = 2
)

// publish hands dev's selector to the direct calls, once the plugin uses
// dev (the selector is the core's: retained on first use).
func publish(dev int) {
	if b, err := the.backend(); err == nil && the.direct {
		fastPublish(b, dev)
	}
}

// register lets the direct calls find a live object (with its device's
// selector published); one the registry cannot hold goes through Go.
func register(obj, h uintptr, dev, kind int) {
	if !the.direct {
		return
	}
	publish(dev)
	_ = fastRegister(obj, h, dev, kind)
}

// adopt gives the Go path an object for a stream fast.c made (a wrapper of
// its handle: the native stream stays fast.c's, which streamDestroy
// destroys), stored in streams; false when obj is no such stream.
func adopt(obj uintptr) bool {
	h, dev, ok := fastAdopt(obj)
	if !ok {
		return false
	}
	b, err := the.backend()
	if err != nil {
		return false
	}
	st, err := b.ForeignStream(dev, h)
	if err != nil {
		return false
	}
	streams.LoadOrStore(obj, st)
	return true
}
