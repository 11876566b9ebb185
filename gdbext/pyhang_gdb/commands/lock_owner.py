"""`lock-owner`: what the selected thread waits on and who holds it."""
import gdb

from pyhang.analysis import report, syscalls
from pyhang.render.locks import describe, not_blocked, unreadable
from pyhang.render.names import ThreadNames
from pyhang_gdb import collect, facts, thread_apply
from pyhang_gdb.commands.base import PyhangCommand, no_arguments
from pyhang_gdb.session import SESSION, NoTarget


class LockOwner(PyhangCommand):
    """lock-owner: what the selected thread waits on (pthread mutex, rwlock,
semaphore, condition variable, futex, the GIL), at which address, in which
library, and which thread owns it.  Use `thread apply all lock-owner` for
every thread (each line under gdb's header of its thread)."""
    name = "lock-owner"

    def run(self, argv):
        no_arguments(self.name, "what the selected thread waits on", argv)
        thread = gdb.selected_thread()
        if thread is None:
            SESSION.target()   # no process or core at all says so
            raise NoTarget("no thread is selected")
        # Thread numbers of every thread, for owners; computed once per stop.
        names = SESSION.cached("thread-names", lambda: ThreadNames(collect.thread_numbers()))
        named = not thread_apply.active()  # gdb's `thread apply` has just named the thread
        twice = collect.listed_twice(thread)
        if twice is not None:
            print(unreadable(twice.tid, names, twice.problem, named))
            return
        target_facts = facts.facts()
        snap, b = report.thread_wait(target_facts, collect.target_tids().to_target(thread.ptid[1]), set(names.num))
        if snap is None:
            raise NoTarget("the selected thread is gone")
        if b is None and snap.problem:
            print(unreadable(snap.tid, names, snap.problem, named))
            return
        if b is None:
            nr = syscalls.in_syscall(snap.registers)
            print(not_blocked(snap.tid, names, syscalls.name(nr) if nr is not None else None,
                              target_facts.target().lock_problem, named))
            return
        print(describe(b, snap.tid, names, named))
