"""The words and JSON of a garbage collection in progress (analysis.gc)."""
from pyhang.model.kinds import Confidence


def thread_gc_line(th):
    """The line under a thread's header when it runs a collection, or None."""
    g = th.gc
    if g is None:
        return None
    if g.confidence == Confidence.CERTAIN:
        return "garbage collection: this thread runs one (%s in its native stack, frame #%d)" % (
            g.native_function, g.native_frame)
    return ("garbage collection: likely this thread runs it (a collection is in progress and Python frame #%d runs "
            "a finalizer, __del__) [likely: a finalizer also runs when an object's last reference goes]"
            % g.finalizer_frame)


def report_gc_line(report, names):
    """The report's line on a collection in progress, or None when none is known to run."""
    runners = [th for th in report.threads if th.gc is not None]
    if not report.gc_collecting and not runners:
        return None
    if not runners:
        return "Garbage collection in progress: which thread runs it is not known (its native stack names " \
               "no collection function, no thread runs a __del__)"
    who = ", ".join("%s%s" % (names(th.tid), "" if th.gc.confidence == Confidence.CERTAIN else " (likely)")
                    for th in runners)
    return "Garbage collection in progress, run by %s: while a finalizer or callback it runs is blocked, the " \
           "collection cannot end (gc.collect() elsewhere returns at once)" % who


def thread_gc_json(th):
    g = th.gc
    if g is None:
        return None
    return {"confidence": g.confidence, "native_function": g.native_function, "native_frame": g.native_frame,
            "finalizer_frame": g.finalizer_frame}


def report_gc_json(report):
    return {"collecting": report.gc_collecting, "threads": [th.tid for th in report.threads if th.gc is not None]}
