package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Streams and events are C objects of two words whose first is the native
// handle (CUstream, hipStream_t, ...): FlagCX's NCCL adaptor reads
// stream->base. The plugin finds its own values by the object's address,
// in a table, and never reads an object it does not know: a stream of
// another adaptor, a freed one or garbage is InvalidArgument.

// objWords is the C size of a stream or event object, in words: the native
// handle, then zero (room, and no pointer FlagCX could follow).
const objWords = 2

// cAlloc and cFree allocate the objects in C memory (the cgo side sets
// them: calloc and free).
var (
	cAlloc func(n uintptr) uintptr
	cFree  func(p uintptr)
)

var (
	streams sync.Map // object address -> *driver.Stream
	events  sync.Map // object address -> *driver.Event
)

// newObject makes a C object holding h in its first word.
func newObject(h uintptr) uintptr {
	p := cAlloc(objWords * 8)
	if p == 0 {
		return 0
	}
	*(*uintptr)(clib.Ptr(p)) = h
	return p
}

// streamArg finds FlagCX's stream object.
func streamArg(fn string, obj uintptr) (*driver.Stream, result) {
	v, ok := streams.Load(obj)
	if !ok && adopt(obj) {
		v, ok = streams.Load(obj)
	}
	if !ok {
		return nil, bad(fn, fmt.Sprintf("stream %#x is not a live stream of this plugin (streamCreate, streamCopy)", obj))
	}
	return v.(*driver.Stream), resSuccess
}

func eventArg(fn string, obj uintptr) (*driver.Event, result) {
	v, ok := events.Load(obj)
	if !ok {
		return nil, bad(fn, fmt.Sprintf("event %#x is not a live event of this plugin (eventCreate)", obj))
	}
	return v.(*driver.Event), resSuccess
}

// streamCreate makes a non-blocking stream, as the built-in adaptors'
// cudaStreamCreateWithFlags(cudaStreamNonBlocking).
func streamCreate(dev int, out uintptr) result {
	const fn = "streamCreate"
	if out == 0 {
		return bad(fn, "stream is NULL")
	}
	*(*uintptr)(clib.Ptr(out)) = 0
	return call(fn, func(b *driver.Backend) error {
		st, err := b.NewStreamWith(dev, true)
		if err != nil {
			return err
		}
		obj := newObject(st.Handle())
		if obj == 0 {
			_ = st.Destroy()
			return errors.New("calloc of a stream object failed")
		}
		streams.Store(obj, st)
		register(obj, st.Handle(), st.Device(), kindStream)
		*(*uintptr)(clib.Ptr(out)) = obj
		return nil
	})
}

// streamCopy wraps a stream of another owner (a framework's) in an object
// of the same layout; streamFree releases the object only.
func streamCopy(dev int, out, native uintptr) result {
	const fn = "streamCopy"
	if out == 0 {
		return bad(fn, "newStream is NULL")
	}
	*(*uintptr)(clib.Ptr(out)) = 0
	return call(fn, func(b *driver.Backend) error {
		st, err := b.ForeignStream(dev, native)
		if err != nil {
			return err
		}
		obj := newObject(native)
		if obj == 0 {
			return errors.New("calloc of a stream object failed")
		}
		streams.Store(obj, st)
		register(obj, st.Handle(), st.Device(), kindStream)
		*(*uintptr)(clib.Ptr(out)) = obj
		return nil
	})
}

// streamRelease forgets obj; destroy also destroys the native stream
// (streamDestroy) where the plugin created it.
func streamRelease(fn string, obj uintptr, destroy bool) result {
	if obj == 0 {
		return resSuccess
	}
	v, ok := streams.LoadAndDelete(obj)
	if !ok && adopt(obj) { // streamFree of a stream fast.c made: the object goes, as for the Go path's
		v, ok = streams.LoadAndDelete(obj)
	}
	if !ok {
		return bad(fn, fmt.Sprintf("stream %#x is not a live stream of this plugin", obj))
	}
	fastForget(obj)
	st := v.(*driver.Stream)
	var err error
	if destroy || st.Foreign() {
		err = st.Destroy() // a foreign stream's Destroy releases the wrapper only
	}
	*(*uintptr)(clib.Ptr(obj)) = 0
	cFree(obj)
	if err != nil {
		return fail(fn, err)
	}
	return resSuccess
}

func streamDestroy(obj uintptr) result { return streamRelease("streamDestroy", obj, true) }
func streamFree(obj uintptr) result    { return streamRelease("streamFree", obj, false) }

// onStream runs f on FlagCX's stream; a NULL stream is nothing to do (the
// built-in adaptors' rule for synchronize, query, waits and host
// functions).
func onStream(fn string, obj uintptr, f func(st *driver.Stream) error) result {
	if obj == 0 {
		return resSuccess
	}
	st, r := streamArg(fn, obj)
	if r != resSuccess {
		return r
	}
	if err := f(st); err != nil {
		return fail(fn, err)
	}
	return resSuccess
}

func streamSynchronize(obj uintptr) result {
	return onStream("streamSynchronize", obj, (*driver.Stream).Synchronize)
}

// streamQuery is Success, InProgress while work is pending (allocating
// nothing: FlagCX polls it), or the failure.
func streamQuery(obj uintptr) result {
	if obj == 0 {
		return resSuccess
	}
	st, r := streamArg("streamQuery", obj)
	if r != resSuccess {
		return r
	}
	if err := st.Query(); err != nil {
		if driver.IsPending(err) {
			return resInProgress
		}
		return fail("streamQuery", err)
	}
	return resSuccess
}

