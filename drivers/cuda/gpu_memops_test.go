//go:build gpu

package cuda

import (
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// The driver core's second group on the real driver (scripts/gpu-run.sh):
// what the fakes check, with the GPU doing the work.

func readBack(t *testing.T, b *driver.Backend, p device.Ptr, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	require.NoError(t, b.CopyDtoH(0, out, p))
	return out
}

func TestGPUMemOps(t *testing.T) {
	b := gpuBackend(t)
	p, err := b.Alloc(0, 1<<20)
	require.NoError(t, err)
	defer b.Free(0, p)
	require.NoError(t, b.Memset(0, p, 0xab, 1, 1<<20))
	require.NoError(t, b.Memset(0, p+64, 0x1234, 2, 8))
	require.NoError(t, b.Memset(0, p+128, 0xdeadbeef, 4, 4))
	got := readBack(t, b, p, 160)
	assert.Equal(t, strings.Repeat("\xab", 64), string(got[:64]))
	assert.Equal(t, strings.Repeat("\x34\x12", 8), string(got[64:80]))
	assert.Equal(t, strings.Repeat("\xef\xbe\xad\xde", 4), string(got[128:144]))

	q, err := b.AllocManaged(0, 4096)
	require.NoError(t, err)
	require.NoError(t, b.CopyDtoD(0, q, p, 4096))
	assert.Equal(t, strings.Repeat("\xab", 64), string(readBack(t, b, q, 64)))
	require.NoError(t, b.Free(0, q))

	hb, err := b.AllocHostMapped(0, 4096)
	require.NoError(t, err)
	defer hb.Free()
	dp, err := b.HostDevicePointer(0, hb.Addr())
	require.NoError(t, err)
	require.NoError(t, b.Memset(0, dp, 7, 1, 16))
	require.NoError(t, b.Synchronize(0))
	assert.Equal(t, strings.Repeat("\x07", 16), string(hb.Bytes()[:16]), "the device wrote mapped host memory")

	n, err := b.DeviceCount()
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		id, err := b.PCIBusID(i)
		require.NoError(t, err)
		got, err := b.DeviceByPCIBusID(id)
		require.NoError(t, err, id)
		assert.Equal(t, i, got, id)
	}
	_, err = b.DeviceByPCIBusID("0000:ff:1f.7")
	assert.Error(t, err)
}

func TestGPUStreamOps(t *testing.T) {
	b := gpuBackend(t)
	st, err := b.NewStreamWith(0, true)
	require.NoError(t, err)
	defer st.Destroy()
	other, err := b.NewStreamWith(0, true)
	require.NoError(t, err)
	defer other.Destroy()
	ev, err := b.NewEventWith(0, false)
	require.NoError(t, err)
	defer ev.Destroy()
	flag, err := b.Alloc(0, 8)
	require.NoError(t, err)
	defer b.Free(0, flag)
	// p holds 4096 bytes and the 64 that the stream-ordered copy below
	// brings back past them (the driver refuses a copy beyond an
	// allocation: CUDA_ERROR_INVALID_VALUE, as the fakes do).
	p, err := b.Alloc(0, 4096+64)
	require.NoError(t, err)
	defer b.Free(0, p)
	require.NoError(t, b.Memset(0, flag, 0, 1, 8))
	require.NoError(t, b.Memset(0, p, 0, 1, 4096+64))

	// A value wait holds the stream until the other stream writes the flag.
	require.NoError(t, st.WaitValue64(flag, 1))
	require.NoError(t, st.Memset(p, 0x5a, 1, 4096))
	require.NoError(t, st.Record(ev))
	time.Sleep(20 * time.Millisecond)
	assert.ErrorIs(t, st.Query(), device.ErrNotReady, "held by the wait")
	assert.ErrorIs(t, ev.Query(), device.ErrNotReady)
	require.NoError(t, other.WriteValue64(flag, 1))
	deadline := time.Now().Add(10 * time.Second)
	for st.Query() != nil {
		require.True(t, time.Now().Before(deadline), "the stream is still held 10 s after the write")
		time.Sleep(time.Millisecond)
	}
	assert.NoError(t, ev.Query())
	assert.Equal(t, strings.Repeat("\x5a", 64), string(readBack(t, b, p, 64)))

	// Stream-ordered memory and copies.
	a, err := st.Alloc(1 << 20)
	require.NoError(t, err)
	require.NoError(t, st.CopyDtoD(a, p, 4096))
	require.NoError(t, st.Memset(a+4096, 0x11, 4, 16))
	require.NoError(t, st.CopyDtoD(p, a, 4096+64))
	require.NoError(t, st.Free(a))
	require.NoError(t, st.Synchronize())
	got := readBack(t, b, p, 4096+64)
	assert.Equal(t, strings.Repeat("\x5a", 16), string(got[:16]))
	assert.Equal(t, strings.Repeat("\x11\x00\x00\x00", 16), string(got[4096:]))

	// A Go host function through the fixed trampoline, called by the
	// driver's own thread.
	var ran atomic.Int32
	for range 100 {
		require.NoError(t, st.LaunchHostFunc(func() { ran.Add(1) }))
	}
	require.NoError(t, st.Synchronize())
	assert.Equal(t, int32(100), ran.Load())
	assert.Zero(t, clib.PendingHostFuncs())
}

// TestGPUIPC opens an IPC handle in a child process (the driver refuses a
// process's own): the 64-byte handle passed by value, on this platform's
// calling convention.
func TestGPUIPC(t *testing.T) {
	b := gpuBackend(t)
	if h := os.Getenv("FLAGSHIM_GPU_IPC_HANDLE"); h != "" {
		raw, err := hex.DecodeString(h)
		require.NoError(t, err)
		var handle device.IPCHandle
		copy(handle[:], raw)
		p, err := b.OpenIPCHandle(0, handle)
		require.NoError(t, err)
		out := readBack(t, b, p, 8)
		require.NoError(t, b.CloseIPCHandle(0, p))
		os.Stdout.WriteString("IPC-READ " + string(out) + "\n")
		return
	}
	p, err := b.Alloc(0, 1<<20)
	require.NoError(t, err)
	defer b.Free(0, p)
	require.NoError(t, b.CopyHtoD(0, p, []byte("IPC-0123")))
	h, err := b.IPCHandle(0, p)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestGPUIPC$")
	cmd.Env = append(os.Environ(), "FLAGSHIM_GPU_IPC_HANDLE="+hex.EncodeToString(h[:]))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "IPC-READ IPC-0123")

	var garbage device.IPCHandle
	copy(garbage[:], strings.Repeat("garbage!", 8))
	_, err = b.OpenIPCHandle(0, garbage)
	assert.Error(t, err, "garbage bytes are no handle")
}

func TestGPUDMABuf(t *testing.T) {
	b := gpuBackend(t)
	ok, err := b.DMABufSupported(0)
	require.NoError(t, err)
	if !ok {
		t.Skip("the driver says device 0 cannot export dma-bufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 0)")
	}
	p, err := b.Alloc(0, 2<<20)
	require.NoError(t, err)
	defer b.Free(0, p)
	fd, err := b.DMABufFD(0, p, 2<<20)
	require.NoError(t, err)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	require.NoError(t, unix.Close(fd))
}
