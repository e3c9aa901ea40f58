package presence

// multiarchLibDir is Debian's multiarch library folder for this architecture.
const multiarchLibDir = "/usr/lib/x86_64-linux-gnu"
