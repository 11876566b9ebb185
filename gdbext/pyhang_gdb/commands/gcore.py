"""`pyhang gcore [FILE]`: a core of the stopped process with every thread's
stack and pyhang's record of /proc (pyhang_gdb.gcore)."""
import os

import gdb

from pyhang.model.proc_record import ProcRecord, summary
from pyhang.model.record import from_data
from pyhang.render.gcore import written_text
from pyhang_gdb import gcore
from pyhang_gdb.commands.base import ArgumentError, PyhangCommand, parser
from pyhang_gdb.session import SESSION


class PyhangGcore(PyhangCommand):
    """pyhang gcore [FILE] [--no-record]: write a core of the process (default FILE: core.PID), as gdb's gcore does, that
keeps every thread's stack (gdb's gcore writes zeros for the stacks glibc 2.42+ guards on Linux 6.13+) and
what /proc knows of the process that a core cannot hold: the fd table with each pipe's and socket's other end,
file locks, each thread's system call, its children, the environment variables naming a rank or job.
`pyhang report` on the core (gdb EXE CORE, or `pyhang report CORE EXE`) reads them as it reads the live
process.  --no-record writes the core without them."""
    name = "pyhang gcore"

    def run(self, argv):
        p = parser("pyhang gcore", "a core of the process, with its /proc record")
        p.add_argument("file", nargs="?")
        p.add_argument("--no-record", action="store_true")
        args = p.parse_args(argv)
        target = SESSION.target()
        if target.kind != "live" or not target.pid:
            raise ArgumentError("pyhang gcore: needs a live process (gdb -p PID); this target is a %s" % target.kind)
        pid = gdb.selected_inferior().pid
        path = os.path.abspath(args.file or "core.%d" % pid)
        filled, data = gcore.write_core(path, pid, record=not args.no_record)
        recorded = summary(from_data(ProcRecord, data)) if data is not None else None
        print("pyhang: " + written_text(path, pid, filled, recorded))
