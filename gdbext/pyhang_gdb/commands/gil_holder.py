"""`gil-holder`: who holds each GIL, who waits for it, who runs without it."""
from pyhang.analysis.gil import gils
from pyhang.render.gil import render_gils
from pyhang.render.text import python_status_line
from pyhang.analysis import gather
from pyhang_gdb import facts
from pyhang_gdb.commands.base import PyhangCommand, no_arguments


class GilHolder(PyhangCommand):
    """gil-holder: which thread holds the GIL, which wait for it, and which run
with it released (per interpreter on 3.12+)."""
    name = "gil-holder"

    def run(self, argv):
        no_arguments(self.name, "who holds the GIL", argv)
        snapshot, view = gather.process(facts.facts(), gather.DEFAULT_NATIVE_DEPTH, lock_facts=False)
        if not view.ok:
            print(python_status_line(view.status))
            return
        entries, no_python = gils(view, snapshot.threads)
        print(render_gils(entries, no_python, snapshot.threads, view.warnings))
