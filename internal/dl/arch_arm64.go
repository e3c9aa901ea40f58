package dl

import "debug/elf"

// This process's machine as ELF and ld.so.cache name it, and the dynamic
// loader's default folders: glibc's (/lib64, /usr/lib64) and the multiarch
// folders Debian and Ubuntu add, then /lib and /usr/lib.

const elfMachine = elf.EM_AARCH64

// cacheDefaultID is glibc's _DL_CACHE_DEFAULT_ID for aarch64 (LP64):
// FLAG_ELF_LIBC6 (0x0003) | FLAG_AARCH64_LIB64 (0x0a00), from
// sysdeps/generic/ldconfig.h and sysdeps/unix/sysv/linux/aarch64/dl-cache.h.
const cacheDefaultID = 0x0a03

// cacheFlagsOK is glibc's _dl_cache_check_flags for aarch64: only the
// default id.
func cacheFlagsOK(flags int32) bool { return flags == cacheDefaultID }

var defaultDirs = []string{
	"/lib64",
	"/usr/lib64",
	"/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/lib",
	"/usr/lib",
}
