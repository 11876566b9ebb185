"""Which core a gdb command line names (pyhang.core_notes.core_in_gdb_arguments): gdb refuses a core cut
short before pyhang runs, and pyhang's commands in gdb say why from the core its command line gave."""
import pytest

from pyhang.core_notes import core_in_gdb_arguments

CASES = [
    (["gdb", "/usr/bin/python3", "core.1"], "core.1"),
    (["gdb", "-batch", "-nx", "-c", "/tmp/core", "/usr/bin/python3"], "/tmp/core"),
    (["gdb", "--core=/tmp/core", "python3"], "/tmp/core"),
    (["gdb", "-core", "/tmp/core"], "/tmp/core"),
    (["gdb", "-ex", "source x.gdb", "-iex", "set pagination off", "python3", "core"], "core"),
    (["gdb", "python3", "1234"], None),                 # a process id, not a core
    (["gdb", "-p", "1234", "python3"], None),
    (["gdb", "python3"], None),
    (["gdb"], None),
    (["gdb", "--args", "python3", "core-looking-arg"], None),   # the program's own arguments
    (["gdb", "-c"], None),                              # an option missing its value
]


@pytest.mark.parametrize("argv, core", CASES)
def test_the_core_a_gdb_command_line_names(argv, core):
    assert core_in_gdb_arguments(argv) == core
