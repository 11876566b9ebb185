"""The words of what a CPython object or frame reader could not read
(model.unread.ReadProblem: a path of model.kinds.ReadPart steps, outermost
first, and a model.kinds.ReadWhy), in one line:

    frame at 0x7f00: code object at 0x7f10: name: str at 0x7f20 unreadable
"""
from pyhang.model.kinds import ReadPart as P, ReadWhy as W
from pyhang.model.unread import read_problem


def _hex(a):
    return "0x%x" % a


def _at(noun):
    return lambda s: "%s at %s" % (noun, _hex(s.address))


def _task_list(s):
    who = "LWP %d" % s.number if s.number else "a thread"
    return "the task list of " + who


# Each step as it names itself: a function of the step.
_STEPS = {
    P.FRAME: lambda s: "frame at " + _hex(s.address),
    P.CFRAME: lambda s: "cframe at " + _hex(s.address),
    P.CODE_OBJECT: lambda s: "code object at " + _hex(s.address),
    P.FIELD: lambda s: s.name + (" " + _hex(s.address) if s.address else ""),
    P.STR: _at("str"), P.BYTES: _at("bytes"), P.INT: _at("int"), P.FLOAT: _at("float"), P.DICT: _at("dict"),
    P.LIST: _at("list"), P.TUPLE: _at("tuple"), P.SET: _at("set"), P.LOCK: _at("lock"), P.TASK: _at("task"),
    P.COROUTINE: _at("coroutine"),
    P.OBJECT: lambda s: "%s at %s" % (s.name or "object", _hex(s.address)),
    P.TYPE: lambda s: "type of " + _hex(s.address),
    P.DICT_KEYS: lambda s: "dict keys at " + _hex(s.address),
    P.DICT_ENTRIES: lambda s: "dict entries at " + _hex(s.address),
    P.SEQUENCE: lambda s: "list or tuple at " + _hex(s.address),
    P.ITEMS: lambda s: "items of " + _hex(s.address),
    P.INSTANCE_DICT: lambda s: "__dict__ at " + _hex(s.address),
    P.MANAGED_DICT: lambda s: "managed dict of " + _hex(s.address),
    P.CELL: lambda s: "cell of '%s' at %s" % (s.name, _hex(s.address)),
    P.VARIABLE: lambda s: "local '%s'" % s.name,
    P.RLOCK: lambda s: "RLock at " + _hex(s.address),
    P.BUFFERED_IO: lambda s: "buffered I/O at " + _hex(s.address),
    P.EXCEPTION_ARGS: lambda s: "args of exception " + _hex(s.address),
    P.THREAD_TASK_LIST: _task_list,
    P.INTERPRETER_TASK_LIST: lambda s: ("the task list of interpreter %s (tasks of exited threads)"
                                        % _hex(s.number)),
    P.TASK_NODE: lambda s: "task list node at " + _hex(s.address),
    P.TASK_REGISTRY: lambda s: "task registry",
    P.ASYNCIO_MODULE_STATE: lambda s: "_asyncio's module state at " + _hex(s.address),
    P.EVENT_LOOP: lambda s: "the loop of " + s.name,
    P.MODULE: lambda s: "module " + s.name,
    P.ATTRIBUTE: lambda s: s.name,
    P.SYS_MODULES: lambda s: "sys.modules of interpreter " + _hex(s.address) if s.address else "sys.modules",
    P.CONDITION: lambda s: "Condition at " + _hex(s.address),
    P.THREAD: lambda s: "LWP %d" % s.number,
    P.THREAD_STATE: lambda s: "thread state at " + _hex(s.address),
    P.INTERPRETER: lambda s: "interpreter at " + _hex(s.address),
    P.FUNCTION: lambda s: s.name or "a function at " + _hex(s.address),
    P.MUTEX: lambda s: "mutex at " + _hex(s.address) if s.address else "mutex",
    P.CONDITION_VARIABLE: lambda s: "condition variable at " + _hex(s.address) if s.address else "condition variable",
    P.GIL_OBJECT: lambda s: _hex(s.address),
}

