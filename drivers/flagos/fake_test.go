package flagos_test

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// errVendor is what a fake vendor backend returns when told to fail.
var errVendor = errors.New("fake vendor: device lost")

// fake is a vendor backend with n devices. It counts the calls the router's
// decision makes, so tests can prove the decision ran once.
type fake struct {
	typ    device.Type
	n      int
	avail  bool
	reason string
	fail   bool // every device call returns errVendor
	name   string

	availCalls atomic.Int64
	countCalls atomic.Int64

	mu      sync.Mutex
	cur     int
	lastSet int
}

func newFake(t device.Type, n int, avail bool, reason string) *fake {
	return &fake{typ: t, n: n, avail: avail, reason: reason, name: "Fake " + string(t), lastSet: -1}
}

func (f *fake) Type() device.Type { return f.typ }

func (f *fake) Available() probe.Result {
	f.availCalls.Add(1)
	if !f.avail {
		return probe.Result{Reason: f.reason}
	}
	return probe.Result{Available: true, Devices: f.n, Reason: f.reason}
}

func (f *fake) DeviceCount() (int, error) {
	f.countCalls.Add(1)
	return f.n, nil
}

func (f *fake) Current() (int, error) {
	if f.fail {
		return 0, errVendor
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur, nil
}

func (f *fake) SetCurrent(i int) error {
	if f.fail {
		return errVendor
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur, f.lastSet = i, i
	return nil
}

func (f *fake) Synchronize(i int) error {
	if f.fail {
		return errVendor
	}
	return nil
}

func (f *fake) Properties(i int) (device.Properties, error) {
	if f.fail {
		return device.Properties{}, errVendor
	}
	return device.Properties{Name: f.name, Vendor: "Vendor of " + string(f.typ), UUID: "uuid", TotalMemory: 1 << 30, Major: 2, Minor: 2, MultiProcessors: 4}, nil
}

// describedFake is a fake that is also a device.Describer.
type describedFake struct {
	*fake
	info device.Info
}

func (d describedFake) Describe() device.Info { return d.info }

// registry returns a device registry holding bs.
func registry(t interface{ Fatalf(string, ...any) }, bs ...device.Backend) *device.Registry {
	devs := device.NewRegistry()
	for _, b := range bs {
		if err := devs.Register(b); err != nil {
			t.Fatalf("register %s: %v", b.Type(), err)
		}
	}
	return devs
}

// env is a getenv that answers FLAGOS_BACKEND with v and counts its reads.
type env struct {
	v     string
	reads atomic.Int64
}

func (e *env) get(k string) string {
	e.reads.Add(1)
	if k == "FLAGOS_BACKEND" {
		return e.v
	}
	return ""
}
