package presence

import "testing"

// BenchmarkVisible is the parser alone on a four-entry UUID list. (The
// whole NVML answer on its fake, BenchmarkNVML, is drivers/cuda's.)
func BenchmarkVisible(b *testing.B) {
	devs := devsWith(4, nvUUIDs)
	b.ReportAllocs()
	for b.Loop() {
		if got, err := Visible(devs, "GPU-c,GPU-b,GPU-8a1,GPU-8a2", true); err != nil || len(got) != 4 {
			b.Fatal(err, got)
		}
	}
}