# What a step's part is, as a noun: what a thing is not (not-a), a chain of them (loops, stopped-after).
_NOUNS = {
    P.STR: "str object", P.BYTES: "bytes object", P.CODE_OBJECT: "code object", P.INSTANCE_DICT: "dict",
    P.SEQUENCE: "list or tuple", P.RLOCK: "RLock", P.CONDITION: "Condition", P.THREAD_STATE: "thread state",
    P.TASK_NODE: "_asyncio.Task's task_node", P.DICT_KEYS: "dict keys object", P.BUFFERED_IO: "buffered I/O object",
}
_PLURALS = {P.TASK_NODE: "task list nodes", P.THREAD_STATE: "thread states", P.MUTEX: "mutexes",
            P.CONDITION_VARIABLE: "condition variables", P.FUNCTION: "functions"}
_LAYOUTS = {P.OBJECT: "object ", P.LOCK: "lock object ", P.ASYNCIO_MODULE_STATE: "asyncio "}


def _step(s):
    words = _STEPS.get(s.part)
    return words(s) if words else "%s %s" % (s.part, _hex(s.address))   # a part a newer pyhang knows


def _noun(part):
    return _NOUNS.get(part, part)


def _a(noun):
    return ("an " if noun[:1] in "aeiouAEIOU_" else "a ") + noun


def _value(p):
    """`name number` of what is implausible, invalid or unsupported ("length 5"), or name alone."""
    return " ".join(str(x) for x in (p.name, p.number) if x not in ("", None))


def _not_found(p, last, before):
    if last.part == P.LOCK:
        if p.at:
            return ("futex %s is in none of the %d Python lock objects the innermost %d frames reference"
                    % (_hex(p.at), p.number or 0, p.limit))
        return "no futex address, and no Python lock object on the innermost frames"
    if before and before.part == P.THREAD:
        what = "Python thread state" if last.part == P.THREAD_STATE else "Python %ss" % _noun(last.part)
        return "thread %d has no %s" % (before.number, what)
    if last.part == P.SYS_MODULES:
        return "main interpreter not found: no sys.modules"
    if last.part == P.TASK_REGISTRY and before:
        return "%s has no task registry (_all_tasks, _scheduled_tasks)" % before.name
    return _step(last) + " not found"


_LISTS = (P.THREAD_TASK_LIST, P.INTERPRETER_TASK_LIST)


def _loops(p, last, steps):
    """A chain of `last`'s links that loops: a task list by its name, any other chain as one."""
    if steps and p.path[-2].part in _LISTS:
        return "%s loops at %s" % (": ".join(steps), _hex(p.at))
    return ": ".join(steps + ["%s chain loops at %s" % (_noun(last.part), _hex(p.at))])


def _stopped(p, last, steps):
    words = "stopped after %d %s" % (p.limit, _PLURALS.get(last.part, _noun(last.part) + "s"))
    if steps and p.path[-2].part in _LISTS:
        return "%s %s" % (": ".join(steps), words)
    return ": ".join(steps + [words])


