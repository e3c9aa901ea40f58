package onecpu

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxPasses bounds the passes over the thread list: each pass pins the
// threads the previous one had not seen; one that finds none new ends it.
const maxPasses = 16

// Pin sets the CPU affinity of every thread of the process to the CPU the
// calling thread runs on, and returns that CPU. Threads started afterwards
// inherit it from the thread that starts them, so the whole process keeps
// to that CPU until something sets its affinity again. On an error no
// thread is known to be pinned; some may be.
func Pin() (cpu int, err error) {
	cpu, err = current()
	if err != nil {
		return -1, err
	}
	var set unix.CPUSet
	set.Set(cpu)
	done := map[int]bool{}
	for range maxPasses {
		tids, err := threads()
		if err != nil {
			return -1, err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh++
			// A thread that ended since the listing is not an error.
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return -1, fmt.Errorf("onecpu: pinning thread %d to CPU %d: %w", tid, cpu, err)
			}
			done[tid] = true
		}
		if fresh == 0 {
			return cpu, nil
		}
	}
	return -1, fmt.Errorf("onecpu: the process kept starting threads through %d passes", maxPasses)
}

// Count is how many CPUs the calling thread may run on.
func Count() (int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0, err
	}
	return set.Count(), nil
}

// current is the CPU the calling thread runs on (getcpu(2)).
func current() (int, error) {
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return -1, fmt.Errorf("onecpu: getcpu: %w", e)
	}
	return int(cpu), nil
}

// threads lists the process's thread ids.
func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("onecpu: listing the threads: %w", err)
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
