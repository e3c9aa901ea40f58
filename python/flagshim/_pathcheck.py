"""The checks made before a library is loaded, since loading it runs its
code in this process: the Go loader's rule (internal/dl/pathcheck.go,
groups.go, elfcheck.go).

- the chain: the file, every folder from / down to it and every hop of the
  symbolic links on the way (followed one at a time, at most 40) belong to
  root or the effective user, and nobody else may write them: not
  world-writable, not group-writable except by root's group or the owner's
  user-private group (its one member is the owner, by the local /etc/passwd
  and /etc/group only, never NSS); a sticky folder such as /tmp passes when
  its next entry on the path belongs to root or the user;
- the file: a regular file holding a well-formed ELF shared object (ET_DYN)
  of this process's class, byte order and machine, its header tables and
  segments inside the file, at least one loadable segment, and not a
  position-independent executable (DF_1_PIE in its dynamic section).

Anything else is refused with a LibraryError naming the component at fault
and the fix.
"""

import posix

# typing is for type checkers only: importing it costs a host's start (issue 40).
# The annotations that name its types are strings: `from __future__ import
# annotations` would cost an import of __future__ (issue 40).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, NoReturn, Optional

from . import _elf, errors


# The file's type and permission bits of st_mode, as POSIX <sys/stat.h>
# defines them (the stat module's values; os and stat are not imported, a
# host's start, issue 40): os's functions come from posix, its C part.
S_IFMT = 0o170000  # the type's bits
S_IFDIR = 0o040000  # a directory
S_IFREG = 0o100000  # a regular file
S_IFLNK = 0o120000  # a symbolic link
S_IWGRP = 0o020  # the group may write
S_IWOTH = 0o002  # others may write
S_ISVTX = 0o1000  # sticky: only an entry's owner may replace it
_PERM = 0o7777  # the permission bits (stat.S_IMODE)


def _is(mode: int, kind: int) -> bool:
    """Whether st_mode mode is of type kind (stat.S_ISDIR's S_IFDIR...)."""
    return mode & S_IFMT == kind


def _refuse(path: str, why: str) -> "NoReturn":
    raise errors.LibraryError(f"flagshim: refusing to load {path}: {why}")


# The symbolic links followed on one path at most (the kernel's MAXSYMLINKS).
_MAX_HOPS = 40
# What is read of /etc/passwd and /etc/group at most.
_MAX_ACCOUNT_FILE = 16 << 20


def _mode(mode: int) -> str:
    """mode as Go's %#o writes it: 0755, 01777."""
    return f"0{mode:o}" if mode else "0"


def _fix_write(path: str, who: str) -> str:
    bit = "o-w" if who == "anyone" else "g-w"
    return f"chmod {bit} {path}, or move the library to a folder only root can write"


def _private_group(gid: int, uid: int, passwd: str, group: str) -> bool:
    """Whether group gid has exactly one member, the user uid (a user-private
    group, as RHEL and Fedora create), by the contents of /etc/passwd and
    /etc/group: no user but uid has it as primary group, its member list is
    empty or names only that user, and uid is a member one way or the other.
    Where the files do not tell (a NIS "+"/"-" line, a line it cannot read, a
    user or group they do not list), the group is not trusted
    (internal/dl/groups.go)."""

    def uint32(s: str) -> "Optional[int]":
        return int(s) if s.isascii() and s.isdigit() and int(s) < 1 << 32 else None

    users, groups = [], []  # (name, uid, gid), (gid, members)
    for text, rows in ((passwd, users), (group, groups)):
        for line in text.split("\n"):
            line = line.rstrip("\r")
            if not line or line.startswith("#"):
                continue
            f = line.split(":")
            if len(f) < 4 or line.startswith(("+", "-")) or not f[0]:
                return False
            if rows is users:
                row = (f[0], uint32(f[2]), uint32(f[3]))
            else:
                row = (uint32(f[2]), [m for m in (m.strip(" \t\n\v\f\r") for m in f[3].split(",")) if m])
            if None in row:
                return False
            rows.append(row)
    owner = next((name for name, u, _ in users if u == uid), None)
    members = next((m for g, m in groups if g == gid), None)
    if owner is None or members is None:
        return False
    primary = [u for _, u, g in users if g == gid]
    if any(u != uid for u in primary) or (members and members != [owner]):
        return False
    return bool(primary or members)