# Why, in words: a function of (problem, its last step).  Those in _WHOLE (of the words of the steps before
# the last too) make the whole sentence.
_WHOLE = {W.LOOPS: _loops, W.STOPPED_AFTER: _stopped}
_WHY = {
    W.UNREADABLE: lambda p, last: _step(last) + " unreadable",
    W.PARTLY_UNREADABLE: lambda p, last: _step(last) + " partly unreadable",
    W.IMPLAUSIBLE: lambda p, last: (
        "local '%s' holds an implausible pointer %s" % (last.name, _hex(last.address)) if last.part == P.VARIABLE
        else "%s: %s implausible" % (_step(last), _value(p)) if p.name else _step(last) + " implausible"),
    W.INVALID: lambda p, last: "%s: %s invalid" % (_step(last), _value(p)),
    W.INCONSISTENT: lambda p, last: "%s: state inconsistent (ascii with kind %s)" % (_step(last), p.number),
    W.NOT_READY: lambda p, last: "%s: legacy str not ready (wstr only)" % _step(last),
    W.NOT_A: lambda p, last: "%s is not %s%s" % (_hex(last.address), _a(_noun(last.part)),
                                                 " (%s)" % p.name if p.name else ""),
    W.NO_KEY: lambda p, last: "no key '%s'%s" % (p.name, " in dict " + _hex(last.address) if last.address else ""),
    W.NOT_IMPORTED: lambda p, last: "module %s is not imported" % p.name,
    W.NO_LENGTH: lambda p, last: "no length for a %s object" % (p.name or "?"),
    W.NO_INSTANCE_DICT: lambda p, last: (
        "no instance dict in " if p.number == 1 else "no instance dict at a fixed offset in ") + _hex(last.address),
    W.TOO_MANY_DIGITS: lambda p, last: "%s has %s digits: more than %d read" % (_step(last), p.number, p.limit),
    W.TOO_LARGE: lambda p, last: "%s does not fit 64 bits%s" % (
        _step(last), " (%d digits)" % p.number if p.number is not None else ""),
    W.WIDE_DIGIT: lambda p, last: "%s has a digit wider than %d bits" % (_step(last), p.limit),
    W.UNSUPPORTED: lambda p, last: "%s: %s unsupported" % (_step(last), _value(p)),
    W.NO_FRAME: lambda p, last: _step(last) + ": no frame",
    W.OWNER_NO_THREAD: lambda p, last: "%s owner pthread_t %s is no thread of this process" % (
        _noun(last.part), _hex(p.at)),
    W.AWAITS_ITSELF: lambda p, last: _step(last) + " awaits itself",
    W.NO_TASK_TYPE: lambda p, last: (
        "%s has no Task type where the %s row says: tasks that are no asyncio.Task not read" % (_step(last), p.name)),
    W.UNDECODABLE: lambda p, last: "cannot decode %s at +%s%s" % (
        _step(last), p.number, " (code truncated)" if p.limit else ""),
    W.NOT_WRITABLE: lambda p, last: "%s is not a writable static of the object" % _step(last),
    W.MUTEX_AND_CONDITION_VARIABLE: lambda p, last: "%s used both as a mutex and as a condition variable" % _step(last),
    W.OVERLAPS: lambda p, last: "overlapping objects at %s and %s" % (_hex(last.address), _hex(p.at)),
    W.AMBIGUOUS: lambda p, last: "several candidates for one " + _noun(last.part).replace("-", " "),
    W.MORE_THAN_EXPECTED: lambda p, last: "%s more %s than expected; ignored" % (
        p.number, _PLURALS.get(last.part, _noun(last.part) + "s")),
}


def _pathless(p):
    """A problem whose path is empty (or whose words need none of it)."""
    if p.why == W.NO_PYTHON_STATE:
        return "no Python state (%s)" % p.name
    if p.why == W.NOT_COLLECTED:
        return "not collected"
    if p.why == W.READ_LIMIT:
        return ("read limit reached at " + _hex(p.at)) if p.at else "read limit of %d reads reached" % p.limit
    if p.why == W.NO_LAYOUT:
        what = _LAYOUTS.get(p.path[-1].part, "") if p.path else ""
        if p.path and p.path[-1].address:
            return _step(p.path[-1]) + ": no layout"
        return "no %slayout for CPython %s" % (what, p.name or "?")
    return None


def _sentence(p):
    pathless = _pathless(p)
    if pathless is not None or not p.path:
        return pathless or p.why
    last, steps = p.path[-1], [_step(s) for s in p.path[:-1]]
    if p.why in _WHOLE:
        return _WHOLE[p.why](p, last, steps)
    if p.why == W.NOT_FOUND:
        before = p.path[-2] if len(p.path) > 1 else None
        words = _not_found(p, last, before)
        if before is not None and before.part in (P.THREAD, P.MODULE):
            steps = steps[:-1]
    else:
        words = _WHY[p.why](p, last) if p.why in _WHY else "%s: %s" % (_step(last), p.why)
    return ": ".join(steps + [words])


def unread_text(problem):
    """A problem field in one line: None for none, else a ReadProblem (or its data) in words; a list of them
    (a thread's states in several interpreters) joined."""
    if isinstance(problem, list):
        return "; ".join(t for t in map(unread_text, problem) if t) or None
    p = read_problem(problem)
    if p is None:
        return None
    text = _sentence(p)
    if p.count > 1:
        text += " (%d frames with unreadable code in all)" % p.count
    return text
