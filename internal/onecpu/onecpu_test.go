package onecpu

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// affinities is each thread's CPU set, by thread id.
func affinities(t *testing.T) map[int]unix.CPUSet {
	t.Helper()
	tids, err := threads()
	require.NoError(t, err)
	out := map[int]unix.CPUSet{}
	for _, tid := range tids {
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err == nil {
			out[tid] = set
		}
	}
	return out
}

// TestPinChild pins its own process (a child of TestPin, so the test
// binary running the other tests is left as it was) and checks every
// thread, those started before and after.
func TestPinChild(t *testing.T) {
	if os.Getenv("ONECPU_CHILD") == "" {
		t.Skip("runs only as the child process of TestPin")
	}
	release := make(chan struct{})
	defer close(release)
	lockedThreads(4, release) // threads that exist before the pin
	before := len(affinities(t))
	cpu, err := Pin()
	require.NoError(t, err)
	var want unix.CPUSet
	want.Set(cpu)
	for tid, set := range affinities(t) {
		assert.Equal(t, want, set, "thread %d", tid)
	}
	lockedThreads(4, release) // threads started after it inherit it
	after := affinities(t)
	assert.GreaterOrEqual(t, len(after), before, "the test started threads")
	for tid, set := range after {
		assert.Equal(t, want, set, "thread %d, started after the pin", tid)
	}
	n, err := Count()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

// lockedThreads starts n goroutines, each locked to a thread of its own
// until release is closed, and returns once they all hold one.
func lockedThreads(n int, release <-chan struct{}) {
	ready := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			ready <- struct{}{}
			<-release
		}()
		<-ready
	}
}

func TestPin(t *testing.T) {
	n, err := Count()
	require.NoError(t, err)
	if n < 2 {
		t.Skipf("this machine lets the test run on %d CPU: pinning to one changes nothing to see", n)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPinChild$", "-test.v")
	cmd.Env = append(os.Environ(), "ONECPU_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestPinChild", "%s", out)
	// This process was not touched.
	m, err := Count()
	require.NoError(t, err)
	assert.Equal(t, n, m)
}

func TestCurrentIsAllowed(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu, err := current()
	require.NoError(t, err)
	var set unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &set))
	assert.True(t, set.IsSet(cpu), "getcpu gave CPU %d, outside this thread's set %s", cpu, cpuList(set))
}

func cpuList(set unix.CPUSet) string {
	var b strings.Builder
	for i := range 1024 {
		if set.IsSet(i) {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(i))
		}
	}
	return b.String()
}
