"""`fork-hazards`: what a fork child inherited that can never be released
(the command line's words of the same analysis: pyhang_gdb.facts.analysed)."""
from pyhang_gdb import facts
from pyhang_gdb.commands.base import PyhangCommand, parser


class ForkHazards(PyhangCommand):
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
        parser(self.name, "what a fork child inherited").parse_args(argv)
        print(facts.analysed().render(self.name))
