package nvshmem

// Tests of the two-PE launcher (twope_launch_test.go) without a GPU: table
// tests of its pure parts, and the whole launcher run on two fake ranks that
// hand the unique id over and pass a value round a ring of files, as the GPU
// ranks do through NVSHMEM.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// envMap turns "K=V" entries into a map, failing on a repeated name (the
// child would see only one of them).
func envMap(t *testing.T, env []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		require.True(t, ok, "entry %q", kv)
		_, dup := m[k]
		require.False(t, dup, "%s appears twice", k)
		m[k] = v
	}
	return m
}

func TestTwoPEChildEnv(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin", "HOME=/root",
		"CUDA_VISIBLE_DEVICES=0,1",                           // passed through: the children see what the parent saw
		"FLAGOS_LIBNVSHMEM_PATH=/opt/x/libnvshmem_host.so.3", // passed through
		"LD_LIBRARY_PATH=/opt/x",
		"NCCL_NVLS_ENABLE=1", "NVSHMEM_DISABLE_NVLS=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=0", // overridden
		"FLAGSHIM_TWOPE_RANK=7", "FLAGSHIM_TEST_CHILD=TestOther", // overridden
		"FAKE_CUDA_DEVICES=3", // dropped
		FixturesEnv + "=/old",
	}
	tests := []struct {
		name     string
		rank     int
		fixtures string
		extra    []string
		want     map[string]string // entries that must be there
		absent   []string
	}{
		{
			name: "rank 0", rank: 0, fixtures: "/fx",
			want: map[string]string{
				"PATH": "/usr/bin", "HOME": "/root", "CUDA_VISIBLE_DEVICES": "0,1",
				"FLAGOS_LIBNVSHMEM_PATH": "/opt/x/libnvshmem_host.so.3", "LD_LIBRARY_PATH": "/opt/x",
				"NCCL_NVLS_ENABLE": "0", "NVSHMEM_DISABLE_NVLS": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
				dltest.ChildEnv: "TestGPUTwoPE", twoPERankEnv: "0", twoPENRanksEnv: "2", twoPEUIDEnv: "/tmp/p/nvshmem.uid",
				FixturesEnv: "/fx",
			},
			absent: []string{"FAKE_CUDA_DEVICES"},
		},
		{
			name: "rank 1 keeps the parent's fixtures", rank: 1,
			want: map[string]string{twoPERankEnv: "1", FixturesEnv: "/old", "NVSHMEM_DISABLE_NVLS": "1"},
		},
		{
			name: "extra wins", rank: 1, extra: []string{"FLAGSHIM_TWOPE_FAKE=ring", "HOME=/h"},
			want: map[string]string{"FLAGSHIM_TWOPE_FAKE": "ring", "HOME": "/h", "NCCL_NVLS_ENABLE": "0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := envMap(t, twoPEChildEnv(parent, "TestGPUTwoPE", tt.rank, 2, "/tmp/p/nvshmem.uid", tt.fixtures, tt.extra...))
			for k, v := range tt.want {
				assert.Equal(t, v, got[k], k)
			}
			for _, k := range tt.absent {
				assert.NotContains(t, got, k)
			}
		})
	}
}

func TestTwoPEFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    twoPEConfig
		wantErr string
	}{
		{"rank 1 of 2", map[string]string{twoPERankEnv: "1", twoPENRanksEnv: "2", twoPEUIDEnv: "/d/nvshmem.uid"}, twoPEConfig{1, 2, "/d/nvshmem.uid"}, ""},
		{"no rank", map[string]string{twoPENRanksEnv: "2", twoPEUIDEnv: "/d/u"}, twoPEConfig{}, twoPERankEnv},
		{"bad count", map[string]string{twoPERankEnv: "0", twoPENRanksEnv: "two", twoPEUIDEnv: "/d/u"}, twoPEConfig{}, twoPENRanksEnv},
		{"rank past the count", map[string]string{twoPERankEnv: "2", twoPENRanksEnv: "2", twoPEUIDEnv: "/d/u"}, twoPEConfig{}, "rank 2 of 2"},
		{"negative rank", map[string]string{twoPERankEnv: "-1", twoPENRanksEnv: "2", twoPEUIDEnv: "/d/u"}, twoPEConfig{}, "rank -1 of 2"},
		{"relative handoff", map[string]string{twoPERankEnv: "0", twoPENRanksEnv: "2", twoPEUIDEnv: "nvshmem.uid"}, twoPEConfig{}, "not an absolute path"},
		{"no handoff", map[string]string{twoPERankEnv: "0", twoPENRanksEnv: "2"}, twoPEConfig{}, "not an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := twoPEFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// privDir is a fresh folder for a handoff file.
func privDir(t *testing.T) string {
	t.Helper()
	d, err := twoPEPrivateDir(t.TempDir())
	require.NoError(t, err)
	st, err := os.Stat(d)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o700), st.Mode().Perm())
	return d
}

func testUID(seed byte) UniqueID {
	var u UniqueID
	for i := range u {
		u[i] = seed + byte(i)
	}
	return u
}

func TestUniqueIDFile(t *testing.T) {
	t.Run("round trip, 0600, no leftovers", func(t *testing.T) {
		dir := privDir(t)
		p := filepath.Join(dir, twoPEUIDFile)
		require.NoError(t, writeUniqueIDFile(p, testUID(3)))
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm())
		got, err := readUniqueIDFile(p)
		require.NoError(t, err)
		assert.Equal(t, testUID(3), got)
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Len(t, ents, 1, "the temporary file was renamed into place")
	})
	// Each case prepares a folder and returns the path to read.
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) string
		wantErr string
		missing bool
	}{
		{"missing", func(t *testing.T, dir string) string { return filepath.Join(dir, twoPEUIDFile) }, "", true},
		{"readable by others", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, twoPEUIDFile)
			u := testUID(0)
			require.NoError(t, os.WriteFile(p, u[:], 0o644))
			require.NoError(t, os.Chmod(p, 0o644))
			return p
		}, "want 0600", false},
		{"short", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, twoPEUIDFile)
			require.NoError(t, os.WriteFile(p, []byte("abc"), 0o600))
			return p
		}, "has 3 bytes", false},
		{"symlink", func(t *testing.T, dir string) string {
			real := filepath.Join(dir, "real")
			u := testUID(0)
			require.NoError(t, os.WriteFile(real, u[:], 0o600))
			p := filepath.Join(dir, twoPEUIDFile)
			require.NoError(t, os.Symlink(real, p))
			return p
		}, "symbolic link", false},
		{"a folder", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, twoPEUIDFile)
			require.NoError(t, os.Mkdir(p, 0o700))
			return p
		}, "not a regular file", false},
		{"open folder", func(t *testing.T, dir string) string {
			require.NoError(t, os.Chmod(dir, 0o755))
			p := filepath.Join(dir, twoPEUIDFile)
			u := testUID(0)
			require.NoError(t, os.WriteFile(p, u[:], 0o600))
			return p
		}, "closed to group and others", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.prepare(t, privDir(t))
			_, err := readUniqueIDFile(p)
			require.Error(t, err)
			if tt.missing {
				assert.ErrorIs(t, err, fs.ErrNotExist)
				return
			}
			assert.NotErrorIs(t, err, fs.ErrNotExist)
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
	t.Run("write refuses an open folder", func(t *testing.T) {
		dir := privDir(t)
		require.NoError(t, os.Chmod(dir, 0o755))
		assert.ErrorContains(t, writeUniqueIDFile(filepath.Join(dir, twoPEUIDFile), testUID(0)), "closed to group and others")
	})
	t.Run("write refuses to overwrite a leftover temporary file", func(t *testing.T) {
		p := filepath.Join(privDir(t), twoPEUIDFile)
		require.NoError(t, os.WriteFile(p+".tmp", nil, 0o600))
		assert.ErrorIs(t, writeUniqueIDFile(p, testUID(0)), fs.ErrExist)
	})
}

