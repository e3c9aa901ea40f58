package presence

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// The benchmarks load the fake into the benchmark's own process through an
// absolute override handed over by WithLookupEnv (never the environment),
// so no test of the process is affected: the tests that load a fake do so in
// children. The fake is built once per process into a private folder.
var benchLib struct {
	once sync.Once
	dir  string
	path string
}

func benchNVMLPath(b *testing.B) string {
	b.Helper()
	if dltest.CC() == "" {
		b.Skip("no C compiler (go env CC) to build the fake libnvidia-ml.so.1")
	}
	benchLib.once.Do(func() {
		dir, err := os.MkdirTemp("", "presencebench")
		if err != nil {
			b.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		benchLib.dir = dir
		p := filepath.Join(dir, "libnvidia-ml.so.1")
		dltest.BuildLib(b, p, "libnvidia-ml.so.1", []string{dltest.Abs(b, "testdata/fake_nvml.c")})
		benchLib.path = p
	})
	if benchLib.path == "" {
		b.Fatal("the fake libnvidia-ml.so.1 was not built")
	}
	return benchLib.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchLib.dir != "" {
		os.RemoveAll(benchLib.dir)
	}
	os.Exit(code)
}

// BenchmarkNVML is one whole presence answer on the fake (two devices):
// open (a dlopen the loader answers from its table after the first), resolve
// the symbols, nvmlInit_v2, enumerate, nvmlShutdown.
func BenchmarkNVML(b *testing.B) {
	lookup := env(NVMLEnvVar, benchNVMLPath(b))
	b.ReportAllocs()
	for b.Loop() {
		if r := NVML(WithLookupEnv(lookup)); r.Err != nil || len(r.Devices) != 2 {
			b.Fatalf("%v: %s", r.Err, r.Reason)
		}
	}
}

// BenchmarkVisible is the parser alone on a four-entry UUID list.
func BenchmarkVisible(b *testing.B) {
	devs := devsWith(4, nvUUIDs)
	b.ReportAllocs()
	for b.Loop() {
		if got, err := Visible(devs, "GPU-c,GPU-b,GPU-8a1,GPU-8a2", true); err != nil || len(got) != 4 {
			b.Fatal(err, got)
		}
	}
}
