"""What the libpython-style commands print (py-locals, py-print, py-list,
py-up/py-down, py-bt-full), in libpython.py's output style, and the locals
of a frame in `pyhang report --locals`.  Values arrive already rendered by
the native library (their `repr`, bounded and safe); this module only lays
them out."""
from pyhang.render.names import python_frame_line
from pyhang.render.unread import unread_text

# Lines of source py-list shows before and after the current line.
LIST_CONTEXT = 5

OLDEST = "Unable to find an older python frame"
NEWEST = "Unable to find a newer python frame"
NO_FRAME = "Unable to locate python frame"


def local_line(local):
    """`name = repr`, as py-locals prints each local (a LocalValue)."""
    return "%s = %s" % (local.name, local.repr)


def locals_lines(locals_, problem=None):
    """py-locals: one `name = repr` a line of `locals_` (LocalValues); a closing line for what could not
    be read (`problem`)."""
    out = [local_line(v) for v in locals_]
    if not out:
        out.append("(no locals)")
    if problem:
        out.append("(incomplete: %s)" % unread_text(problem))
    return out


def print_line(scope, name, value):
    """py-print: `local 'x' = 3`, `global 'CONFIG' = {...}`, `builtin 'len' = <...>` (`value` a LocalValue)."""
    if value is None:
        return "%r not found" % name
    return "%s %r = %s" % (scope, name, value.repr)


# py-bt-full's line of the C callable a frame calls, under the frame number's column
C_CALL_INDENT = "   "


def frame_header(index, frame, arguments=None):
    """`#2 File "app.py", line 42, in settle (a=1, b='x')`: one Python frame,
    numbered from the innermost (0), with its arguments when given."""
    line = "#%d %s" % (index, python_frame_line(frame))
    if arguments is not None:
        line += " (%s)" % ", ".join("%s=%s" % (a.name, a.repr) for a in arguments)
    return line


def omitted_line(omitted, shown):
    """The line standing for the middle of a stack too deep to keep whole (FramesOmitted), `shown` its frames
    kept."""
    return "[{:,} frames not shown between these: the stack is {:,} frames deep; its innermost {:,} and " \
        "outermost {:,} are shown]".format(omitted.count, shown + omitted.count, omitted.at, shown - omitted.at)


def frame_number(index, omitted):
    """The number py-bt gives the frame at `index` of a stack's kept frames, from the innermost (0): past a
    deep stack's omitted middle (FramesOmitted, or None), its depth in the whole stack."""
    return index + omitted.count if omitted is not None and index >= omitted.at else index


def bt_full_lines(frames, omitted=None):
    """py-bt-full's lines of one stack, in gdb and on the command line alike: `frames` innermost first, each
    (PythonFrame, its arguments, the C callable it calls as a line or None, its current source line or
    None); the C callable's line above its frame, the source line below it, a deep stack's omitted middle
    as one line where it stands."""
    out = []
    for i, (frame, arguments, c_call, source) in enumerate(frames):
        if omitted is not None and i == omitted.at:
            out.append(omitted_line(omitted, len(frames)))
        if c_call is not None:
            out.append(C_CALL_INDENT + c_call)
        out.append(frame_header(frame_number(i, omitted), frame, arguments))
        if source:
            out.append("    " + source.strip())
    return out


def source_window(lineno, start=None, end=None):
    """The (first, last) line numbers py-list shows: LIST_CONTEXT around
    `lineno`, or START.., or START,END as given."""
    if start is None:
        start, end = lineno - LIST_CONTEXT, lineno + LIST_CONTEXT
    elif end is None:
        end = start + 2 * LIST_CONTEXT
    return max(start, 1), max(end, 1)


def source_lines(lines, lineno, first, last):
    """py-list's lines: the number right-aligned in 4 columns, `>` before the current one."""
    out = []
    for n in range(first, min(last, len(lines)) + 1):
        label = (">%d" if n == lineno else "%d") % n
        out.append("%4s    %s" % (label, lines[n - 1].rstrip("\n")))
    return out


def source_line(lines, lineno):
    """The current line itself, indented, under a frame header; None when unknown."""
    if lines is None or not 1 <= lineno <= len(lines):
        return None
    return "    " + lines[lineno - 1].strip()


def unreadable_source(path, reason):
    return "Unable to open %s: %s" % (path, reason)


def frame_locals_text(locals_, problem, indent="      "):
    """The locals of one frame (LocalValues, and what could not be read of them) under its line in
    `pyhang report --locals`."""
    return [indent + line for line in locals_lines(locals_, problem)]


def python_frame_function(f):
    """What `bt` names a Python frame an evaluation-loop frame runs, on a
    line of its own under it (its file and line follow, as gdb's own frames
    have them): `[Python] settle`."""
    return "[Python] %s" % f.function
