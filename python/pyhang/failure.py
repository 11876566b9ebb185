"""Why the command line could not look at a target (Failure): what it says
on stderr (or as a pyhang-error/1 document) and exits non-zero with, and
how a gdb it runs says what kind of failure it met."""

# In the environment of the gdbs the command line runs (gdb_batch.gdb_env): a pyhang command that fails
# writes its kind (model.kinds.CommandFailure) on a line of its own, FAILURE_PREFIX KIND, before its one
# line (pyhang_gdb.commands.base); serve-facts says it in its error reply.  What failed is decided on that.
FAILURE_KINDS_ENV = "PYHANG_FAILURE_KINDS"
FAILURE_PREFIX = "pyhang-failure: "


class Failure(Exception):
    """Why pyhang could not look at the target: the message, gdb's own lines, what to do."""

    def __init__(self, message, details=(), hint=None):
        super().__init__(message)
        self.message, self.details, self.hint = message, list(details), hint
