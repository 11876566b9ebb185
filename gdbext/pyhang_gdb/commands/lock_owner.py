"""`lock-owner`: what the selected thread waits on and who holds it."""
from pyhang.analysis import locks, syscalls
from pyhang.analysis.python_state import gil_state
from pyhang.analysis.report import gil_holder
from pyhang.analysis.threading import PythonThreads
from pyhang.render.locks import describe, not_blocked, unreadable
from pyhang.render.names import ThreadNames
from pyhang_gdb import collect, decoders
from pyhang_gdb.commands.base import PyhangCommand, no_arguments
from pyhang_gdb.session import SESSION


class LockOwner(PyhangCommand):
    """lock-owner: what the selected thread waits on (pthread mutex, rwlock,
semaphore, condition variable, futex, the GIL), at which address, in which
library, and which thread owns it.  Use `thread apply all lock-owner` for
every thread."""
    name = "lock-owner"

    def run(self, argv):
        no_arguments(self.name, "what the selected thread waits on", argv)
        snap, view = collect.selected_thread(collect.LOCK_FRAME_DEPTH)
        reader = decoders.lock_reader()
        # Thread numbers of every thread, for owners; computed once per stop.
        names = SESSION.cached("thread-names", lambda: ThreadNames(collect.thread_numbers()))
        stop = decoders.Stop()
        collect.add_lock_facts(stop, view, snap)
        collect.add_syscall_facts(stop.target, snap)
        gil = gil_state(view, snap.tid, snap.registers)
        bases = collect.thread_bases() if locks.wants_futex_word(snap.lock) is not None else {}
        threads = PythonThreads(decoders.threading() if view.ok else None, view)
        files = collect.files_of(stop.target, [snap])
        b = locks.blocked_on(view, snap, gil, gil_holder(view), bases, threads, files)
        owner_bases = locks.sorted_bases(collect.thread_bases()) if locks.wants_thread_bases(b) else None
        b = locks.settle(b, set(names.num), owner_bases)
        if b is not None and b.address is not None and view.ok:
            b.name = collect.object_names(stop, [snap]).get(b.address)
        if b is None and snap.problem:
            print(unreadable(snap.tid, names, snap.problem))
            return
        if b is None:
            nr = syscalls.in_syscall(snap.registers)
            print(not_blocked(snap.tid, names, syscalls.name(nr) if nr is not None else None, reader.problem))
            return
        print(describe(b, snap.tid, names))
