package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/cli"
)

func mono() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

func main() {
	start := mono()
	code := 0
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if err := registerExtraVendors(); err != nil {
		fmt.Fprintln(os.Stderr, "procsplit:", err)
		os.Exit(2)
	}
	// The isolated tier starts this program as its probe child (the
	// running executable): serve it, as the CLI does, with the same
	// vendors registered.
	flagshim.ServeProbeChild()
	shedWhen := os.Getenv("PROCSPLIT_SHED")
	if shedWhen == "before" {
		shed()
	}
	switch {
	case mode == "noop" && len(os.Args) == 2:
	case mode == "raw" && len(os.Args) == 2:
		code = raw()
	case mode == "raw-thread" && len(os.Args) == 2:
		// raw on a goroutine that ends locked, so the runtime ends its
		// thread with it: the thread that ran cuInit is gone before exit.
		done := make(chan int)
		go func() {
			runtime.LockOSThread()
			done <- raw()
		}()
		code = <-done
	case mode == "cli" && len(os.Args) > 2:
		code = cli.Run(os.Args[2:], io.Discard, os.Stderr)
	default:
		fmt.Fprintln(os.Stderr, "usage: procsplit noop | raw | raw-thread | cli ARGS...")
		os.Exit(2)
	}
	if shedWhen == "after" {
		shed()
	}
	end := mono()
	fmt.Fprintf(os.Stderr, "MONO %d %d %d\n", start, end, threads())
	if os.Getenv("PROCSPLIT_EXIT") == "libc" {
		libcExit(code)
	}
	os.Exit(code)
}

// shed ends the Go runtime's idle threads: with main locked to its thread
// and one P, each goroutine that ends locked to the thread it ran on takes
// that thread with it, until no count drops (the main thread, sysmon, the
// template thread LockOSThread starts and one more remain).
func shed() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for n, same := threads(), 0; same < 2; {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(done)
		}()
		<-done
		runtime.Gosched()
		if m := threads(); m < n {
			n, same = m, 0
		} else {
			same++
		}
	}
}

// threads counts the process's threads at the end of main.
func threads() int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return -1
	}
	return len(ents)
}

// libcExit ends the process through libc's exit(3), which runs the loaded
// libraries' destructors (libcuda's included) as a C program's return from
// main does; os.Exit skips them.
func libcExit(code int) {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err == nil {
		var exit uintptr
		if exit, err = purego.Dlsym(libc, "exit"); err == nil {
			purego.SyscallN(exit, uintptr(code))
		}
	}
	fmt.Fprintln(os.Stderr, "libc exit:", err)
	os.Exit(1)
}

// raw is cfloor-probe.c's work in Go: dlopen, cuInit, the count, and each
// device's handle, name and memory, on a locked thread. Like the C floor it
// opens the bare soname, unchecked: it measures a floor, it is not the
// library's loader.
func raw() int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lib, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sym := func(name string) uintptr {
		p, err := purego.Dlsym(lib, name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return p
	}
	cuInit, count, get := sym("cuInit"), sym("cuDeviceGetCount"), sym("cuDeviceGet")
	name, mem := sym("cuDeviceGetName"), sym("cuDeviceTotalMem_v2")
	if rc, _, _ := purego.SyscallN(cuInit, 0); rc != 0 {
		return 1
	}
	var n int32
	if rc, _, _ := purego.SyscallN(count, uintptr(unsafe.Pointer(&n))); rc != 0 {
		return 1
	}
	for i := range n {
		var dev int32
		var buf [256]byte
		var bytes uint64
		purego.SyscallN(get, uintptr(unsafe.Pointer(&dev)), uintptr(i))
		purego.SyscallN(name, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(dev))
		purego.SyscallN(mem, uintptr(unsafe.Pointer(&bytes)), uintptr(dev))
	}
	return 0
}
