package dl

import (
	"bytes"
	"os"
	"testing"
)

// FuzzUsesOrigin: the $ORIGIN reader never panics, whatever the image
// (checkELF runs first in the loader, but the reader does not rely on it).
func FuzzUsesOrigin(f *testing.F) {
	if self, err := os.ReadFile("/proc/self/exe"); err == nil && len(self) > 1<<16 {
		f.Add(self[:1<<16])
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		usesOrigin(bytes.NewReader(b))
	})
}
