"""The options of `pyhang report`: one table for the command line
(pyhang.cli) and the gdb command (gdbext/pyhang_gdb/commands/report.py),
which both add them to their argparse parsers from here.  No gdb here."""
from pyhang.model.facts import DEFAULT_NATIVE_DEPTH

# Native frames unwound per thread for --merged: the pairing needs every
# evaluation-loop frame of the stack.
MERGED_NATIVE_DEPTH = 512

REPORT = (
    (("--json",), {"action": "store_true", "help": "the pyhang-report/1 JSON document (docs/json-contract.md)"}),
    (("--pretty",), {"action": "store_true", "help": "with --json: indented"}),
    (("--native-depth",), {"type": int, "metavar": "N", "default": None,
                           "help": "native frames per thread (default %d, more for blocked threads when a lock's "
                                   "owner must be guessed)" % DEFAULT_NATIVE_DEPTH}),
    (("--locals",), {"action": "store_true", "help": "the locals of every Python frame"}),
    (("--merged",), {"action": "store_true",
                     "help": "native and Python frames as one stack (native frames %d deep unless given)"
                             % MERGED_NATIVE_DEPTH}),
    (("--dot",), {"action": "store_true",
                  "help": "the wait-for graph in Graphviz DOT (render it: dot -Tsvg -o hang.svg), with --tree across "
                          "processes"}),
    (("--tree",), {"action": "store_true",
                   "help": "a live process and all its descendants, each examined on its own, and the deadlocks "
                           "across them"}),
)


def report_flags():
    """Every option of `pyhang report` ("--json", ...), as the table lists them."""
    return [flag for flags, _ in REPORT for flag in flags]


def add_report_options(parser):
    for flags, kwargs in REPORT:
        parser.add_argument(*flags, **kwargs)


def native_depth(asked, merged):
    """The native depth a report is made with: the one asked for, else
    MERGED_NATIVE_DEPTH for --merged, else None (DEFAULT_NATIVE_DEPTH, deeper
    where the analysis needs it)."""
    if asked is not None:
        return max(1, asked)
    return MERGED_NATIVE_DEPTH if merged else None
