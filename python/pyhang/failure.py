"""Why the command line could not look at a target (Failure): what it says
on stderr (or as a pyhang-error/1 document) and exits non-zero with."""


class Failure(Exception):
    """Why pyhang could not look at the target: the message, gdb's own lines, what to do."""

    def __init__(self, message, details=(), hint=None):
        super().__init__(message)
        self.message, self.details, self.hint = message, list(details), hint
