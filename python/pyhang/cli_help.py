"""The words of the `pyhang` command line's help: its commands, what each
prints, its options and examples (`pyhang COMMAND --help`), the epilog of
`pyhang --help` (examples and the exit statuses scripts rely on) and the
short usage.  The parser and what each command does are pyhang.cli's."""
import argparse

# command → (gdb command, takes --json/--pretty/--native-depth, what it prints)
COMMANDS = {
    "report": ("pyhang report", True, "every thread, what it waits for and who holds it; deadlocks first"),
    "py-bt": ("thread apply all pyhang-py-bt", False, "the Python stack of every thread"),
    "gil-holder": ("gil-holder", False, "who holds the GIL, who waits for it"),
    "lock-owner": ("thread apply all lock-owner", False, "what each thread waits on and who holds it"),
    "fork-hazards": ("fork-hazards", False, "what a fork child inherited that can never be released"),
    "py-bt-full": ("thread apply all pyhang-py-bt-full", False,
                   "the Python stack of every thread with each frame's arguments"),
    "py-locals": ("thread apply all pyhang-py-locals", False, "the locals of every thread's innermost Python frame"),
    "py-tasks": ("py-tasks", False, "every asyncio task, what it awaits, await cycles, blocked event loops"),
    "merge": (None, True, "reports of many processes (ranks, hosts) grouped by Python stack; the odd ones out"),
    "job": (None, True, "every process of a job on every node (Slurm, ssh, this machine), merged: the odd ranks "
                        "and why"),
    "watch": (None, True, "look at the process every --interval s without stopping it; its report once it stands "
                          "still --after s and the report names a problem"),
    "gcore": (None, False, "a core of the process (--tree: of each process of its tree) that keeps every thread's "
                           "stack and what /proc knows of it: fd table, file locks, system calls, children"),
}

# command → its own --help: the options it takes and examples.
COMMAND_HELP = {
    "report": """options: --json [--pretty], --native-depth N, --locals, --merged, --tree, --snapshot FILE,
         --no-stop, --stop, --gdb (live), --sysroot DIR, --lib-search-path DIR[:DIR] (cores)
examples:
  pyhang report -p 1234                  every thread, deadlocks first
  pyhang report --json --pretty -p 1234  the pyhang-report/1 document, indented
  pyhang report --locals -p 1234         with the locals of every Python frame
  pyhang report --merged -p 1234         native and Python frames as one stack
  pyhang report --tree -p 1234           the process and its descendants
  pyhang report --no-stop -p 1234        read it without stopping it (nothing it does is interrupted)
  pyhang report --gdb -p 1234            stopped and read through gdb (gdb's unwinder for a frame that no
                                         unwind table covers)
  pyhang report core.1234 /usr/bin/python3.11 --sysroot /srv/cores/host1
  pyhang report core.1234 core.1240 --sysroot /srv/cores/host1   one core per process of a tree
  pyhang report --snapshot hang.json     a snapshot saved in gdb by `pyhang snapshot FILE`""",
    "py-bt": "examples:\n  pyhang py-bt -p 1234\n  pyhang py-bt core.1234",
    "py-bt-full": "examples:\n  pyhang py-bt-full -p 1234     each frame with its arguments",
    "py-locals": "examples:\n  pyhang py-locals -p 1234      the innermost Python frame's locals, every thread",
    "py-tasks": "examples:\n  pyhang py-tasks -p 1234       asyncio tasks per event loop, await cycles",
    "gil-holder": "examples:\n  pyhang gil-holder -p 1234",
    "lock-owner": "examples:\n  pyhang lock-owner -p 1234\n  pyhang lock-owner core.1234",
    "fork-hazards": "examples:\n  pyhang fork-hazards -p 1234   a fork child: what it inherited that can never be released",
    "merge": """options: --json [--pretty], --dot
examples:
  pyhang merge /shared/hang/*.json       reports (pyhang report --json) of every rank, grouped
  pyhang merge --dot *.json | dot -Tsvg -o ranks.svg   the groups as a picture, the odd ones out red
  pyhang merge --json a.json tree.json   the pyhang-merge/1 document; a pyhang-tree/1 counts each process""",
    "job": """options: --json [--pretty], --dot, --save DIR, --fanout N, --deadline S, --remote-pyhang PATH,
         --srun-arg ARG (repeated), --ssh-arg ARG (repeated), --stop
examples:
  pyhang job --slurm 4242                every node of Slurm job 4242 (srun --overlap, no GPU, no memory of
                                         its own), each process read without stopping it, merged
  pyhang job --slurm 4242 --save hang/   keeps each node's answer: pyhang merge hang/*.jsonl again later
  pyhang job --hosts hostfile            the rank processes (RANK, LOCAL_RANK, ... set) of each host, over ssh
  pyhang job --local                     the rank processes of this machine (a torchrun job)""",
    "gcore": """options: -o FILE (default core.PID; with --tree a prefix: PREFIX.PID, default core), --tree, --stop
examples:
  pyhang gcore -p 1234                   core.1234: every thread's stack, and /proc's facts in a note of its own
  pyhang gcore -p 1234 -o /srv/cores/hung.core
  pyhang gcore --tree -p 1234 -o /srv/cores/core   one core per process of the tree: core.1234, core.1240, ...
  pyhang report core.1234 /usr/bin/python3.11      reads the fd table, system calls, children from the core""",
    "watch": """options: --interval S (between looks, default 1), --after S (still that long: its report, default 5),
         --for S (at most), --json [--pretty], --native-depth N, --locals, --merged
examples:
  pyhang watch -p 1234                   its report (and exit status) once it stands still 5 s and the report
                                         names a problem; never stops it
  pyhang watch -p 1234 --interval 0.1 --after 30 --for 3600 --json > hang.json""",
}


