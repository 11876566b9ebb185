import os
import sys

from pyhang.cli import main

try:
    status = main()
    sys.stdout.flush()
except BrokenPipeError:
    # The reader went away (`pyhang report ... | head`): not an error of ours.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    status = 0
sys.stderr.flush()
# A run from a source tree keeps the record __init__s it compiled for the next run (the build's
# staged package has them all already).
from pyhang.model import record
record.keep_compiled()
# The process ends here without freeing what it made (cli.KEPT: a report of a
# thousand threads is a hundred thousand objects, freed one by one in a
# fortieth of its time): the kernel takes the memory back at once.  Every
# file and pipe was closed, every child waited for, before main returned.
os._exit(int(status or 0))
