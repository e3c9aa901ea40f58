package drivertest

import (
	"encoding/binary"
	"errors"
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
// table is made from it.

func init() {
	cases = append(cases,
		fakeCase{name: "memops", skip: lacksStreamsAndMemory, setup: withOverride(nil), check: memops},
		fakeCase{name: "stream_ops", skip: lacksStreamsAndMemory, setup: withOverride(nil), check: streamOps},
		fakeCase{name: "stream_ops_busy", skip: lacksStreamsAndMemory, setup: withOverride(nil, "FAKE_QUERY_BUSY=3"), check: streamOpsBusy},
		fakeCase{name: "ipc_pci_dmabuf", skip: lacksStreamsAndMemory, setup: withOverride(nil), check: ipcPCIDMABuf},
		fakeCase{name: "dmabuf_refused", skip: lacksStreamsAndMemory, setup: withOverride(nil, "FAKE_DMA_BUF=0"), check: dmaBufRefused},
		fakeCase{name: "memops_not_supported", setup: withOverride([]string{"-DFAKE_NO_MORE_OPS"}), check: noMemOps},
	)
}

// Operation is one row of the support table: what it does and the driver
// operations it needs.
type Operation struct {
	Name string
	Ops  []driver.Op
}

// Operations are the rows of the support table, in order.
var Operations = []Operation{
	{"memset (8/16/32-bit)", []driver.Op{driver.OpMemsetD8, driver.OpMemsetD16, driver.OpMemsetD32}},
	{"memset on a stream", []driver.Op{driver.OpMemsetD8Async, driver.OpMemsetD16Async, driver.OpMemsetD32Async}},
	{"device-to-device copy", []driver.Op{driver.OpMemcpyDtoD}},
	{"device-to-device copy on a stream", []driver.Op{driver.OpMemcpyDtoDAsync}},
	{"managed memory", []driver.Op{driver.OpMemAllocManaged}},
	{"stream-ordered alloc/free", []driver.Op{driver.OpMemAllocAsync, driver.OpMemFreeAsync}},
	{"mapped host memory's device address", []driver.Op{driver.OpMemHostGetDevicePtr}},
	{"stream query", []driver.Op{driver.OpStreamQuery}},
	{"event query", []driver.Op{driver.OpEventQuery}},
	{"64-bit value wait/write", []driver.Op{driver.OpStreamWaitValue64, driver.OpStreamWriteValue64}},
	{"host function on a stream", []driver.Op{driver.OpLaunchHostFunc}},
	{"IPC memory handles", []driver.Op{driver.OpIpcGetMemHandle, driver.OpIpcOpenMemHandle, driver.OpIpcCloseMemHandle}},
	{"device by PCI bus id", []driver.Op{driver.OpDeviceByPCIBusID}},
	{"dma-buf export", []driver.Op{driver.OpMemGetHandleForRange}},
}

// Supports says, for each of Operations by name, whether v binds it (and,
// for dma-buf, knows the attribute that says a device can): what the kit
// expects to work on v's full fake, the rest answering
// device.ErrNotSupported.
func Supports(v *driver.Vendor) map[string]bool {
	out := map[string]bool{}
	for _, o := range Operations {
		ok := true
		for _, op := range o.Ops {
			if len(v.Symbols[op]) == 0 && v.Adapters[op] == nil {
				ok = false
			}
		}
		if o.Ops[0] == driver.OpMemGetHandleForRange && v.Attributes.DMABufSupported == 0 {
			ok = false
		}
		out[o.Name] = ok
	}
	return out
}

func (s *Suite) supports(name string) bool {
	ok, known := Supports(s.Vendor)[name]
	if !known {
		panic("drivertest: no operation " + name)
	}
	return ok
}

// lacksStreamsAndMemory skips what needs device memory and streams.
func lacksStreamsAndMemory(s *Suite) string {
	if !s.binds(driver.OpMemAlloc, driver.OpMemcpyHtoD, driver.OpMemcpyDtoH, driver.OpStreamCreate, driver.OpMemHostAlloc) {
		return string(s.typ()) + " binds no device memory or streams: the second group's cases need both"
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

	if s.supports("memset (8/16/32-bit)") {
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

	if s.supports("device-to-device copy") {
		require.NoError(t, b.CopyHtoD(1, q, []byte(strings.Repeat("0123456789abcdef", 4))))
		require.NoError(t, b.CopyDtoD(1, p, q+16, 32))
		assert.Equal(t, strings.Repeat("0123456789abcdef", 2), string(read(t, b, p, 32)))
		assert.ErrorIs(t, b.CopyDtoD(1, p, q+60, 8), device.ErrInvalidValue, "the source runs past its allocation")
	} else {
		unsupported(t, b.CopyDtoD(1, p, q, 8), "device-to-device copy")
	}

	if s.supports("managed memory") {
		m, err := b.AllocManaged(1, 32)
		require.NoError(t, err)
		require.NoError(t, b.CopyHtoD(1, m, []byte("managed memory, reachable here.")))
		assert.Equal(t, "managed memory, reachable here.", string(read(t, b, m, 31)))
		require.NoError(t, b.Free(1, m))
	} else {
		_, err := b.AllocManaged(1, 32)
		unsupported(t, err, "managed memory")
	}

	hb, err := b.AllocHost(1, 64)
	require.NoError(t, err)
	host := uintptr(unsafe.Pointer(unsafe.SliceData(hb.Bytes())))
	if s.supports("mapped host memory's device address") {
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
	_, err = b.HostDevicePointer(1, 0)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	require.NoError(t, hb.Free())

	if s.supports("managed memory") {
		_, err = b.AllocManaged(9, 8)
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
	}
	if s.supports("memset (8/16/32-bit)") {
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

	if s.supports("IPC memory handles") {
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

	if s.supports("device by PCI bus id") {
		for i := 0; i < 2; i++ {
			id, err := b.PCIBusID(i)
			require.NoError(t, err)
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

	if s.supports("dma-buf export") {
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
	if !s.supports("dma-buf export") {
		t.Skipf("%s: no dma-buf export to refuse", s.typ())
	}
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
		bindsAny = bindsAny || s.supports(o.Name)
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
	if s.supports("memset (8/16/32-bit)") {
		assert.ErrorContains(t, b.Memset(0, 0, 0, 1, 1), s.sym(driver.OpMemsetD8), "the error names the missing function")
	}
	if !s.binds(driver.OpStreamCreate) {
		return
	}
	st, err := b.NewStreamWith(0, false)
	if errors.Is(err, device.ErrNotSupported) {
		return // the variant lacks streams too
	}
	require.NoError(t, err)
	defer st.Destroy()
	assert.ErrorIs(t, st.Query(), device.ErrNotSupported)
	assert.ErrorIs(t, st.WaitValue64(0, 1), device.ErrNotSupported)
	assert.ErrorIs(t, st.LaunchHostFunc(func() {}), device.ErrNotSupported)
	_, err = st.Alloc(8)
	assert.ErrorIs(t, err, device.ErrNotSupported)
}
