package nvshmem

// The launcher of the two-PE proof (TestGPUTwoPE in gpu_twope_test.go) with
// none of the GPU in it, so that every part of it runs and is tested on a
// machine without one (twope_test.go): the children's environment, the
// unique-id handoff file, starting the ranks at once, the result lines and
// the control markers.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// FixturesEnv names the folder scripts/nvshmem-build.sh wrote; the default is
// testdata/build.
const FixturesEnv = "FLAGSHIM_NVSHMEM_FIXTURES"

// The child scenarios print these around the control call, the only place
// where NVSHMEM may complain about a missing symbol.
const (
	controlStart = "CONTROL-START"
	controlEnd   = "CONTROL-END"
)

// What the launcher tells each rank.
const (
	twoPERankEnv   = "FLAGSHIM_TWOPE_RANK"   // this child's rank, 0..nranks-1: its PE and its CUDA device
	twoPENRanksEnv = "FLAGSHIM_TWOPE_NRANKS" // how many ranks
	twoPEUIDEnv    = "FLAGSHIM_TWOPE_UID"    // the unique-id handoff file: rank 0 writes it, the others read it
)

// twoPEUIDFile is the handoff file's name in the launcher's private folder.
const twoPEUIDFile = "nvshmem.uid"

// twoPENoMulticast is set in every child, whatever the parent had: NVLink
// multicast (NVLS) stays off, in NCCL, NVSHMEM and torch alike. Multicast
// objects can take shared GPUs out of service.
var twoPENoMulticast = []string{"NCCL_NVLS_ENABLE=0", "NVSHMEM_DISABLE_NVLS=1", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1"}

// twoPEChildArgs are the arguments that make the test binary run test alone.
func twoPEChildArgs(test string) []string {
	return []string{"-test.run=^" + test + "$", "-test.count=1", "-test.v"}
}

// envKey is the name in "NAME=value".
func envKey(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	return k
}

// twoPEChildEnv is rank's environment: parent's, less what the launcher sets
// and the fakes' FAKE_* settings, plus the child marker (dltest.ChildEnv =
// test), the rank, the rank count, the handoff file, the fixtures folder
// (when fixtures is not ""), multicast off, and extra ("K=V", last, so they
// win). CUDA_VISIBLE_DEVICES is neither set nor narrowed per rank: every
// child sees the devices the parent saw (normally all of them, the variable
// unset), and rank r uses device r among them, so each PE can reach the
// other's GPU.
func twoPEChildEnv(parent []string, test string, rank, nranks int, uidPath, fixtures string, extra ...string) []string {
	set := []string{
		dltest.ChildEnv + "=" + test,
		twoPERankEnv + "=" + strconv.Itoa(rank),
		twoPENRanksEnv + "=" + strconv.Itoa(nranks),
		twoPEUIDEnv + "=" + uidPath,
	}
	if fixtures != "" {
		set = append(set, FixturesEnv+"="+fixtures)
	}
	set = append(set, twoPENoMulticast...)
	set = append(set, extra...)
	drop := map[string]bool{}
	for _, kv := range set {
		drop[envKey(kv)] = true
	}
	var env []string
	for _, kv := range parent {
		if k := envKey(kv); !drop[k] && !strings.HasPrefix(k, "FAKE_") {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// twoPEConfig is what a child reads from its environment.
type twoPEConfig struct {
	Rank, NRanks int
	UIDPath      string
}

// twoPEFromEnv reads the launcher's variables through getenv.
func twoPEFromEnv(getenv func(string) string) (twoPEConfig, error) {
	var c twoPEConfig
	var err error
	if c.Rank, err = strconv.Atoi(getenv(twoPERankEnv)); err != nil {
		return c, fmt.Errorf("%s=%q: %w", twoPERankEnv, getenv(twoPERankEnv), err)
	}
	if c.NRanks, err = strconv.Atoi(getenv(twoPENRanksEnv)); err != nil {
		return c, fmt.Errorf("%s=%q: %w", twoPENRanksEnv, getenv(twoPENRanksEnv), err)
	}
	if c.NRanks < 1 || c.Rank < 0 || c.Rank >= c.NRanks {
		return c, fmt.Errorf("rank %d of %d ranks", c.Rank, c.NRanks)
	}
	c.UIDPath = getenv(twoPEUIDEnv)
	if !filepath.IsAbs(c.UIDPath) {
		return c, fmt.Errorf("%s=%q: not an absolute path", twoPEUIDEnv, c.UIDPath)
	}
	return c, nil
}

// twoPEPrivateDir makes the launcher's folder for the handoff in parent:
// mode 0700 (t.TempDir's own folders are 0755).
func twoPEPrivateDir(parent string) (string, error) {
	d, err := os.MkdirTemp(parent, "twope-")
	if err == nil {
		err = os.Chmod(d, 0o700)
	}
	return d, err
}

// writeUniqueIDFile writes uid to path for the other ranks: into a fresh
// file beside it, mode 0600, synced, then renamed into place, so a reader
// sees either no file or all 128 bytes. The folder must be the caller's own
// and closed to others (mode 0700 or tighter, as t.TempDir makes it).
func writeUniqueIDFile(path string, uid UniqueID) error {
	if err := checkPrivateDir(filepath.Dir(path)); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("unique-id file: %w", err)
	}
	_, err = f.Write(uid[:])
	if err == nil {
		err = f.Chmod(0o600) // whatever the umask did
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("unique-id file: %w", err)
	}
	return nil
}

// checkPrivateDir fails unless dir is a folder of this user that nobody else
// may read, write or enter.
func checkPrivateDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("unique-id folder %s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("unique-id folder %s is not a folder", dir)
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("unique-id folder %s belongs to uid %d, not to this user (%d)", dir, st.Uid, os.Getuid())
	}
	if st.Mode&0o077 != 0 {
		return fmt.Errorf("unique-id folder %s has mode %#o; it must be closed to group and others (0700)", dir, st.Mode&0o777)
	}
	return nil
}

// readUniqueIDFile reads what writeUniqueIDFile wrote. It refuses anything
// but a regular file of this user, mode 0600, in a private folder, of
// exactly UniqueIDSize bytes. A missing file matches fs.ErrNotExist.
func readUniqueIDFile(path string) (UniqueID, error) {
	var uid UniqueID
	if err := checkPrivateDir(filepath.Dir(path)); err != nil {
		return uid, err
	}
	// O_NOFOLLOW: a symlink put in place of the file is refused.
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return uid, fmt.Errorf("unique-id file: %w", err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return uid, fmt.Errorf("unique-id file %s: %w", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return uid, fmt.Errorf("unique-id file %s is not a regular file", path)
	case int(st.Uid) != os.Getuid():
		return uid, fmt.Errorf("unique-id file %s belongs to uid %d, not to this user (%d)", path, st.Uid, os.Getuid())
	case st.Mode&0o777 != 0o600:
		return uid, fmt.Errorf("unique-id file %s has mode %#o, want 0600", path, st.Mode&0o777)
	case st.Size != UniqueIDSize:
		return uid, fmt.Errorf("unique-id file %s has %d bytes, want %d", path, st.Size, UniqueIDSize)
	}
	if _, err := io.ReadFull(f, uid[:]); err != nil {
		return uid, fmt.Errorf("unique-id file %s: %w", path, err)
	}
	return uid, nil
}

// waitUniqueIDFile polls for path every poll until it can be read or ctx
// ends. Only a missing file is waited for; any other problem is returned at
// once.
func waitUniqueIDFile(ctx context.Context, path string, poll time.Duration) (UniqueID, error) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		uid, err := readUniqueIDFile(path)
		if !errors.Is(err, fs.ErrNotExist) {
			return uid, err
		}
		select {
		case <-ctx.Done():
			return uid, fmt.Errorf("unique-id file %s: rank 0 did not write it: %w", path, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// twoPERun is one child's outcome.
type twoPERun struct {
	Rank int
	Out  string // stdout and stderr, interleaved as written
	Err  error  // the exit error, or nil
}

// runTwoPE starts one child per element of envs at once (rank i with
// envs[i]: the ranks must run together, since NVSHMEM's init is collective),
// in folder dir, and waits for all of them. When one fails, the others are
// killed after grace (a PE whose peer died waits in NVSHMEM forever); all are
// killed when ctx ends.
func runTwoPE(ctx context.Context, exe string, args []string, envs [][]string, dir string, grace time.Duration) []twoPERun {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runs := make([]twoPERun, len(envs))
	bufs := make([]bytes.Buffer, len(envs))
	var wg sync.WaitGroup
	var once sync.Once
	failed := func() { once.Do(func() { time.AfterFunc(grace, cancel) }) }
	for i, env := range envs {
		runs[i].Rank = i
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = env
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = &bufs[i], &bufs[i] // one writer: exec copies both through one pipe
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			runs[i].Err = fmt.Errorf("starting rank %d: %w", i, err)
			failed()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Wait(); err != nil {
				if ctx.Err() != nil {
					err = fmt.Errorf("%w (killed: %v)", err, context.Cause(ctx))
				}
				runs[i].Err = err
				failed()
			}
		}()
	}
	wg.Wait()
	for i := range runs {
		runs[i].Out = bufs[i].String()
	}
	return runs
}

// twoPEResultPrefix starts a child's result line.
const twoPEResultPrefix = "FLAGSHIM-TWOPE-RESULT"

// twoPEResult is one rank's result line.
type twoPEResult struct {
	Rank, Device int
	MyPE, NPEs   int // nvshmem_my_pe, nvshmem_n_pes on the host
	DevPE, DevN  int // the same, as ring_read saw them on the device
	Got, Want    int // what arrived in this PE's symmetric int, and what the ring puts there
	ControlRC    int // nvshmemx_cumodule_init on the plain module (7)
	PlainHooks   []string
	RingHooks    []string
}

func hookList(h []string) string {
	if len(h) == 0 {
		return "-"
	}
	return strings.Join(h, ",")
}

func parseHookList(s string) []string {
	if s == "-" {
		return nil
	}
	return strings.Split(s, ",")
}

// String is the result line a child prints.
func (r twoPEResult) String() string {
	return fmt.Sprintf("%s rank=%d device=%d my_pe=%d n_pes=%d dev_pe=%d dev_n=%d got=%d want=%d control_rc=%d plain_hooks=%s ring_hooks=%s",
		twoPEResultPrefix, r.Rank, r.Device, r.MyPE, r.NPEs, r.DevPE, r.DevN, r.Got, r.Want, r.ControlRC, hookList(r.PlainHooks), hookList(r.RingHooks))
}

// parseTwoPEResults finds the result lines in out (a line whose first field
// is twoPEResultPrefix; -test.v may print other text on other lines) and
// parses them; a malformed one is an error.
func parseTwoPEResults(out string) ([]twoPEResult, error) {
	var rs []twoPEResult
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != twoPEResultPrefix {
			continue
		}
		var r twoPEResult
		ints := map[string]*int{"rank": &r.Rank, "device": &r.Device, "my_pe": &r.MyPE, "n_pes": &r.NPEs,
			"dev_pe": &r.DevPE, "dev_n": &r.DevN, "got": &r.Got, "want": &r.Want, "control_rc": &r.ControlRC}
		lists := map[string]*[]string{"plain_hooks": &r.PlainHooks, "ring_hooks": &r.RingHooks}
		seen := map[string]bool{}
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || seen[k] {
				return nil, fmt.Errorf("result line %q: bad or repeated field %q", strings.TrimSpace(line), kv)
			}
			seen[k] = true
			if p, ok := ints[k]; ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("result line %q: %s: %w", strings.TrimSpace(line), k, err)
				}
				*p = n
			} else if p, ok := lists[k]; ok && v != "" {
				*p = parseHookList(v)
			} else {
				return nil, fmt.Errorf("result line %q: unknown field %q", strings.TrimSpace(line), kv)
			}
		}
		if len(seen) != len(ints)+len(lists) {
			return nil, fmt.Errorf("result line %q: %d of %d fields", strings.TrimSpace(line), len(seen), len(ints)+len(lists))
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// checkTwoPEResults checks the ranks' lines together: one line per rank
// 0..nranks-1, each PE its rank on its own device, nranks PEs, the value
// from the left neighbour ((rank-1+n) % n) arrived, the hook ran on the ring
// module and not on the plain one, and the control returned 7. It reports
// every problem, joined.
func checkTwoPEResults(rs []twoPEResult, nranks int) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	byRank := map[int]twoPEResult{}
	for _, r := range rs {
		if _, dup := byRank[r.Rank]; dup {
			bad("rank %d: more than one result line", r.Rank)
		}
		byRank[r.Rank] = r
	}
	for rank := range nranks {
		r, ok := byRank[rank]
		if !ok {
			bad("rank %d: no result line", rank)
			continue
		}
		left := (rank - 1 + nranks) % nranks
		if r.Device != rank {
			bad("rank %d ran on device %d, want %d", rank, r.Device, rank)
		}
		if r.MyPE != rank || r.DevPE != rank {
			bad("rank %d: my_pe is %d on the host and %d on the device, want %d", rank, r.MyPE, r.DevPE, rank)
		}
		if r.NPEs != nranks || r.DevN != nranks {
			bad("rank %d: n_pes is %d on the host and %d on the device, want %d", rank, r.NPEs, r.DevN, nranks)
		}
		if r.Want != left {
			bad("rank %d: expected %d from its left neighbour, want %d", rank, r.Want, left)
		}
		if r.Got != left {
			bad("rank %d: got %d in its symmetric int, want %d (put by PE %d)", rank, r.Got, left, left)
		}
		if len(r.PlainHooks) != 0 {
			bad("rank %d: hooks %v ran on the plain module; none may", rank, r.PlainHooks)
		}
		if !slices.Equal(r.RingHooks, []string{HookName}) {
			bad("rank %d: hooks %v ran on ring.cubin, want [%s]", rank, r.RingHooks, HookName)
		}
		if r.ControlRC != 7 {
			bad("rank %d: the control (nvshmemx_cumodule_init on the plain module) returned %d, want 7", rank, r.ControlRC)
		}
	}
	for rank := range byRank {
		if rank < 0 || rank >= nranks {
			bad("a result line for rank %d of %d", rank, nranks)
		}
	}
	return errors.Join(errs...)
}

// checkControlOutput checks a child's output: the control call between
// controlStart and controlEnd printed NVSHMEM's "named symbol not found",
// and nothing outside it did, nor "NVSHMEM is not initialized".
func checkControlOutput(out string) error {
	before, rest, ok := strings.Cut(out, controlStart)
	if !ok {
		return errors.New("the child did not reach the control call")
	}
	control, after, ok := strings.Cut(rest, controlEnd)
	if !ok {
		return errors.New("the child did not finish the control call")
	}
	var errs []error
	for _, part := range []string{before, after} {
		for _, bad := range []string{"named symbol not found", "NVSHMEM is not initialized"} {
			if strings.Contains(part, bad) {
				errs = append(errs, fmt.Errorf("%q printed outside the control call", bad))
			}
		}
	}
	if !strings.Contains(control, "named symbol not found") {
		errs = append(errs, errors.New("the control call did not hit the failure the hook avoids (no \"named symbol not found\")"))
	}
	return errors.Join(errs...)
}