def _host_private_group(euid: int) -> "Callable[[int, int], bool]":
    """_private_group by this host's /etc/passwd and /etc/group (never NSS),
    read on first need and only when both pass the chain check themselves,
    strictly: root and the user only, no group trusted."""
    cache: list = []

    def read(p: str) -> "Optional[str]":
        try:
            _walk(p, euid, None)
            with open(p, "rb") as f:
                b = f.read(_MAX_ACCOUNT_FILE + 1)
        except (OSError, errors.LibraryError):
            return None
        return b.decode("latin-1") if len(b) <= _MAX_ACCOUNT_FILE else None  # latin-1: byte for byte, as Go reads

    def private(gid: int, uid: int) -> bool:
        if not cache:
            cache[:] = [read("/etc/passwd"), read("/etc/group")]
        return None not in cache and _private_group(gid, uid, *cache)

    return private


def _walk(path: str, euid: int, private: "Optional[Callable[[int, int], bool]]") -> str:
    """Checks that the file at path, every folder from / down to it and every
    hop of the symbolic links on the way belong to root or the effective user
    euid, and that nobody else may write them: not world-writable, not
    group-writable except by root's group or the owner's private group
    (private(gid, uid); None trusts no such group), except a sticky folder
    (such as /tmp) whose next entry on the path belongs to root or the user.
    Links are followed here one hop at a time (a relative target against the
    link's folder, an absolute one from /, at most _MAX_HOPS), so that every
    folder a hop passes through is checked too; ".." goes back up one resolved
    folder. Returns the path with every link resolved; raises LibraryError
    naming the component at fault (internal/dl/pathcheck.go's checkChain)."""
    hops: List[str] = []  # "link -> target" followed so far, for messages

    def fail(why: str) -> "NoReturn":
        _refuse(path, why + (f" (checking {path} via {', '.join(hops)})" if hops else ""))

    def kind(st: "posix.stat_result") -> str:
        return "folder" if _is(st.st_mode, S_IFDIR) else "symlink" if _is(st.st_mode, S_IFLNK) else "file"

    def writers(st: "posix.stat_result") -> str:
        if st.st_mode & S_IWOTH:
            return "anyone"
        if st.st_mode & S_IWGRP and st.st_gid != 0 and not (private and private(st.st_gid, st.st_uid)):
            return f"group {st.st_gid}"
        return ""

    def component(p: str) -> "posix.stat_result":
        try:
            return posix.lstat(p)
        except OSError as e:
            fail(f"cannot check {p}: {e.strerror or e}")

    def owner(p: str, st: "posix.stat_result") -> None:
        if st.st_uid not in (0, euid):
            fail(f"{kind(st)} {p} belongs to uid {st.st_uid}, neither root nor this process's user (uid {euid}), "
                 f"who can replace it: chown root {p}, or move the library to a folder only root can write")

    if not path.startswith("/"):
        fail(f"{path!r} is not an absolute path")
    if "\0" in path:
        fail(f"{path!r} holds a NUL byte")
    stack = [("/", component("/"))]  # the resolved folders so far, / first
    owner(*stack[0])
    todo = [n for n in path.split("/") if n]
    while todo:
        name = todo.pop(0)
        if name in (".", ".."):
            if name == ".." and len(stack) > 1:
                stack.pop()
            continue
        parent, pst = stack[-1]
        if not _is(pst.st_mode, S_IFDIR):
            fail(f"{parent} is a {kind(pst)}, not a folder")
        p = parent + name if parent == "/" else parent + "/" + name
        st = component(p)
        w = writers(pst)
        mode = _mode(pst.st_mode & _PERM)
        if w and not pst.st_mode & S_ISVTX:
            fail(f"folder {parent} (mode {mode}) is writable by {w}, who can replace what it holds: {_fix_write(parent, w)}")
        if w and st.st_uid not in (0, euid):
            fail(f"folder {parent} (mode {mode}) is writable by {w} and sticky, but its entry {p} belongs to uid "
                 f"{st.st_uid}, neither root nor this process's user (uid {euid}), who can replace it: move the "
                 "library to a folder only root can write")
        owner(p, st)
        if not _is(st.st_mode, S_IFLNK):
            stack.append((p, st))
            continue
        if len(hops) >= _MAX_HOPS:
            import errno  # here: a refusal's, not every import's

            fail(f"more than {_MAX_HOPS} symbolic links (a loop?): {posix.strerror(errno.ELOOP)}")
        try:
            target = posix.readlink(p)
        except OSError as e:
            fail(f"cannot read the symlink {p}: {e.strerror or e}")
        if not target or "\0" in target:
            fail(f"the symlink {p} has an empty or invalid target")
        hops.append(f"{p} -> {target}")
        if target.startswith("/"):
            del stack[1:]
        todo[:0] = [n for n in target.split("/") if n]
    last, st = stack[-1]
    if len(stack) == 1:
        fail(f"{path} resolves to /, not a library file")
    w = writers(st)
    if w:
        fail(f"{kind(st)} {last} (mode {_mode(st.st_mode & _PERM)}) is writable by {w}: {_fix_write(last, w)}")
    return last


