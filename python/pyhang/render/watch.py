"""The lines `pyhang watch` writes on stderr (pyhang.watch): when it starts,
each report that let it go on, and how it ended.  The report that ends a
watch is the report's own text or JSON, on stdout."""
from pyhang.model.live_kinds import WatchEnd


def _seconds(s):
    return "%g s" % round(s, 1)


def _counted(outcome):
    return "%d look%s, %d report%s" % (outcome.looks, "" if outcome.looks == 1 else "s",
                                       outcome.reports, "" if outcome.reports == 1 else "s")


def started(pid, interval, after, limit):
    """The first line: what the watch will do."""
    return "pyhang: watching process %d every %s without stopping it; its report once it stands still %s%s\n" % (
        pid, _seconds(interval), _seconds(after), "" if limit is None else ", for %s at most" % _seconds(limit))


def went_on(pid, still):
    """A report that accounted for every thread: the watch goes on."""
    return ("pyhang: process %d stood still %s; its report finds every thread running or idle by design: "
            "watching on\n" % (pid, _seconds(still)))


def ended(pid, outcome, after):
    """The last line, from a WatchOutcome."""
    counted = _counted(outcome)
    if outcome.end == WatchEnd.PROBLEM:
        return "pyhang: process %d stood still %s; its report (exit status %d), after %s of watching (%s):\n" % (
            pid, _seconds(outcome.still), outcome.status, _seconds(outcome.seconds), counted)
    if outcome.end == WatchEnd.EXITED:
        return "pyhang: process %d ended; watched %s (%s)\n" % (pid, _seconds(outcome.seconds), counted)
    if outcome.end == WatchEnd.LIMIT:
        found = "no report named a problem" if outcome.reports else "it never stood still %s, so no report was " \
            "taken" % _seconds(after)
        return "pyhang: watched process %d for %s (%s): %s\n" % (pid, _seconds(outcome.seconds), counted, found)
    if outcome.end == WatchEnd.NOT_READ:
        return "pyhang: process %d stood still %s, but its report could not be taken (%s)\n" % (
            pid, _seconds(outcome.still or 0), counted)
    return "pyhang: stopped watching process %d after %s (%s)\n" % (pid, _seconds(outcome.seconds), counted)
