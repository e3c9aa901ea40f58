package nvshmem

import (
	"fmt"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
)

// WithCUDA sets the CUDA backend whose device context is made current around
// NVSHMEM calls (flagshim's own, say). The default is a backend of the
// plugin's own, cuda.New with the plugin's getenv: it opens the same libcuda
// the process already uses (the loader hands back the loaded library).
func WithCUDA(b *driver.Backend) Option { return func(o *options) { o.cuda = b } }

// withContext runs f on a locked OS thread with the PE's device's primary
// context current (the driver core's WithContext), then restores the
// thread's previous context; l.mu held.
func (l *Lib) withContext(f func() error) error {
	if l.opts.cuda == nil {
		l.opts.cuda = cuda.New(driver.WithGetenv(l.opts.getenv))
	}
	var ferr error
	if err := l.opts.cuda.WithContext(l.opts.device, func() error { ferr = f(); return nil }); err != nil {
		return fmt.Errorf("nvshmem: making CUDA device %d current: %w", l.opts.device, err)
	}
	return ferr
}
