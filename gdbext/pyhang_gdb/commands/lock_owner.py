"""`lock-owner`: what the selected thread waits on and who holds it, from
the analysis the command line's `lock-owner` words (pyhang_gdb.facts.analysed)."""
from pyhang.render.locks import unreadable
from pyhang.model.kinds import CommandFailure
from pyhang_gdb import collect, facts, thread_apply
from pyhang_gdb.commands.base import PyhangCommand, no_arguments
from pyhang_gdb.session import NoTarget, selected_gdb_thread


class LockOwner(PyhangCommand):
    """lock-owner: what the selected thread waits on (pthread mutex, rwlock,
semaphore, condition variable, futex, the GIL, a Python lock or API: a
Future and the worker running it, a queue, a join), at which address, in
which library, and which thread owns it.  Use `thread apply all lock-owner`
for every thread (each line under gdb's header of its thread)."""
    name = "lock-owner"

    def run(self, argv):
        no_arguments(self.name, "what the selected thread waits on", argv)
        thread = selected_gdb_thread()
        named = not thread_apply.active()  # gdb's `thread apply` has just named the thread
        analysed = facts.analysed()   # the whole process's, once per stop: owners are other threads
        twice = collect.listed_twice(thread)
        if twice is not None:
            print(unreadable(twice.tid, analysed.names, twice.problem, named))
            return
        text = analysed.thread_text(self.name, collect.target_tids().to_target(thread.ptid[1]), named)
        if text is None:
            raise NoTarget("the selected thread is gone", CommandFailure.NO_THREAD)
        print(text)
