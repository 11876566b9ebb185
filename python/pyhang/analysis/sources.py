"""The source line of each Python frame a report shows, asked of the
collector in one question (Facts.source_lines: every distinct file and line
at once).  Frames shared between threads (python_state.python_frames) get
their line once; a line that is a pure function of (file, line) is the
same for all of them."""


def _readable(frame):
    return frame.line > 0 and frame.file and not frame.file.startswith("<")


def wanted(frames):
    """The distinct [file, line] of `frames` that a file can hold, sorted."""
    return sorted({(f.file, f.line) for f in frames if _readable(f)})


def set_sources(frames, found):
    """Each frame's `source` (stripped) and `source_indent` from `found`:
    {(file, line): the line as the collector read it, or None}."""
    for f in frames:
        text = found.get((f.file, f.line))
        if text is None:
            continue
        stripped = text.lstrip()
        f.source = stripped or None
        f.source_indent = len(text) - len(stripped)


def add_frame_sources(facts, frames):
    """The source line of each of `frames` (PythonFrames), in one question."""
    asked = wanted(frames)
    if not asked:
        return
    answers = facts.source_lines([list(w) for w in asked]) or []
    set_sources(frames, dict(zip(asked, answers)))


def add_sources(facts, report):
    """The source line of every Python frame of `report`'s threads: each
    distinct frame object once (thousands of frames share a few dozen)."""
    frames = {}
    for th in report.threads:
        frames.update(zip(map(id, th.python_frames), th.python_frames))
    add_frame_sources(facts, list(frames.values()))