func TestWaitUniqueIDFile(t *testing.T) {
	t.Run("written later", func(t *testing.T) {
		p := filepath.Join(privDir(t), twoPEUIDFile)
		go func() {
			time.Sleep(50 * time.Millisecond)
			_ = writeUniqueIDFile(p, testUID(9))
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		got, err := waitUniqueIDFile(ctx, p, 5*time.Millisecond)
		require.NoError(t, err)
		assert.Equal(t, testUID(9), got)
	})
	t.Run("never written", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := waitUniqueIDFile(ctx, filepath.Join(privDir(t), twoPEUIDFile), 5*time.Millisecond)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "rank 0 did not write it")
	})
	t.Run("a bad file is not waited for", func(t *testing.T) {
		p := filepath.Join(privDir(t), twoPEUIDFile)
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		_, err := waitUniqueIDFile(ctx, p, 5*time.Millisecond)
		assert.ErrorContains(t, err, "has 1 bytes")
		assert.Less(t, time.Since(start), 5*time.Second)
	})
}

func goodResult(rank int) twoPEResult {
	return twoPEResult{Rank: rank, Device: rank, MyPE: rank, NPEs: 2, DevPE: rank, DevN: 2,
		Got: 1 - rank, Want: 1 - rank, ControlRC: 7, RingHooks: []string{HookName}}
}