func streamWaitEvent(sobj, eobj uintptr) result {
	if sobj == 0 || eobj == 0 {
		return resSuccess
	}
	ev, r := eventArg("streamWaitEvent", eobj)
	if r != resSuccess {
		return r
	}
	return onStream("streamWaitEvent", sobj, func(st *driver.Stream) error { return st.Wait(ev) })
}

// streamValue64 is streamWaitValue64 (GEQ, FlagCX's flags ignored as the
// built-in does) and streamWriteValue64.
func streamValue64(fn string, obj, addr uintptr, value uint64, write bool) result {
	if obj == 0 || addr == 0 {
		return bad(fn, "a NULL stream or address")
	}
	return onStream(fn, obj, func(st *driver.Stream) error {
		if write {
			return st.WriteValue64(device.Ptr(addr), value)
		}
		return st.WaitValue64(device.Ptr(addr), value)
	})
}

// launchHostFunc queues FlagCX's C function itself (no Go in between when
// it runs).
func launchHostFunc(obj, fn, args uintptr) result {
	if obj != 0 && fn == 0 {
		return bad("launchHostFunc", "fn is NULL")
	}
	return onStream("launchHostFunc", obj, func(st *driver.Stream) error { return st.LaunchHostFuncC(fn, args) })
}

// eventCreate makes an event, with timing unless FlagCX asks otherwise
// (flagcxEventDisableTiming).
func eventCreate(dev int, out uintptr, kind int) result {
	const fn = "eventCreate"
	if out == 0 {
		return bad(fn, "event is NULL")
	}
	*(*uintptr)(clib.Ptr(out)) = 0
	if kind != 0 && kind != 1 {
		return bad(fn, fmt.Sprintf("unknown event type %d (0 default, 1 disable timing)", kind))
	}
	return call(fn, func(b *driver.Backend) error {
		ev, err := b.NewEventWith(dev, kind == 0)
		if err != nil {
			return err
		}
		obj := newObject(ev.Handle())
		if obj == 0 {
			_ = ev.Destroy()
			return errors.New("calloc of an event object failed")
		}
		events.Store(obj, ev)
		register(obj, ev.Handle(), ev.Device(), kindEvent)
		*(*uintptr)(clib.Ptr(out)) = obj
		return nil
	})
}

func eventDestroy(obj uintptr) result {
	const fn = "eventDestroy"
	if obj == 0 {
		return resSuccess
	}
	v, ok := events.LoadAndDelete(obj)
	if !ok {
		return bad(fn, fmt.Sprintf("event %#x is not a live event of this plugin", obj))
	}
	fastForget(obj)
	err := v.(*driver.Event).Destroy()
	*(*uintptr)(clib.Ptr(obj)) = 0
	cFree(obj)
	if err != nil {
		return fail(fn, err)
	}
	return resSuccess
}

// defaultStreams are the devices' legacy default streams (handle 0), for
// an event recorded with no stream.
var defaultStreams sync.Map // device index -> *driver.Stream

func defaultStream(b *driver.Backend, dev int) (*driver.Stream, error) {
	if v, ok := defaultStreams.Load(dev); ok {
		return v.(*driver.Stream), nil
	}
	st, err := b.ForeignStream(dev, 0)
	if err != nil {
		return nil, err
	}
	v, _ := defaultStreams.LoadOrStore(dev, st)
	return v.(*driver.Stream), nil
}

// eventRecord records on FlagCX's stream, or on the event's device's
// default stream when it gives none.
func eventRecord(eobj, sobj uintptr) result {
	const fn = "eventRecord"
	if eobj == 0 {
		return resSuccess
	}
	ev, r := eventArg(fn, eobj)
	if r != resSuccess {
		return r
	}
	if sobj != 0 {
		return onStream(fn, sobj, func(st *driver.Stream) error { return st.Record(ev) })
	}
	return call(fn, func(b *driver.Backend) error {
		st, err := defaultStream(b, ev.Device())
		if err != nil {
			return err
		}
		return st.Record(ev)
	})
}

func onEvent(fn string, obj uintptr, f func(ev *driver.Event) error) result {
	if obj == 0 {
		return resSuccess
	}
	ev, r := eventArg(fn, obj)
	if r != resSuccess {
		return r
	}
	if err := f(ev); err != nil {
		if driver.IsPending(err) {
			return resInProgress
		}
		return fail(fn, err)
	}
	return resSuccess
}

func eventSynchronize(obj uintptr) result {
	return onEvent("eventSynchronize", obj, (*driver.Event).Synchronize)
}

func eventQuery(obj uintptr) result { return onEvent("eventQuery", obj, (*driver.Event).Query) }

// eventElapsedTime is the milliseconds between two recorded events;
// InProgress while either is pending.
func eventElapsedTime(ms, start, end uintptr) result {
	const fn = "eventElapsedTime"
	if ms == 0 || start == 0 || end == 0 {
		return bad(fn, "a NULL argument")
	}
	a, r := eventArg(fn, start)
	if r != resSuccess {
		return r
	}
	return onEvent(fn, end, func(e *driver.Event) error {
		d, err := e.Since(a)
		if err == nil {
			*(*float32)(clib.Ptr(ms)) = float32(d.Seconds() * 1000)
		}
		return err
	})
}
