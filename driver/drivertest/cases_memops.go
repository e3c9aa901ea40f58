package drivertest

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// The cases of the second group of operations (device.MemoryOps,
// device.StreamOps, device.EventQuerier, device.IPC, device.PCIDevices,
// device.DMABuf). Each judges by effect on the fake (fake_ops.h): a memset
// sets, a copy copies, a value wait holds its stream until the value is
// written, a host function runs after the work before it. What the vendor
// does not bind must answer device.ErrNotSupported naming what is
// missing; Supports is the claim both branches check, and docs/flagcx.md's
// table is made from it. The cases are rows of the kit's table (cases.go).

// Operation is one row of the support table: what it does and the feature
// it belongs to, as driver.Vendor.Unbound names it.
type Operation struct {
	Name    string
	Feature string
}

// Operations are the rows of the support table, in order.
var Operations = []Operation{
	{"memset (8/16/32-bit)", "memset"},
	{"memset on a stream", "asynchronous memset"},
	{"device-to-device copy", "device-to-device copies"},
	{"device-to-device copy on a stream", "asynchronous device-to-device copies"},
	{"managed memory", "managed memory"},
	{"stream-ordered alloc/free", "stream-ordered allocation"},
	{"mapped host memory's device address", "mapped host memory"},
	{"stream query", "stream queries"},
	{"event query", "event queries"},
	{"64-bit value wait/write", "stream memory operations"},
	{"host function on a stream", "host functions"},
	{"IPC memory handles", "IPC memory handles"},
	{"device by PCI bus id", "PCI bus id lookup"},
	{"dma-buf export", "DMA-buf"},
}

// Supports says, for each of Operations by name, whether the core declares
// its feature supported for v (it is not among v.Unbound()'s) and, for
// dma-buf, whether v knows the attribute that says a device can export:
// what the kit expects to work on v's full fake, the rest answering
// device.ErrNotSupported.
func Supports(v *driver.Vendor) map[string]bool {
	unbound := v.Unbound()
	out := map[string]bool{}
	for _, o := range Operations {
		ok := !slices.Contains(unbound, o.Feature)
		if o.Feature == "DMA-buf" && v.Attributes.DMABufSupported == 0 {
			ok = false
		}
		out[o.Name] = ok
	}
	return out
}

// claims is Supports's answer for the operation named name.
func (s *Suite) claims(name string) bool {
	ok, known := Supports(s.Vendor)[name]
	if !known {
		panic("drivertest: no operation " + name)
	}
	return ok
}

// noDMABufAttribute: a vendor that binds the export but names no
// attribute saying a device can (Attributes.DMABufSupported) claims no
// export, so there is no export to refuse.
func noDMABufAttribute(s *Suite) string {
	if s.Vendor.Attributes.DMABufSupported == 0 {
		return string(s.typ()) + " names no dma-buf support attribute (Vendor.Attributes.DMABufSupported): it claims no export to refuse"
	}
	return ""
}

// unsupported checks err is the clear "not supported" of an operation the
// vendor does not bind.
func unsupported(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	assert.ErrorIs(t, err, device.ErrNotSupported, what)
}

func read(t *testing.T, b *driver.Backend, p device.Ptr, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	require.NoError(t, b.CopyDtoH(1, out, p))
	return out
}

