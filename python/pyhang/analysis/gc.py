"""A garbage collection in progress, and the thread that runs it (what
libpython.py's py-bt calls "Garbage-collecting", pystack's gc status).

The interpreter records that a collection runs (gc.collecting, read by the
native decoder: the state's `gc_collecting`, None where it is not known),
not which thread runs it.  A thread runs it for certain when its native
stack has one of the collector's functions, in the interpreter's own
object (names differ by version; a stripped interpreter names none of
them, they are static, unless its debug file is installed).  Those frames lie below whatever the collection
calls (a finalizer, a weakref callback) and its Python frames, deeper than
a report unwinds: while a collection runs, the threads that run Python are
unwound GC_NATIVE_DEPTH deep to look, without changing the frames the
report shows.  Where no stack names them and a collection runs, a thread
running a `__del__` is likely the one (a finalizer also runs when an
object's last reference goes, outside any collection: hence only likely).
"""
from pyhang.libraries import basename
from pyhang.model.kinds import Confidence
from pyhang.model.report import GcRun

GC_NATIVE_DEPTH = 160
MAX_UNWOUND = 64   # threads unwound that deep at most

# The collection's own functions, 3.6 - 3.15 (gcmodule.c, gc.c): gc.collect()'s
# implementation, the collection proper and the entries that start one.
GC_FUNCTIONS = frozenset((
    "collect", "collect_with_callback", "collect_generations", "gc_collect", "gc_collect_impl",
    "gc_collect_main", "gc_collect_with_callback", "gc_collect_generations", "gc_collect_full",
    "gc_collect_young", "gc_collect_increment", "gc_collect_region", "PyGC_Collect", "_PyGC_Collect",
    "_PyGC_CollectNoFail", "_Py_RunGC",
))


def _in_python(frame, library):
    return library is not None and basename(frame.library) == library


def collection_frame(frames, library):
    """(index, function) of the innermost collection function of `frames`
    in the interpreter's object `library` (its base name), or None."""
    for i, f in enumerate(frames):
        if f.function in GC_FUNCTIONS and _in_python(f, library):
            return i, f.function
    return None


def finalizer_frame(python_frames):
    """The index of the innermost Python frame that runs a finalizer, or None."""
    for i, f in enumerate(python_frames):
        if f.function == "__del__" or f.function.endswith(".__del__"):
            return i
    return None


def analyse(facts, report, view):
    """Sets report.gc_collecting and each thread's `gc` (model.report.GcRun)."""
    collecting = view.state.gc_collecting if view.ok else None
    report.gc_collecting = collecting
    library = basename(view.state.library) or None
    found = False
    for th in report.threads:
        at = collection_frame(th.native_frames, library)
        if at is not None:
            th.gc = GcRun(confidence=Confidence.CERTAIN, native_function=at[1], native_frame=at[0])
            found = True
    if found or not collecting:
        return
    found = _deeper(facts, report, library)
    if found:
        return
    for th in report.threads:
        index = finalizer_frame(th.python_frames)
        if index is not None:
            th.gc = GcRun(confidence=Confidence.LIKELY, finalizer_frame=index)


def _deeper(facts, report, library):
    """Looks for the collection's functions deeper in the stacks of the threads
    that run Python; True when some thread has them."""
    tids = sorted(th.tid for th in report.threads if th.python_frames)[:MAX_UNWOUND]
    if not tids:
        return False
    found = False
    for t in facts.threads(GC_NATIVE_DEPTH, tids) or ():
        at = collection_frame(t.frames, library)
        th = report.thread(t.tid)
        if at is not None and th is not None:
            th.gc = GcRun(confidence=Confidence.CERTAIN, native_function=at[1], native_frame=at[0])
            found = True
    return found
