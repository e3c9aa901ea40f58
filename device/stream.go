package device

import "time"

// Streams is implemented by backends with asynchronous work queues: cuda,
// musa and hip (CUstream, MUstream, hipStream_t) and the flagos device,
// which forwards to the backend it routes to. Use [StreamsOf] to get it.
//
// Work queued on one stream runs in order; work on different streams may
// overlap. Asynchronous copies need host memory the driver has pinned
// (AllocHost): a copy from or to ordinary Go memory could outlive the Go
// value, so Stream's copies refuse it and say so (ErrInvalidValue); use
// Memory's synchronous copies for Go memory.
type Streams interface {
	// NewStream creates a stream on device index (-1: the current device).
	NewStream(index int) (Stream, error)
	// NewEvent creates an event on device index, with timing enabled.
	NewEvent(index int) (Event, error)
	// AllocHost allocates size bytes of pinned (page-locked) host memory
	// for device index's asynchronous copies.
	AllocHost(index int, size uint64) (HostBuffer, error)
}

// Stream is an ordered queue of work on one device. Its methods are safe for
// concurrent use; after Destroy they fail with an error matching
// ErrReleased.
type Stream interface {
	// Device is the index of the stream's device.
	Device() int
	// Launch queues fn on the stream (see Compute.Launch for args). fn must
	// belong to a module loaded on the stream's device.
	Launch(fn Function, grid, block [3]uint32, sharedMem uint32, args ...any) error
	// CopyHtoD queues a copy of src to device memory at dst. src must lie
	// inside a HostBuffer of the same backend, which must stay allocated
	// until the copy is done.
	CopyHtoD(dst Ptr, src []byte) error
	// CopyDtoH queues a copy of len(dst) bytes at src into dst, which must
	// lie inside a HostBuffer of the same backend; read it after
	// Synchronize (or an event recorded after the copy).
	CopyDtoH(dst []byte, src Ptr) error
	// Record records e at the current end of the stream.
	Record(e Event) error
	// Wait makes later work on the stream wait for e.
	Wait(e Event) error
	// Synchronize waits for all work queued on the stream.
	Synchronize() error
	// Destroy releases the stream once its queued work is done. A second
	// call does nothing.
	Destroy() error
}

// Event marks a point in a stream's work.
type Event interface {
	// Device is the index of the event's device.
	Device() int
	// Synchronize waits until the work before the event's last Record is
	// done.
	Synchronize() error
	// Since is the device time between start's record and this event's;
	// both must have been recorded and reached (ErrNotReady otherwise).
	Since(start Event) (time.Duration, error)
	// Destroy releases the event. A second call does nothing.
	Destroy() error
}

// HostBuffer is pinned host memory from Streams.AllocHost.
type HostBuffer interface {
	// Bytes is the buffer's memory; it is valid until Free. Sub-slices of
	// it may be given to Stream's copies.
	Bytes() []byte
	// Free releases the memory; the caller makes sure no copy using it is
	// still queued. A second call does nothing.
	Free() error
}