func memops(t *testing.T, s *Suite, b *driver.Backend) {
	allocs := counter(t, "fake_live_allocs")
	before := allocs()
	p, err := b.Alloc(1, 64)
	require.NoError(t, err)
	q, err := b.Alloc(1, 64)
	require.NoError(t, err)

	if s.claims("memset (8/16/32-bit)") {
		require.NoError(t, b.Memset(1, p, 0xab, 1, 64))
		assert.Equal(t, strings.Repeat("\xab", 64), string(read(t, b, p, 64)))
		require.NoError(t, b.Memset(1, p, 0x1234, 2, 8))
		require.NoError(t, b.Memset(1, p+16, 0xdeadbeef, 4, 4))
		got := read(t, b, p, 64)
		for i := 0; i < 8; i++ {
			assert.Equal(t, uint16(0x1234), binary.LittleEndian.Uint16(got[2*i:]), "16-bit element %d", i)
		}
		for i := 0; i < 4; i++ {
			assert.Equal(t, uint32(0xdeadbeef), binary.LittleEndian.Uint32(got[16+4*i:]), "32-bit element %d", i)
		}
		assert.Equal(t, byte(0xab), got[32], "past the last element nothing changed")
		assert.ErrorIs(t, b.Memset(1, p, 0, 3, 1), device.ErrInvalidValue, "no 3-byte width")
		assert.ErrorIs(t, b.Memset(1, p, 0x100, 1, 1), device.ErrInvalidValue, "0x100 does not fit a byte")
		assert.ErrorIs(t, b.Memset(1, p+32, 7, 4, 16), device.ErrInvalidValue, "past the allocation: the driver refuses")
		assert.NoError(t, b.Memset(1, p, 1, 4, 0), "nothing to set")
	} else {
		unsupported(t, b.Memset(1, p, 0, 1, 64), "memset")
	}

	if s.claims("device-to-device copy") {
		require.NoError(t, b.CopyHtoD(1, q, []byte(strings.Repeat("0123456789abcdef", 4))))
		require.NoError(t, b.CopyDtoD(1, p, q+16, 32))
		assert.Equal(t, strings.Repeat("0123456789abcdef", 2), string(read(t, b, p, 32)))
		assert.ErrorIs(t, b.CopyDtoD(1, p, q+60, 8), device.ErrInvalidValue, "the source runs past its allocation")
	} else {
		unsupported(t, b.CopyDtoD(1, p, q, 8), "device-to-device copy")
	}

	if s.claims("managed memory") {
		m, err := b.AllocManaged(1, 32)
		require.NoError(t, err)
		require.NoError(t, b.CopyHtoD(1, m, []byte("managed memory, reachable here.")))
		assert.Equal(t, "managed memory, reachable here.", string(read(t, b, m, 31)))
		require.NoError(t, b.Free(1, m))
	} else {
		_, err := b.AllocManaged(1, 32)
		unsupported(t, err, "managed memory")
	}

	if s.supports("pinned host memory") {
		hb, err := b.AllocHost(1, 64)
		require.NoError(t, err)
		host := uintptr(unsafe.Pointer(unsafe.SliceData(hb.Bytes())))
		if s.claims("mapped host memory's device address") {
			dp, err := b.HostDevicePointer(1, host+8)
			require.NoError(t, err)
			assert.NotZero(t, dp)
			goMem := make([]byte, 8)
			_, err = b.HostDevicePointer(1, uintptr(unsafe.Pointer(&goMem[0])))
			assert.Error(t, err, "Go memory is not pinned")
		} else {
			_, err := b.HostDevicePointer(1, host)
			unsupported(t, err, "mapped host memory")
		}
		require.NoError(t, hb.Free())
	} else {
		// Mapped host memory is pinned memory's: without it there is none
		// to map, and the core must not claim the one without the other.
		require.False(t, s.claims("mapped host memory's device address"),
			"%s claims mapped host memory's device address without pinned host memory: the kit cannot check it", s.typ())
		_, err := b.HostDevicePointer(1, 4096)
		unsupported(t, err, "mapped host memory")
	}
	_, err = b.HostDevicePointer(1, 0)
	assert.ErrorIs(t, err, device.ErrInvalidValue)

	if s.claims("managed memory") {
		_, err = b.AllocManaged(9, 8)
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
	}
	if s.claims("memset (8/16/32-bit)") {
		assert.ErrorIs(t, b.Memset(9, p, 0, 1, 1), device.ErrInvalidIndex)
	}
	require.NoError(t, b.Free(1, p))
	require.NoError(t, b.Free(1, q))
	assert.Equal(t, before, allocs(), "every allocation is freed")
}

