package flagos_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/hooks"
)

// TestMemOpsThroughTheAlias: code written for cuda sets, copies, shares and
// exports device memory on a MUSA-only machine, and the stream operations
// it gets are the vendor stream's.
func TestMemOpsThroughTheAlias(t *testing.T) {
	cuda, _, _ := musaMachine(t, hooks.NewHooks())
	mo, err := device.MemoryOpsOf(cuda)
	require.NoError(t, err)
	p, err := cuda.(device.Memory).Alloc(1, 64)
	require.NoError(t, err)
	require.NoError(t, mo.Memset(1, p, 0x11, 1, 64))
	q, err := mo.AllocManaged(1, 64)
	require.NoError(t, err)
	require.NoError(t, mo.CopyDtoD(1, q, p, 64))
	got := make([]byte, 4)
	require.NoError(t, cuda.(device.Memory).CopyDtoH(1, got, q+60))
	assert.Equal(t, []byte{0x11, 0x11, 0x11, 0x11}, got)
	err = mo.Memset(1, p, 0, 3, 1)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "flagos:1 (musa:1)")
	assert.ErrorIs(t, mo.Memset(5, p, 0, 1, 1), device.ErrInvalidIndex)
	_, err = mo.HostDevicePointer(1, 0x1000)
	assert.ErrorIs(t, err, device.ErrInvalidValue)

	ipc, err := device.IPCOf(cuda)
	require.NoError(t, err)
	h, err := ipc.IPCHandle(1, p)
	require.NoError(t, err)
	r, err := ipc.OpenIPCHandle(1, h)
	require.NoError(t, err)
	assert.Equal(t, p, r)
	require.NoError(t, ipc.CloseIPCHandle(1, r))

	pci, err := device.PCIDevicesOf(cuda)
	require.NoError(t, err)
	id, err := pci.PCIBusID(1)
	require.NoError(t, err)
	i, err := pci.DeviceByPCIBusID(id)
	require.NoError(t, err)
	assert.Equal(t, 1, i)
	_, err = pci.DeviceByPCIBusID("ffff:ff:1f.7")
	assert.ErrorIs(t, err, device.ErrNotFound)

	dma, err := device.DMABufOf(cuda)
	require.NoError(t, err)
	ok, err := dma.DMABufSupported(0)
	require.NoError(t, err)
	assert.True(t, ok)
	fd, err := dma.DMABufFD(1, p, 64)
	require.NoError(t, err)
	assert.NoError(t, unix.Close(fd))

	st, err := cuda.(device.Streams).NewStream(1)
	require.NoError(t, err)
	so, err := device.StreamOpsOf(st)
	require.NoError(t, err, "the vendor's stream")
	require.NoError(t, so.Memset(p, 0x22, 1, 8))
	require.NoError(t, st.Synchronize())
	assert.NoError(t, so.Query())
}

func TestMemOpsNotSupportedByTheRoute(t *testing.T) {
	devs := registry(t, newFake(device.MUSA, 2, true, "ok"))
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{}).get))
	for name, err := range map[string]error{
		"memset":   fl.Memset(0, 0, 0, 1, 1),
		"copy":     fl.CopyDtoD(0, 0, 0, 1),
		"ipc":      fl.CloseIPCHandle(0, 0),
		"pci":      func() error { _, err := fl.DeviceByPCIBusID("0000:18:00.0"); return err }(),
		"dma":      func() error { _, err := fl.DMABufSupported(0); return err }(),
		"managed":  func() error { _, err := fl.AllocManaged(0, 1); return err }(),
		"pci name": func() error { _, err := fl.PCIBusID(0); return err }(),
	} {
		assert.ErrorIs(t, err, device.ErrNotSupported, name)
		assert.ErrorContains(t, err, "musa", name)
	}
	none := flagos.New(registry(t), autoOrder, flagos.WithGetenv((&env{}).get))
	assert.ErrorIs(t, none.Memset(0, 0, 0, 1, 1), flagos.ErrNoRoute)
}
