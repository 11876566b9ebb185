"""Recursion in a stack: runs of frames that repeat, so that a thread
thousands of frames deep reads as the frames where it entered and left the
recursion and a count (the text report, py-bt).  Plain Python on
any sequence of frame keys (function, file, line): a frame repeats when its
key does, whatever its locals.
"""
from pyhang.model.record import record

MAX_PERIOD = 8      # the longest cycle of frames looked for (f calls g calls f: 2)
MIN_REPEATS = 3     # a cycle folded only when it repeats at least this often in a row


@record(frozen=True)
class Run:
    """Frames `start` .. `start + period * repeats - 1` (innermost first) are
    `period` frames repeated `repeats` times in a row."""
    start: int
    period: int
    repeats: int

    @property
    def end(self):
        return self.start + self.period * self.repeats


def key(frame):
    return (frame.function, frame.file, frame.line)


def runs(keys, max_period=MAX_PERIOD, min_repeats=MIN_REPEATS):
    """[Run] of `keys` (one per frame, innermost first), in order, never
    overlapping: at each frame the period that covers the most frames wins
    (the shorter one on a tie).  Linear in the frames times `max_period`."""
    keys = list(keys)
    n = len(keys)
    out = []
    i = 0
    while i < n:
        best = None
        for p in range(1, max_period + 1):
            if i + 2 * p > n:
                break
            k = 1
            while i + (k + 1) * p <= n and keys[i + k * p:i + (k + 1) * p] == keys[i:i + p]:
                k += 1
            if k >= min_repeats and (best is None or k * p > best.period * best.repeats):
                best = Run(start=i, period=p, repeats=k)
        if best is None:
            i += 1
            continue
        out.append(best)
        i = best.end
    return out


def stack_runs(frames, omitted_at=None):
    """runs() of a thread's PythonFrames, none across `omitted_at` (the place of a deep stack's middle
    that was not kept, FramesOmitted.at: the frames each side of it are not neighbours)."""
    cuts = [0, len(frames)] if not omitted_at else [0, omitted_at, len(frames)]
    out = []
    for lo, hi in zip(cuts, cuts[1:]):
        out += [Run(start=lo + r.start, period=r.period, repeats=r.repeats)
                for r in runs(key(f) for f in frames[lo:hi])]
    return out
