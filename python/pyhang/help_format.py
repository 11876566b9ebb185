"""The command line's help, as wide as the terminal: argparse's formatter
for `pyhang` and `pyhang job` (pyhang.cli, pyhang.merge_commands)."""
import argparse
import os
import sys


def columns():
    """The terminal's width as shutil.get_terminal_size() finds it ($COLUMNS,
    else stdout's terminal, else 80)."""
    try:
        columns = int(os.environ.get("COLUMNS", 0))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, as wide as the terminal, without importing
    shutil for it: argparse makes a formatter for every option it is given,
    and shutil (with the compression modules it imports) was a tenth of the
    command line's start."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position, columns() - 2 if width is None else width)
