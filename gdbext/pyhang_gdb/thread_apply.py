"""Whether a command runs under `thread apply` (or `taas`, which runs it):
gdb then prints its own "Thread N (...)" header before each thread's
output, and a per-thread command need not name the thread again.

gdb's Python API does not tell a command what runs it, so pyhang hooks the
two commands (`define thread hook-apply`, `define thread apply hook-all`,
and their `hookpost-`) to count how deep they are; the hooks are marked
deprecated only so that `help thread apply` does not list them (gdb runs a
hook without the warning a deprecated command typed gets).  A hook the user
defined is left alone (commands then name the thread, as at the prompt).
Limits: `thread apply -q` prints no header, and a command under it still
omits the name; a `thread apply` that ends in an error skips its
post-hook, so the count is reset at every prompt."""
import gdb

# (prefix, command) of each command hooked.
_HOOKED = (("thread", "apply"), ("thread apply", "all"))

_DEPTH = [0]
_INSTALLED = []


def begin():
    _DEPTH[0] += 1


def end():
    _DEPTH[0] = max(0, _DEPTH[0] - 1)


def active():
    """Whether gdb's `thread apply` runs the current command (it printed the thread's header)."""
    return _DEPTH[0] > 0


def named(snap):
    """Whether gdb's `thread apply` header has just named the thread of ThreadSnapshot `snap` as pyhang would:
    under it, and by the same TID (in a PID namespace gdb's header gives the host's LWP, pyhang the target's)."""
    return active() and snap.host_tid in (None, snap.tid)


def _user_defined(command):
    """Whether `command` is a user-defined command (`help` would not tell: it
    falls back on a prefix that takes arguments, as `thread` does)."""
    try:
        gdb.execute("show user " + command, to_string=True)
        return True
    except gdb.error:
        return False


def _reset():
    _DEPTH[0] = 0


def install():
    if _INSTALLED:
        return
    _INSTALLED.append(True)
    for prefix, name in _HOOKED:
        hooks = [("%s hook-%s" % (prefix, name), "begin"), ("%s hookpost-%s" % (prefix, name), "end")]
        if any(_user_defined(hook) for hook, _ in hooks):
            continue
        for hook, call in hooks:
            gdb.execute("define %s\npython from pyhang_gdb import thread_apply; thread_apply.%s()\nend" % (hook, call))
            gdb.execute("maintenance deprecate %s" % hook)
    gdb.events.before_prompt.connect(_reset)
