"""Which Python frames each evaluation-loop call of a thread runs, for the
merged view of native and Python frames (gdb's `bt` through pyhang's frame
filter).

Each call of the evaluation loop (`_PyEval_EvalFrameDefault`) runs Python
frames: up to 3.10 exactly one (a PyFrameObject per call); from 3.11 on, a
run of frames it called inline, whose outermost is an *entry frame* (C
called into the loop there; the native walker marks it `entry_frame`).  So,
innermost first, the Python frames split into runs that each end at an entry
frame — or, when no frame is an entry frame (the 3.6 – 3.10 frame model),
into single frames — and the i-th run belongs to the i-th evaluation-loop
frame of the native stack, innermost first.  The pairing is only made when
the two counts are equal: anything else (a stack being unwound while the
thread enters or leaves Python, a walk cut short) gives no pairing rather
than a wrong one."""

EVAL_LOOP = "_PyEval_EvalFrameDefault"
# A partition gcc split off the loop, which pyhang names as gcc does
# (pyhang/unwind/partitions.hpp): one call of the loop runs in one of its
# parts at a time, so either name marks one evaluation-loop frame.
EVAL_LOOP_NAMES = (EVAL_LOOP, EVAL_LOOP + ".cold")


def is_eval_loop(name):
    return name in EVAL_LOOP_NAMES


def _entries(frames):
    return [f.entry_frame for f in frames]


def _index_runs(frames):
    """python_runs() as runs of indices into `frames`."""
    entries = _entries(frames)
    if not any(entries):
        return [[i] for i in range(len(frames))]
    ends = [i + 1 for i, entry in enumerate(entries) if entry]
    runs = [list(range(start, end)) for start, end in zip([0] + ends, ends)]
    if ends[-1] < len(frames):  # frames past the last entry frame: the walk was cut short
        runs.append(list(range(ends[-1], len(frames))))
    return runs


def python_runs(frames):
    """The thread's Python frames (PyFrameFacts or PythonFrames, innermost
    first) split into the runs each evaluation-loop call executes."""
    return [[frames[i] for i in run] for run in _index_runs(frames)]


def _split(frames, lo, hi, per_frame):
    """Runs of indices lo..hi-1 of `frames`: single frames (`per_frame`: the 3.6 - 3.10 model), else runs
    ending at an entry frame, the frames past the last one a run of their own."""
    if per_frame:
        return [[i] for i in range(lo, hi)]
    runs, run = [], []
    for i in range(lo, hi):
        run.append(i)
        if frames[i].entry_frame:
            runs.append(run)
            run = []
    return runs + ([run] if run else [])


def _pair(native_names, frames, omitted=None):
    """{index into native_names: run of indices into frames}, or {}.  `omitted`: the FramesOmitted of a
    stack too deep to keep whole (its middle was not kept): the innermost runs pair with the innermost
    evaluation-loop frames, the outermost runs with the outermost, and the loops between run the frames
    left out.  With none, the counts must agree."""
    loops = [i for i, name in enumerate(native_names) if name in EVAL_LOOP_NAMES]  # is_eval_loop
    if not loops:
        return {}
    if omitted is None or not 0 < omitted.at < len(frames):
        runs = _index_runs(frames)
        if len(loops) != len(runs):
            return {}
        return dict(zip(loops, runs))
    per_frame = not any(_entries(frames))
    at = omitted.at
    inner, outer = _split(frames, 0, at, per_frame), _split(frames, at, len(frames), per_frame)
    if per_frame:   # one loop per frame, kept or not
        if len(loops) != len(frames) + omitted.count:
            return {}
        return dict(zip(loops[:at] + loops[len(loops) - len(outer):], inner + outer))
    straddles = not frames[at - 1].entry_frame   # the innermost kept run goes on into the middle
    if straddles and len(loops) == len(inner) + len(outer) - 1:
        # no entry frame in the middle: the loop running the innermost kept run's end runs the outermost's start
        runs = inner[:-1] + [inner[-1] + outer[0]] + outer[1:]
        return dict(zip(loops, runs))
    if len(loops) < len(inner) + len(outer):
        return {}
    return dict(zip(loops[:len(inner)] + loops[len(loops) - len(outer):], inner + outer))


def pair_runs(native_names, frames, omitted=None):
    """{index into native_names: run of Python frames} for every
    evaluation-loop frame, or {} when the counts disagree."""
    frames = list(frames)   # each made once (a thread's frames are made when asked for)
    return {n: [frames[i] for i in run] for n, run in _pair(native_names, frames, omitted).items()}


def pair_indices(native_names, frames, omitted=None):
    """pair_runs() as indices: {native frame index: [Python frame indices]}
    (a frame may appear twice in `frames`: runs are told apart by position)."""
    return _pair(native_names, frames, omitted)
