"""The source lines of a target's Python frames, read from the target's own
file system (the collectors' side of the `source_lines` question):

- a live process through /proc/PID/root (it may run in a container whose
  root is not ours), a relative co_filename through /proc/PID/cwd;
- a core under its sysroot (gdb's `set sysroot`, the command line's
  `--sysroot`: the same for both), then at the path itself, as the core's
  libraries are looked for: a container's own files (the standard library)
  are under its root, the program's files a runtime bound in from the
  host are where the host has them; a relative path is not read (the
  process's working directory is not in a core).

Bounded: at most MAX_FILE_BYTES of a file are read (a line past them is not
known), each file once per collector; a line is cut at MAX_LINE_CHARS.  A
file that cannot be read, a line past its end, a name that is no path
(`<string>`, `<frozen ...>`) is no source line (None), never an error.
Bytes are decoded as UTF-8 (PEP 3120's default), bad bytes replaced.
A symbolic link inside the root that names an absolute path is resolved
against this machine's root, as the kernel resolves it for us."""
import os
import posixpath
import stat

MAX_FILE_BYTES = 4 << 20
MAX_LINE_CHARS = 240


class SourceFiles:
    """Lines of the target's files.  `root`: the directory of this machine
    that stands for the target's `/`; `cwd`: the one for its working
    directory, or None when not known."""

    def __init__(self, root="/", cwd=None, then_here=False):
        """`then_here`: a file not under `root` is read at its own path on this machine (a core's sysroot)."""
        self.root = root or "/"
        self.cwd = cwd
        self.then_here = then_here and self.root != "/"
        self.files = {}   # target path → ([line text] or None, why unreadable), each read once

    def host_path(self, path, base=None):
        """Where this machine reads the target's `path` (under `base`, default the root), or None."""
        if not path or path.startswith("<") or "\0" in path:
            return None
        if path.startswith("/"):
            base = base or self.root
        elif self.cwd:
            base = self.cwd
        else:
            return None
        inner = posixpath.normpath("/" + path.lstrip("/"))   # no `..` climbs out of the root
        return base.rstrip("/") + inner if base != "/" else inner

    def read(self, path):
        """(every line of `path` read, up to MAX_FILE_BYTES, newlines off; None) or (None, why not)."""
        if path not in self.files:
            host = self.host_path(path)
            lines, why = _read(host)
            if why and self.then_here and path.startswith("/"):
                lines, here_why = _read(self.host_path(path, "/"))
                why = None if lines is not None else "%s (read at %s and at %s)" % (here_why, host, path)
            elif why and host and host != path:
                why += " (read at %s)" % host
            self.files[path] = lines, why
        return self.files[path]

    def lines(self, path):
        return self.read(path)[0]

    def line(self, path, lineno):
        """Line `lineno` (1-based) of `path`: trailing white space off, cut at
        MAX_LINE_CHARS, leading white space kept; None when not known."""
        if not isinstance(lineno, int) or lineno < 1:
            return None
        lines = self.lines(path)
        if lines is None or lineno > len(lines):
            return None
        text = lines[lineno - 1].rstrip()
        return text[:MAX_LINE_CHARS - 3] + "..." if len(text) > MAX_LINE_CHARS else text

    def answer(self, requests):
        """The `source_lines` answer: for each [path, line] of `requests`, the line or None, in order."""
        return [self.line(path, lineno) for path, lineno in requests]


def _read(host):
    if host is None:
        return None, "not a path the target's files can be read at"
    try:
        # Not blocking, and only a regular file: a name that is a FIFO or a device is no source.
        fd = os.open(host, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None, "not a regular file"
            with os.fdopen(fd, "rb", closefd=False) as f:
                # (a read of MAX_FILE_BYTES + 1 would make a buffer that large for every file, whatever its size)
                data = f.read(min(st.st_size, MAX_FILE_BYTES) + 1)
                if len(data) > st.st_size:   # it grew since: the rest, to the bound
                    data += f.read(MAX_FILE_BYTES + 1 - len(data))
        finally:
            os.close(fd)
    except (OSError, ValueError) as exc:
        return None, getattr(exc, "strerror", None) or str(exc)
    if len(data) > MAX_FILE_BYTES:
        lines = data[:MAX_FILE_BYTES].split(b"\n")[:-1]   # the last line read may be cut: not known
    else:
        lines = data.split(b"\n")
        if lines[-1] == b"":   # after the last newline: no line
            lines.pop()
    return [line.decode("utf-8", errors="replace").rstrip("\r") for line in lines], None


def for_live(pid):
    """The files of live process `pid` (its host PID), as it sees them."""
    return SourceFiles("/proc/%d/root" % pid, "/proc/%d/cwd" % pid)


def for_core(sysroot):
    """The files of a core: under its `sysroot` (gdb's, or the command line's), then where it names them."""
    if sysroot and sysroot.startswith("target:"):
        sysroot = sysroot[len("target:"):]
    return SourceFiles(sysroot or "/", then_here=True)
