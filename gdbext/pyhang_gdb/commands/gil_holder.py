"""`gil-holder`: who holds each GIL, who waits for it, who runs without it
(the command line's words of the same analysis: pyhang_gdb.facts.analysed)."""
from pyhang_gdb import facts
from pyhang_gdb.commands.base import PyhangCommand, no_arguments


class GilHolder(PyhangCommand):
    """gil-holder: which thread holds the GIL, which wait for it, and which run
with it released (per interpreter on 3.12+)."""
    name = "gil-holder"

    def run(self, argv):
        no_arguments(self.name, "who holds the GIL", argv)
        print(facts.analysed().render(self.name))