def _check_elf(shown: str, real: str) -> None:
    """Refuses real unless it is a regular file holding a well-formed ELF
    shared object for this process (_elf.why says what that takes), read
    through one descriptor opened without following links."""
    try:
        st = posix.lstat(real)
    except OSError as e:
        _refuse(shown, f"cannot check {real}: {e.strerror or e}")
    if not _is(st.st_mode, S_IFREG):
        _refuse(shown, f"{real} is not a regular file (mode {_mode(st.st_mode)}); point to the library file itself")
    try:
        # O_NONBLOCK: a FIFO swapped in since the lstat still opens at once.
        fd = posix.open(real, posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_NONBLOCK | posix.O_CLOEXEC)
    except OSError as e:
        _refuse(shown, f"cannot open {real}: {e.strerror or e}")
    try:
        fst = posix.fstat(fd)
        if not _is(fst.st_mode, S_IFREG):
            _refuse(shown, f"{real} is not a regular file (mode {_mode(fst.st_mode)})")
        size = fst.st_size
        head = posix.pread(fd, 64, 0)
        w = _elf.why(head, size, lambda off, n: posix.pread(fd, n, off))
    except OSError as e:
        _refuse(shown, f"cannot read {real}: {e.strerror or e}")
    finally:
        posix.close(fd)
    if w:
        _refuse(shown, f"{w}; reinstall the library (or point to the right file)")


def check(path: str, hint: str) -> str:
    """Checks path as the Go loader checks a library (_walk, then _check_elf)
    and returns it with every link resolved. Raises LibraryError saying why
    not; hint says how to get the file where it is missing."""
    try:
        if path.startswith("/") and "\0" not in path:
            posix.stat(path)
    except FileNotFoundError:
        import os.path  # here: a refusal's, not every import's

        real = os.path.realpath(path)
        if path == real:
            raise errors.LibraryError(f"flagshim: {path} not found: {hint}") from None
        raise errors.LibraryError(f"flagshim: {path} (-> {real}) not found: {hint}") from None
    except OSError:
        pass  # a link loop, say: the walk says what is wrong
    euid = posix.geteuid()
    real = _walk(path, euid, _host_private_group(euid))
    _check_elf(path if path == real else f"{path} (-> {real})", real)
    return real
