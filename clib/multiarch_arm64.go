package clib

// MultiarchLibDir is Debian's multiarch library folder for this architecture.
const MultiarchLibDir = "/usr/lib/aarch64-linux-gnu"
