package driver

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/flagos-ai/flagshim/device"
)

// ForeignModule is a module that another loader of the process loaded
// (Triton, CuPy, cuda-python, the CUDA runtime), wrapped so flagshim's
// module hooks can run on it: a device.Module. The host owns the module:
// flagshim never unloads it.
//
// Its Global looks names up in the calling thread's current context, which
// must be the module's own, as it is on the thread that loaded it (a
// Triton load hook runs there; so does a C host calling into the shared
// library right after its own load). It therefore locks nothing and selects
// no device: the host's context is the one to use.
type ForeignModule struct {
	b     *Backend
	h     uintptr
	label string
}

var _ device.Module = (*ForeignModule)(nil)

// Adopt wraps the driver module handle h (a CUmodule, MUmodule,
// hipModule_t) that another loader loaded. The driver must be usable in
// this process (the host initialized it to load the module).
func (b *Backend) Adopt(h uintptr, label string) (*ForeignModule, error) {
	if h == 0 {
		return nil, fmt.Errorf("%w: %s: Adopt of a NULL module handle", device.ErrInvalidValue, b.v.Type)
	}
	if _, err := b.ready("module hooks on foreign modules", OpModuleGetGlobal); err != nil {
		return nil, err
	}
	if label == "" {
		label = "foreign#" + strconv.FormatUint(uint64(h), 16)
	}
	return &ForeignModule{b: b, h: h, label: label}, nil
}

// Backend is the vendor's device type.
func (m *ForeignModule) Backend() device.Type { return m.b.v.Type }

// Handle is the host's module handle.
func (m *ForeignModule) Handle() uintptr { return m.h }

// Label names the module in messages.
func (m *ForeignModule) Label() string { return m.label }

// Global looks a global up with the calling thread's current context; a
// name the module lacks gives ok false and a nil error.
func (m *ForeignModule) Global(name string) (addr uintptr, size uint64, ok bool, err error) {
	cname, err := cName("global", name)
	if err != nil {
		return 0, 0, false, fmt.Errorf("%s: module %q: %w", m.b.v.Type, m.label, err)
	}
	s := m.b.load()
	a, n, err := s.api.moduleGetGlobal(m.h, cname)
	switch {
	case err == nil:
		return uintptr(a), n, true, nil
	case errors.Is(err, device.ErrNotFound):
		return 0, 0, false, nil
	}
	return 0, 0, false, fmt.Errorf("%s(module %q, %q, the calling thread's context): %w", s.api.sym(OpModuleGetGlobal), m.label, name, err)
}
