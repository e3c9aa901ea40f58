package cli

import (
	"io"
	"os"
	"sync"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

// The CLI's output is its own while foreign code runs. A driver or a
// management library may write to the process's standard output (a
// printf in its init, a banner), which would land in the middle of the
// CLI's own output and break `info --json`. So when the CLI writes to the
// process's standard output (fd 1), it writes to a duplicate of it, and fd
// 1 points at standard error (where the libraries' words stay visible)
// until the command is done. The isolated tier's children do not share
// it: their standard output is /dev/null (os/exec's default), their
// answer a pipe of its own.

// ownStdout returns the writer the CLI writes its output to, and the
// function that gives fd 1 back. When stdout is not the process's fd 1 (a
// program that links the CLI and captures it), it changes nothing.
func ownStdout(stdout, stderr io.Writer) (io.Writer, func()) {
	f, ok := stdout.(*os.File)
	if !ok || f.Fd() != 1 {
		return stdout, func() {}
	}
	target := -1
	if e, ok := stderr.(*os.File); ok {
		target = int(e.Fd())
	} else if fd, err := unix.Open(os.DevNull, unix.O_WRONLY|unix.O_CLOEXEC, 0); err == nil {
		defer unix.Close(fd)
		target = fd
	}
	if target < 0 {
		return stdout, func() {}
	}
	own, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return stdout, func() {}
	}
	if err := unix.Dup3(target, 1, 0); err != nil {
		unix.Close(own)
		return stdout, func() {}
	}
	out := os.NewFile(uintptr(own), f.Name())
	return out, func() {
		flushStdio() // what the libraries printed goes to stderr, not after the output
		_ = unix.Dup3(own, 1, 0)
		out.Close()
	}
}

// fflush is the C library's fflush, when the process has one loaded.
var fflush = sync.OnceValue(func() uintptr {
	a, err := purego.Dlsym(purego.RTLD_DEFAULT, "fflush")
	if err != nil {
		return 0
	}
	return a
})

// flushStdio writes out what C code left in the C library's stdio buffers
// (fflush(NULL)): a Go program's exit does not.
func flushStdio() {
	if fn := fflush(); fn != 0 {
		purego.SyscallN(fn, 0)
	}
}
