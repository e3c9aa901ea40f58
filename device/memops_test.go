package device_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
)

func TestOptionalOperationsOfCPU(t *testing.T) {
	cpu, err := device.NewRegistry().Lookup(device.CPU)
	require.NoError(t, err)
	for name, f := range map[string]func() error{
		"MemoryOps":  func() error { _, err := device.MemoryOpsOf(cpu); return err },
		"IPC":        func() error { _, err := device.IPCOf(cpu); return err },
		"PCIDevices": func() error { _, err := device.PCIDevicesOf(cpu); return err },
		"DMABuf":     func() error { _, err := device.DMABufOf(cpu); return err },
	} {
		err := f()
		assert.ErrorIs(t, err, device.ErrNotSupported, name)
		assert.ErrorContains(t, err, "cpu", name)
		assert.ErrorContains(t, err, "device."+name, name)
	}
	_, err = device.StreamOpsOf(nil)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	_, err = device.EventQuerierOf(nil)
	assert.ErrorIs(t, err, device.ErrNotSupported)
}

func TestCheckMemset(t *testing.T) {
	for _, c := range []struct {
		value uint32
		width int
		ok    bool
	}{
		{0xff, 1, true}, {0x100, 1, false}, {0xffff, 2, true}, {0x10000, 2, false},
		{0xffffffff, 4, true}, {0, 0, false}, {0, 3, false}, {0, 8, false}, {0, -1, false},
	} {
		err := device.CheckMemset(c.value, c.width)
		if c.ok {
			assert.NoError(t, err, "%+v", c)
		} else {
			assert.ErrorIs(t, err, device.ErrInvalidValue, "%+v", c)
		}
	}
}
