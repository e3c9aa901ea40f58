package presence

// multiarchLibDir is Debian's multiarch library folder for this architecture.
const multiarchLibDir = "/usr/lib/aarch64-linux-gnu"
