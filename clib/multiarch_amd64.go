package clib

// MultiarchLibDir is Debian's multiarch library folder for this architecture.
const MultiarchLibDir = "/usr/lib/x86_64-linux-gnu"