func TestTwoPEResultLines(t *testing.T) {
	r := goodResult(1)
	line := r.String()
	assert.Equal(t, "FLAGSHIM-TWOPE-RESULT rank=1 device=1 my_pe=1 n_pes=2 dev_pe=1 dev_n=2 got=0 want=0 control_rc=7 plain_hooks=- ring_hooks=nvshmem", line)
	tests := []struct {
		name    string
		out     string
		want    []twoPEResult
		wantErr string
	}{
		{"none", "=== RUN TestGPUTwoPE\n--- PASS\n", nil, ""},
		{"one among test output", "=== RUN TestGPUTwoPE\n" + line + "\n    gpu_twope_test.go:12: log\n", []twoPEResult{r}, ""},
		{"two, no final newline", goodResult(0).String() + "\n" + line, []twoPEResult{goodResult(0), r}, ""},
		{"several hooks", strings.Replace(line, "plain_hooks=-", "plain_hooks=a,b", 1), []twoPEResult{func() twoPEResult { x := r; x.PlainHooks = []string{"a", "b"}; return x }()}, ""},
		{"prefix inside a line is not a result", "log: " + line + "\n", nil, ""},
		{"bad number", strings.Replace(line, "got=0", "got=zero", 1), nil, "got"},
		{"missing field", strings.Replace(line, " control_rc=7", "", 1), nil, "10 of 11 fields"},
		{"repeated field", line + " rank=0", nil, "repeated"},
		{"unknown field", line + " extra=1", nil, "unknown field"},
		{"no value", line + " bare", nil, "bad or repeated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTwoPEResults(tt.out)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCheckTwoPEResults(t *testing.T) {
	with := func(rank int, f func(*twoPEResult)) twoPEResult {
		r := goodResult(rank)
		f(&r)
		return r
	}
	tests := []struct {
		name string
		rs   []twoPEResult
		want []string // substrings of the error; none: no error
	}{
		{"both right", []twoPEResult{goodResult(0), goodResult(1)}, nil},
		{"either order", []twoPEResult{goodResult(1), goodResult(0)}, nil},
		{"rank 1 missing", []twoPEResult{goodResult(0)}, []string{"rank 1: no result line"}},
		{"duplicate", []twoPEResult{goodResult(0), goodResult(0), goodResult(1)}, []string{"rank 0: more than one"}},
		{"stray rank", []twoPEResult{goodResult(0), goodResult(1), with(2, func(r *twoPEResult) {})}, []string{"rank 2 of 2"}},
		{"value not arrived", []twoPEResult{goodResult(0), with(1, func(r *twoPEResult) { r.Got = -1 })}, []string{"rank 1: got -1", "put by PE 0"}},
		{"own value", []twoPEResult{with(0, func(r *twoPEResult) { r.Got = 0 }), goodResult(1)}, []string{"rank 0: got 0"}},
		{"wrong expectation", []twoPEResult{with(0, func(r *twoPEResult) { r.Want, r.Got = 0, 0 }), goodResult(1)}, []string{"expected 0", "got 0"}},
		{"same device", []twoPEResult{goodResult(0), with(1, func(r *twoPEResult) { r.Device = 0 })}, []string{"device 0, want 1"}},
		{"pe mismatch", []twoPEResult{with(0, func(r *twoPEResult) { r.DevPE = 1 }), goodResult(1)}, []string{"my_pe is 0 on the host and 1 on the device"}},
		{"one PE each", []twoPEResult{with(0, func(r *twoPEResult) { r.NPEs, r.DevN = 1, 1 }), goodResult(1)}, []string{"n_pes is 1"}},
		{"hook on plain", []twoPEResult{with(0, func(r *twoPEResult) { r.PlainHooks = []string{HookName} }), goodResult(1)}, []string{"ran on the plain module"}},
		{"hook not on ring", []twoPEResult{goodResult(0), with(1, func(r *twoPEResult) { r.RingHooks = nil })}, []string{"ran on ring.cubin"}},
		{"control", []twoPEResult{with(0, func(r *twoPEResult) { r.ControlRC = 0 }), goodResult(1)}, []string{"returned 0, want 7"}},
		{"all problems reported", []twoPEResult{with(0, func(r *twoPEResult) { r.Got, r.ControlRC = 5, 1 })}, []string{"rank 0: got 5", "returned 1", "rank 1: no result line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkTwoPEResults(tt.rs, 2)
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

func TestCheckControlOutput(t *testing.T) {
	const miss = "init.cu:1781 Cuda failure 'named symbol not found'"
	tests := []struct {
		name string
		out  string
		want []string
	}{
		{"clean", "a\n" + controlStart + "\n" + miss + "\n" + controlEnd + "\nb\n", nil},
		{"never reached", "a\n", []string{"did not reach"}},
		{"never finished", controlStart + "\n" + miss, []string{"did not finish"}},
		{"control did not fail", controlStart + "\n" + controlEnd, []string{"did not hit"}},
		{"missing symbol before", miss + "\n" + controlStart + "\n" + miss + "\n" + controlEnd, []string{"outside the control call"}},
		{"not initialized after", controlStart + "\n" + miss + "\n" + controlEnd + "\nNVSHMEM is not initialized\n", []string{"\"NVSHMEM is not initialized\" printed outside"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkControlOutput(tt.out)
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			for _, w := range tt.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// twoPEFakeEnv selects what a fake rank of TestTwoPELauncher does.
const twoPEFakeEnv = "FLAGSHIM_TWOPE_FAKE"

// TestTwoPELauncher runs the launcher as TestGPUTwoPE does, on two fake
// ranks: rank 0 writes a unique id, rank 1 waits for it; each "puts" its rank
// into the next rank's file and waits for its own, which only works when the
// launcher runs both at once; each prints the control markers and a result
// line. Then a rank that fails makes the launcher kill the other.
func TestTwoPELauncher(t *testing.T) {
	if dltest.IsChild(t) {
		fakeTwoPERank(t)
		return
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	launch := func(mode string, grace time.Duration) ([]twoPERun, string) {
		dir := privDir(t)
		uid := filepath.Join(dir, twoPEUIDFile)
		var envs [][]string
		for rank := range 2 {
			envs = append(envs, twoPEChildEnv(os.Environ(), t.Name(), rank, 2, uid, "", twoPEFakeEnv+"="+mode))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return runTwoPE(ctx, exe, twoPEChildArgs(t.Name()), envs, t.TempDir(), grace), dir
	}

	runs, dir := launch("ring", 10*time.Second)
	var all []twoPEResult
	for _, r := range runs {
		require.NoError(t, r.Err, "rank %d:\n%s", r.Rank, r.Out)
		assert.NoError(t, checkControlOutput(r.Out), "rank %d", r.Rank)
		rs, err := parseTwoPEResults(r.Out)
		require.NoError(t, err)
		require.Len(t, rs, 1, "rank %d:\n%s", r.Rank, r.Out)
		assert.Equal(t, r.Rank, rs[0].Rank)
		all = append(all, rs...)
	}
	assert.NoError(t, checkTwoPEResults(all, 2))
	st, err := os.Stat(filepath.Join(dir, twoPEUIDFile))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm())

	start := time.Now()
	runs, _ = launch("fail", 200*time.Millisecond)
	assert.Less(t, time.Since(start), 30*time.Second, "rank 0 was killed, not waited for")
	require.Error(t, runs[1].Err, "rank 1 failed:\n%s", runs[1].Out)
	require.Error(t, runs[0].Err, "rank 0, waiting for rank 1, was killed:\n%s", runs[0].Out)
	assert.ErrorContains(t, runs[0].Err, "killed")
}

// fakeTwoPERank is one rank of TestTwoPELauncher.
func fakeTwoPERank(t *testing.T) {
	c, err := twoPEFromEnv(os.Getenv)
	require.NoError(t, err)
	for _, kv := range twoPENoMulticast {
		k, v, _ := strings.Cut(kv, "=")
		require.Equal(t, v, os.Getenv(k), k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if os.Getenv(twoPEFakeEnv) == "fail" {
		if c.Rank == 1 {
			t.Fatal("rank 1 fails on purpose")
		}
		<-ctx.Done() // as a PE waits in a collective for a peer that died
		return
	}
	var uid UniqueID
	if c.Rank == 0 {
		uid = testUID(42)
		require.NoError(t, writeUniqueIDFile(c.UIDPath, uid))
	} else {
		uid, err = waitUniqueIDFile(ctx, c.UIDPath, 5*time.Millisecond)
		require.NoError(t, err)
	}
	require.Equal(t, testUID(42), uid, "every rank has rank 0's unique id")

	// The ring: put into the next rank's slot, then wait for our own.
	dir := filepath.Dir(c.UIDPath)
	slot := func(rank int) string { return filepath.Join(dir, fmt.Sprintf("slot%d", rank)) }
	next := (c.Rank + 1) % c.NRanks
	require.NoError(t, os.WriteFile(slot(next)+".tmp", []byte(strconv.Itoa(c.Rank)), 0o600))
	require.NoError(t, os.Rename(slot(next)+".tmp", slot(next)))
	var got int
	for {
		b, err := os.ReadFile(slot(c.Rank))
		if err == nil {
			got, err = strconv.Atoi(string(b))
			require.NoError(t, err)
			break
		}
		require.ErrorIs(t, err, fs.ErrNotExist)
		select {
		case <-ctx.Done():
			t.Fatalf("rank %d: nothing arrived from the left: %v", c.Rank, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	fmt.Fprintln(os.Stderr, controlStart)
	fmt.Fprintln(os.Stderr, "fake: Cuda failure 'named symbol not found'")
	fmt.Fprintln(os.Stderr, controlEnd)
	fmt.Println(twoPEResult{Rank: c.Rank, Device: c.Rank, MyPE: c.Rank, NPEs: c.NRanks, DevPE: c.Rank, DevN: c.NRanks,
		Got: got, Want: (c.Rank - 1 + c.NRanks) % c.NRanks, ControlRC: 7, RingHooks: []string{HookName}})
}
