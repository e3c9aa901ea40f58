package dl

import "debug/elf"

// This process's machine as ELF and ld.so.cache name it, and the dynamic
// loader's default folders: glibc's (/lib64, /usr/lib64) and the multiarch
// folders Debian and Ubuntu add, then /lib and /usr/lib.

const elfMachine = elf.EM_X86_64

// cacheDefaultID is glibc's _DL_CACHE_DEFAULT_ID for x86-64:
// FLAG_ELF_LIBC6 (0x0003) | FLAG_X8664_LIB64 (0x0300), from
// sysdeps/generic/ldconfig.h and sysdeps/unix/sysv/linux/x86_64/dl-cache.h.
const cacheDefaultID = 0x0303

// cacheFlagsOK is glibc's _dl_cache_check_flags for x86-64: only the
// default id (i386 libc6 entries are 0x0003, x32 ones 0x0803).
func cacheFlagsOK(flags int32) bool { return flags == cacheDefaultID }

var defaultDirs = []string{
	"/lib64",
	"/usr/lib64",
	"/lib/x86_64-linux-gnu",
	"/usr/lib/x86_64-linux-gnu",
	"/lib",
	"/usr/lib",
}