def command_help(name):
    """`pyhang COMMAND --help`: what the command prints, its options, examples."""
    usage = "REPORT.json..." if name == "merge" else "(--slurm JOBID | --hosts FILE | --local)" if name == "job" \
        else "-p PID [-o FILE] [--tree]" if name == "gcore" else "-p PID [--interval S] [--after S] [--for S]" \
        if name == "watch" else "(-p PID | CORE [EXECUTABLE])"
    return "usage: pyhang %s %s\n\n%s: %s\n\n%s\n" % (name, usage, name, COMMANDS[name][2], COMMAND_HELP[name])


EPILOG = """\
examples:
  pyhang report -p 1234                  a live process (pyhang stops every thread with ptrace, as a debugger
                                         does but with no signal, reads, and lets it run on before printing;
                                         unless a thread is inside a write on a pipe or socket, which a stop
                                         would cut short: then it is read without stopping it, as with --no-stop)
  pyhang report --json -p 1234           the pyhang-report/1 JSON document (docs/json-contract.md)
  pyhang report core.1234                a core; the executable is the one the core names
  pyhang report core.1234 /usr/bin/python3.11
  pyhang lock-owner -p 1234              also: py-bt, py-bt-full, py-locals, py-tasks, gil-holder, fork-hazards
  pyhang report --snapshot hang.json     a snapshot saved in gdb by `pyhang snapshot FILE`
  pyhang report --tree -p 1234           the process and its descendants, deadlocks across them first
  pyhang report core.1234 core.1240 ...  one core per process, as a tree (parents from the cores)
  pyhang merge /shared/hang/*.json       many ranks' reports grouped by Python stack, the odd ones out
  pyhang job --slurm 4242                every rank of a Slurm job on every node, read and merged: the odd ranks
  pyhang gcore -p 1234                   core.1234 with every thread's stack and /proc's facts (fds, children)
  pyhang watch -p 1234                   a watchdog, never stopping it: the report once it stands still 5 s
                                         and the report names a problem (its exit status); 0 when it ends

exit status:
  0  the report was made (for `report`: and every thread is running, idle by design or
     blocked on threads that can progress: no deadlock, having read what it needs)
  3  `report` was made and found at least one deadlock
  5  `report` was made and found a hang that is no cycle: a ThreadPoolExecutor starving
     itself, an event loop blocked in a task, a lock whose owner is gone, a Queue nothing
     can fill or drain, a lock held across a long sleep, waits that made no progress while nothing could end them (report -p
     looks twice more without stopping the process, unless --once), the GIL's holder asleep in a system call, a lock copied locked by fork, a
     thread inside an OpenMP pool fork did not copy (--tree: also a process waiting on one
     that cannot serve it, a multiprocessing.Pool task lost with a worker that died); its
     verdict says which
  4  `report` was made and found no deadlock, but is incomplete: the Python state of a
     Python process, or glibc's lock layouts while threads sleep on futexes, could not
     be read, so no deadlock can be ruled out; its "incomplete" verdict says what could
     not be read and what still holds (--tree: in some process); also when a thread
     waits on a pipe or socket only other processes hold (--tree looks at them), or on
     what pyhang cannot name or does not model (its "unaccounted" verdict gives the raw facts)
  merge, job: the worst of the processes' own statuses (3, then 5, then 4); 5 when ranks wait in
     different collectives; 4 when a file, node or rank could not be read and no hang was found
  1  pyhang could not look at the target; the reason is on stderr (with --json,
     a {"schema": "pyhang-error/1", "error": {...}} document on stdout too)
  2  the arguments are wrong; or `report` was made of a target that runs no Python
     and found nothing hung (--tree: no process runs Python)
"""


def command_name(name):
    """A command's name, or an error that suggests the nearest one."""
    if name in COMMANDS:
        return name
    import difflib
    near = difflib.get_close_matches(name, COMMANDS, n=1)
    raise argparse.ArgumentTypeError("unknown command %r%s (commands: %s)" % (
        name, "; did you mean %r?" % near[0] if near else "", ", ".join(COMMANDS)))


SHORT_USAGE = """pyhang COMMAND -p PID [options]              a live process
       pyhang COMMAND CORE [EXECUTABLE] [options]   a core file
       pyhang merge REPORT.json...  |  pyhang job (--slurm JOBID | --hosts FILE | --local)
  COMMAND: %s; `pyhang --help`: every option, the exit statuses and examples""" % ", ".join(
    c for c in COMMANDS if c not in ("merge", "job"))