func ipcPCIDMABuf(t *testing.T, s *Suite, b *driver.Backend) {
	p, err := b.Alloc(1, 256)
	require.NoError(t, err)
	defer b.Free(1, p)

	if s.claims("IPC memory handles") {
		h, err := b.IPCHandle(1, p+16)
		require.NoError(t, err)
		assert.NotEqual(t, device.IPCHandle{}, h)
		q, err := b.OpenIPCHandle(1, h)
		require.NoError(t, err)
		assert.Equal(t, p, q, "the fake maps the allocation at its base")
		assert.Equal(t, 1, counter(t, "fake_ipc_mappings")())
		require.NoError(t, b.CloseIPCHandle(1, q))
		assert.Zero(t, counter(t, "fake_ipc_mappings")())
		assert.Error(t, b.CloseIPCHandle(1, q), "closed already")
		var garbage device.IPCHandle
		copy(garbage[:], "another process's garbage, not a handle at all")
		_, err = b.OpenIPCHandle(1, garbage)
		assert.ErrorIs(t, err, device.ErrInvalidValue)
		_, err = b.IPCHandle(1, 8)
		assert.Error(t, err, "no allocation there")
	} else {
		_, err := b.IPCHandle(1, p)
		unsupported(t, err, "IPC")
	}

	if s.claims("device by PCI bus id") {
		for i := 0; i < 2; i++ {
			id := s.pciBusID(i) // the fake's, as the vendor writes it
			if s.supports("PCI bus ids") {
				var err error
				id, err = b.PCIBusID(i)
				require.NoError(t, err)
			}
			for _, form := range []string{id, strings.ToLower(id), strings.ToUpper(id)} {
				got, err := b.DeviceByPCIBusID(form)
				require.NoError(t, err, form)
				assert.Equal(t, i, got, form)
			}
		}
		for _, bad := range []string{"0000:7f:00.0", "garbage", "", "00000000:18:00.0\x00x", strings.Repeat("0", 100)} {
			_, err := b.DeviceByPCIBusID(bad)
			assert.Error(t, err, "%q", bad)
		}
	} else {
		_, err := b.DeviceByPCIBusID(s.pciBusID(0))
		unsupported(t, err, "PCI lookup")
	}

	if s.claims("dma-buf export") {
		ok, err := b.DMABufSupported(1)
		require.NoError(t, err)
		assert.True(t, ok)
		fd, err := b.DMABufFD(1, p, 256)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, fd, 0)
		assert.NoError(t, unix.Close(fd), "a descriptor the caller owns")
		assert.Equal(t, 1, counter(t, "fake_dma_fds")())
		_, err = b.DMABufFD(1, p, 4096)
		assert.ErrorIs(t, err, device.ErrInvalidValue, "past the allocation")
	} else {
		_, err := b.DMABufSupported(1)
		unsupported(t, err, "dma-buf support")
		_, err = b.DMABufFD(1, p, 256)
		unsupported(t, err, "dma-buf export")
	}
}

// dmaBufRefused: a driver whose devices cannot export (FAKE_DMA_BUF=0)
// says so, and an export fails as not supported.
func dmaBufRefused(t *testing.T, s *Suite, b *driver.Backend) {
	require.True(t, s.claims("dma-buf export"), "the case's row needs the export (needs and noDMABufAttribute)")
	ok, err := b.DMABufSupported(0)
	require.NoError(t, err)
	assert.False(t, ok)
	p, err := b.Alloc(0, 64)
	require.NoError(t, err)
	defer b.Free(0, p)
	_, err = b.DMABufFD(0, p, 64)
	assert.ErrorIs(t, err, device.ErrNotSupported)
}

// noMemOps: a library without the second group keeps everything else, and
// every call names what is missing.
func noMemOps(t *testing.T, s *Suite, b *driver.Backend) {
	require.True(t, b.Available().Available, b.Available().Reason)
	missing := 0
	for k := range b.Describe().Extra {
		if strings.HasPrefix(k, "missing.") {
			missing++
		}
	}
	bindsAny := false
	for _, o := range Operations {
		bindsAny = bindsAny || s.claims(o.Name)
	}
	if bindsAny {
		assert.Greater(t, missing, len(s.Vendor.Unbound()), "Describe reports what the library lacks beyond what the vendor never binds")
	} else {
		assert.GreaterOrEqual(t, missing, len(s.Vendor.Unbound()), "what the vendor never binds is missing")
	}
	var errs []error
	errs = append(errs, b.Memset(0, 0, 0, 1, 1), b.CopyDtoD(0, 0, 0, 1))
	_, err := b.AllocManaged(0, 8)
	errs = append(errs, err)
	_, err = b.HostDevicePointer(0, 1)
	errs = append(errs, err)
	_, err = b.IPCHandle(0, 0)
	errs = append(errs, err)
	_, err = b.OpenIPCHandle(0, device.IPCHandle{})
	errs = append(errs, err)
	_, err = b.DeviceByPCIBusID(s.pciBusID(0))
	errs = append(errs, err)
	_, err = b.DMABufFD(0, 0, 1)
	errs = append(errs, err)
	for i, err := range errs {
		assert.ErrorIs(t, err, device.ErrNotSupported, "call %d", i)
	}
	if s.claims("memset (8/16/32-bit)") {
		assert.ErrorContains(t, b.Memset(0, 0, 0, 1, 1), s.sym(driver.OpMemsetD8), "the error names the missing function")
	}
	if !s.supports("streams") {
		return
	}
	st, err := b.NewStreamWith(0, false)
	require.NoError(t, err, "the variant lacks the second group only")
	defer st.Destroy()
	assert.ErrorIs(t, st.Query(), device.ErrNotSupported)
	assert.ErrorIs(t, st.WaitValue64(0, 1), device.ErrNotSupported)
	assert.ErrorIs(t, st.LaunchHostFunc(func() {}), device.ErrNotSupported)
	_, err = st.Alloc(8)
	assert.ErrorIs(t, err, device.ErrNotSupported)
}
