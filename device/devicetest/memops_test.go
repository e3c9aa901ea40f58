package devicetest_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/hooks"
)

func TestMemoryOps(t *testing.T) {
	b, _ := newFake(hooks.NewHooks())
	mo, err := device.MemoryOpsOf(b)
	require.NoError(t, err)
	p, err := b.Alloc(0, 64)
	require.NoError(t, err)
	require.NoError(t, mo.Memset(0, p, 0xab, 1, 64))
	require.NoError(t, mo.Memset(0, p+8, 0xbeef, 2, 4))
	require.NoError(t, mo.Memset(0, p+16, 0x01020304, 4, 2))
	got := make([]byte, 64)
	require.NoError(t, b.CopyDtoH(0, got, p))
	assert.Equal(t, strings.Repeat("\xab", 8)+strings.Repeat("\xef\xbe", 4)+strings.Repeat("\x04\x03\x02\x01", 2), string(got[:24]))
	assert.Equal(t, byte(0xab), got[24])
	for _, c := range []struct {
		value uint32
		width int
	}{{0, 3}, {0x100, 1}, {0x10000, 2}, {0, 8}} {
		assert.ErrorIs(t, mo.Memset(0, p, c.value, c.width, 1), device.ErrInvalidValue, "%+v", c)
	}
	assert.ErrorIs(t, mo.Memset(0, p+60, 0, 4, 2), device.ErrInvalidValue, "past the allocation")

	q, err := mo.AllocManaged(0, 64)
	require.NoError(t, err)
	require.NoError(t, mo.CopyDtoD(0, q, p, 24))
	require.NoError(t, b.CopyDtoH(0, got, q))
	assert.Equal(t, strings.Repeat("\xab", 8), string(got[:8]))
	assert.ErrorIs(t, mo.CopyDtoD(0, q, p+50, 24), device.ErrInvalidValue)
	require.NoError(t, b.Free(0, q))

	st, err := b.NewStream(0)
	require.NoError(t, err)
	hb, err := b.AllocHost(0, 32)
	require.NoError(t, err)
	host := uintptr(unsafe.Pointer(unsafe.SliceData(hb.Bytes())))
	dp, err := mo.HostDevicePointer(0, host+4)
	require.NoError(t, err)
	require.NoError(t, mo.Memset(0, dp, 7, 1, 4))
	assert.Equal(t, []byte{0, 0, 0, 0, 7, 7, 7, 7}, hb.Bytes()[:8], "the device writes the host buffer itself")
	_, err = mo.HostDevicePointer(0, uintptr(unsafe.Pointer(&got[0])))
	assert.ErrorIs(t, err, device.ErrInvalidValue, "Go memory is no host buffer")
	require.NoError(t, hb.Free())
	assert.ErrorIs(t, mo.Memset(0, dp, 7, 1, 4), device.ErrInvalidValue, "unmapped with the buffer")
	require.NoError(t, st.Destroy())
}

func TestStreamOpsOrderByValue(t *testing.T) {
	b, _ := newFake(hooks.NewHooks())
	s1, err := b.NewStream(0)
	require.NoError(t, err)
	s2, err := b.NewStream(0)
	require.NoError(t, err)
	o1, err := device.StreamOpsOf(s1)
	require.NoError(t, err)
	o2, err := device.StreamOpsOf(s2)
	require.NoError(t, err)
	ev, err := b.NewEvent(0)
	require.NoError(t, err)
	q, err := device.EventQuerierOf(ev)
	require.NoError(t, err)
	flag, err := b.Alloc(0, 8)
	require.NoError(t, err)
	p, err := b.Alloc(0, 16)
	require.NoError(t, err)

	require.NoError(t, o1.WaitValue64(flag, 2))
	require.NoError(t, o1.Memset(p, 5, 1, 16))
	require.NoError(t, s1.Record(ev))
	var order []string
	require.NoError(t, o1.LaunchHostFunc(func() { order = append(order, "host") }))
	assert.ErrorIs(t, o1.Query(), device.ErrNotReady)
	assert.ErrorIs(t, q.Query(), device.ErrNotReady)
	require.NoError(t, o2.WriteValue64(flag, 1))
	require.NoError(t, s2.Synchronize())
	assert.ErrorIs(t, o1.Query(), device.ErrNotReady, "1 < 2: still held")
	assert.Empty(t, order)
	require.NoError(t, o2.WriteValue64(flag, 2))
	require.NoError(t, s1.Synchronize(), "the other stream's write releases it")
	assert.NoError(t, o1.Query())
	assert.NoError(t, q.Query())
	assert.Equal(t, []string{"host"}, order)
	var w [8]byte
	require.NoError(t, b.CopyDtoH(0, w[:], flag))
	assert.Equal(t, uint64(2), binary.LittleEndian.Uint64(w[:]))
	assert.ErrorIs(t, o1.WaitValue64(flag+4, 1), device.ErrInvalidValue, "unaligned")

	a, err := o2.Alloc(32)
	require.NoError(t, err)
	require.NoError(t, o2.CopyDtoD(a, p, 16))
	require.NoError(t, o2.Free(a))
	require.NoError(t, s2.Synchronize())
	free, _, err := b.MemInfo(0)
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<20-24), free, "the stream-ordered allocation is back")
	require.NoError(t, s1.Destroy())
	assert.ErrorIs(t, o1.Query(), device.ErrReleased)
}

func TestIPCPCIDMABuf(t *testing.T) {
	b, _ := newFake(hooks.NewHooks())
	ipc, err := device.IPCOf(b)
	require.NoError(t, err)
	p, err := b.Alloc(1, 128)
	require.NoError(t, err)
	h, err := ipc.IPCHandle(1, p+10)
	require.NoError(t, err)
	q, err := ipc.OpenIPCHandle(1, h)
	require.NoError(t, err)
	assert.Equal(t, p, q)
	require.NoError(t, ipc.CloseIPCHandle(1, q))
	assert.ErrorIs(t, ipc.CloseIPCHandle(1, q), device.ErrInvalidValue)
	_, err = ipc.OpenIPCHandle(0, h)
	assert.ErrorIs(t, err, device.ErrInvalidValue, "another device's allocation")
	h[17]++
	_, err = ipc.OpenIPCHandle(1, h)
	assert.ErrorIs(t, err, device.ErrInvalidValue, "a corrupted handle")

	pci, err := device.PCIDevicesOf(b)
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		id, err := pci.PCIBusID(i)
		require.NoError(t, err)
		for _, f := range []string{id, strings.ToLower(id), id[4:]} {
			got, err := pci.DeviceByPCIBusID(f)
			require.NoError(t, err, f)
			assert.Equal(t, i, got)
		}
	}
	_, err = pci.DeviceByPCIBusID("0000:99:00.0")
	assert.ErrorIs(t, err, device.ErrNotFound)
	_, err = pci.DeviceByPCIBusID("nonsense")
	assert.ErrorIs(t, err, device.ErrInvalidValue)

	dma, err := device.DMABufOf(b)
	require.NoError(t, err)
	ok, err := dma.DMABufSupported(1)
	require.NoError(t, err)
	assert.True(t, ok)
	fd, err := dma.DMABufFD(1, p, 128)
	require.NoError(t, err)
	assert.NoError(t, unix.Close(fd))
	_, err = dma.DMABufFD(1, p, 4096)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
}
