"""fork-hazards: what a fork child inherited that can never be released.

gdb-side glue only: the struct pthread of every thread gdb knows (their
fs_base), the facts the native library reads (native.fork_facts), and the
rules of pyhang.forks."""
import _pyhang_native as native
from pyhang import forks

from pyhang_gdb.session import SESSION


def _facts(target):
    from pyhang_gdb import commands
    own = sorted(commands.thread_bases())
    return SESSION.cached("fork-facts", lambda: native.fork_facts(target, own, True))


def analysis(target, view, report):
    """The forks.Analysis of a report (also kept on the report for the command)."""
    try:
        facts = _facts(target)
    except native.ReaderError as exc:
        facts = {"descriptor_problem": str(exc)}
    result = forks.analyse(report, facts)
    report.fork_analysis = result
    return result


def hazards(target, view, report):
    """The report's `fork_hazards` list."""
    return analysis(target, view, report).hazards


def register():
    from pyhang_gdb import commands

    class ForkHazards(commands.PyhangCommand):
        """fork-hazards: is this process a fork child that did not exec (and how
pyhang knows), and what it inherited that can never be released: locks
held by parent threads at fork (orphaned-lock), libgomp's thread pool
(openmp-after-fork), a CUDA context (cuda-after-fork), the parent's other
threads (threads-at-fork), multiprocessing's fork start method, and, live,
copy-on-write of large Python containers (cow-refcount).  Each with its
evidence and one line of advice; "No fork hazards found" says what was
checked."""
        name = "fork-hazards"

        def run(self, argv):
            commands.parser(self.name, "what a fork child inherited").parse_args(argv)
            report = commands.build_report()
            result = getattr(report, "fork_analysis", None)
            if result is None:  # build_report did not ask for hazards
                result = analysis(SESSION.target(), commands.python_view(), report)
            print(forks.render(report, result))

    ForkHazards()
