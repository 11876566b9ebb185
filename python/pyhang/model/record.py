"""`record`: the part of dataclasses.dataclass the model uses, at a fraction
of its cost.  Every gdb that sources pyhang defines the model's classes, and
dataclasses costs about as much as the rest of loading pyhang: importing it
imports inspect, ast and dis, and each class it makes runs three generated
functions through the compiler.

    @record
    class Edge:
        waiter: int
        owners: list[int] = field(default_factory=list)

A record class gets an __init__ taking its annotated fields in order
(positional or by keyword; a field with a default or a default_factory may be
left out), and __repr__ and __eq__ over those fields, as dataclass gives
them; like a dataclass with eq, it is not hashable; a __post_init__ the class
defines runs last, as a dataclass's does.  `record(frozen=True)`
forbids assigning a field after __init__ and makes instances hashable by
their fields.  No inheritance between records, no other options: the model
needs none.  A record has a slot per field and no instance dict (dataclass's
slots=True): only its fields can be set.

`to_data(r)` and `from_data(cls, data)` turn a record into JSON's types and
back, once, at the model's edges (a collector's answer, a snapshot): a field
whose value is a record (or a list of them) names its class in the record's
`__nested__` ({"lock": GlibcLock}); keys a record does not have are left out
(data written by a newer pyhang), fields the data lacks take their default;
a field whose value is a dict of records by key names their class in
`__nested_maps__`.  A field named in the record's `__optional__` ({name: a
test of the record}) is one the data carries only at times (a verdict's
facts: `moved` after a second look): to_data() leaves it out while the
test, given the record, is true.  `fields_of(r)` is the record's own dict
of the fields to_data() keeps, its values as they are (a renderer's, which
words some of them).

A record class's __init__ is compiled when its first instance is made, from
the build's cache of them (`CACHE`, written by pyhang.model.record_cache
when the package is staged) where it has it: a run makes instances of a few
dozen of the model's classes, and compiling each costs about 0.5 ms.  A run
from a source tree, which the build did not stage, keeps what it compiled
(`keep_compiled`, as Python keeps its modules' bytecode): the next run
compiles none of them again.
"""
import marshal
import os
import sys
from collections.abc import Sequence

_MISSING = object()
# The source of every record class's __init__ made so far (record_cache compiles them at build time).
MADE = []
# Where the build keeps those __init__s compiled ({source: its code, marshal'd}, marshal'd for this Python):
# the package's own bytecode cache, next to the modules' .pyc.  Each code object is kept marshal'd on its own
# so that loading the cache makes none of them: a run makes instances of a third of the classes.
CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__",
                     "record_inits.%s.marshal" % sys.implementation.cache_tag)
_compiled = None
# What this run compiled that the cache did not hold ({source: its code, marshal'd}): keep_compiled writes it.
_new = {}
# At most this many __init__s in a cache a run adds to (a source tree's whose records changed keeps
# the old ones too): past it, the run writes only what it made.
_CACHE_MAX = 4096
_LEAVES = (str, int, float, bool, type(None))
_LEAF_TYPES = frozenset(_LEAVES)


class field:  # noqa: N801 (named as dataclasses' field)
    """A field whose default is made per instance: field(default_factory=list)."""
    __slots__ = ("default_factory",)

    def __init__(self, default_factory):
        self.default_factory = default_factory


def _repr(self):
    return "%s(%s)" % (type(self).__qualname__,
                       ", ".join("%s=%r" % (name, getattr(self, name)) for name in self.__record_fields__))


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    return all(getattr(self, name) == getattr(other, name) for name in self.__record_fields__)


def _frozen_setattr(self, name, value):
    raise AttributeError("cannot assign to field %r of a frozen %s" % (name, type(self).__qualname__))


def _frozen_hash(self):
    return hash(tuple(getattr(self, name) for name in self.__record_fields__))


def _make(cls, frozen):
    names = list(cls.__dict__.get("__annotations__", {}))
    params, body, env = [], [], {"_MISSING": _MISSING}
    me = "self" if "self" not in names else "_record"   # (an edge's facts have a field named self)
    for name in names:
        default = cls.__dict__.get(name, _MISSING)
        if default is _MISSING:
            if any("=" in p for p in params):
                raise TypeError("%s: field %s without a default follows one with a default" % (cls.__name__, name))
            params.append(name)
            value = name
        elif isinstance(default, field):
            env["_factory_" + name] = default.default_factory
            params.append("%s=_MISSING" % name)
            value = "_factory_%s() if %s is _MISSING else %s" % (name, name, name)
            delattr(cls, name)
        else:
            env["_default_" + name] = default
            params.append("%s=_default_%s" % (name, name))
            value = name
        body.append(("object.__setattr__(%s, %r, %s)" if frozen else "%s.%s = %s") % (me, name, value))
    if "__post_init__" in cls.__dict__:   # as a dataclass: called last, with every field set
        body.append("%s.__post_init__()" % me)
    cls = _slotted(cls, names)
    source = "def __init__(%s, %s):\n    %s\n" % (me, ", ".join(params), "\n    ".join(body or ["pass"]))
    MADE.append(source)
    cls.__init__ = _first_init(cls, source, env)
    cls.__record_fields__ = tuple(names)
    cls.__record_names__ = frozenset(names)
    # what from_data() converts, looked up once here rather than per record it makes
    cls.__record_nested__ = tuple(cls.__dict__.get("__nested__", {}).items())
    cls.__record_maps__ = tuple(cls.__dict__.get("__nested_maps__", {}).items())
    cls.__record_omit__ = tuple(cls.__dict__.get("__optional__", {}).items())
    cls.__match_args__ = tuple(names)
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr
    if "__eq__" not in cls.__dict__:
        cls.__eq__ = _eq
    if frozen:
        cls.__setattr__ = _frozen_setattr
        cls.__hash__ = _frozen_hash
    else:
        cls.__hash__ = None
    return cls


def _slotted(cls, names):
    """`cls` made again with a slot for each field and no instance dict (a class's defaults are its
    __init__'s, not class attributes): a report of a thousand threads holds tens of thousands of records, and a
    dict per instance (every instance of a class of more than 30 fields has one of its own) is most of
    their memory."""
    namespace = {k: v for k, v in cls.__dict__.items() if k not in names and k not in ("__dict__", "__weakref__")}
    namespace["__slots__"] = tuple(names)
    return type(cls)(cls.__name__, cls.__bases__, namespace)


def _first_init(cls, source, env):
    """An __init__ that compiles the class's own from `source` when the first
    instance is made, and leaves that in its place: compiling costs most of
    making a record class, and most classes a run defines make no instance."""
    def __init__(*args, **kwargs):   # (the instance is args[0]: a field may be named self)
        exec(_code(source), env)  # noqa: S102 (the source is made from the class's own field names)
        init = env["__init__"]
        init.__qualname__ = cls.__qualname__ + ".__init__"
        cls.__init__ = init
        init(*args, **kwargs)
    __init__.__qualname__ = cls.__qualname__ + ".__init__"
    return __init__


def _code(source):
    """`source` compiled: from the build's cache (CACHE) or what an earlier run kept (keep_compiled) when it
    holds it, else compiled here."""
    global _compiled
    if _compiled is None:
        _compiled = {}
        for path in dict.fromkeys([CACHE, _kept_path()]):
            try:
                with open(path, "rb") as f:
                    held = marshal.load(f)
            except (OSError, EOFError, ValueError, TypeError):   # none (a source tree's first run), or damaged
                continue
            if isinstance(held, dict):
                _compiled = held
                break
    code = _compiled.get(source)
    if isinstance(code, bytes):   # kept marshal'd: only the __init__s a run makes an instance of are loaded
        try:
            code = marshal.loads(code)
        except (EOFError, ValueError, TypeError):   # damaged
            code = None
    if code is None:
        code = compile(source, "<record>", "exec")
        _new[source] = marshal.dumps(code)
    return code


def _kept_path():
    """Where a run keeps the __init__s it compiled: CACHE, or its place under
    PYTHONPYCACHEPREFIX (as Python places a module's bytecode there)."""
    if not sys.pycache_prefix:
        return CACHE
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(sys.pycache_prefix, here.lstrip(os.sep), os.path.basename(CACHE))


def keep_compiled():
    """Writes the __init__s this run compiled, with those the cache held, to the cache (its place under
    PYTHONPYCACHEPREFIX when that is set), unless Python writes no bytecode (PYTHONDONTWRITEBYTECODE, -B);
    a directory it cannot write to is left as it is.  The command line calls it as it ends."""
    if not _new or sys.dont_write_bytecode:
        return
    kept = dict(_compiled or {})
    if len(kept) + len(_new) > _CACHE_MAX:
        made = set(MADE)
        kept = {s: c for s, c in kept.items() if s in made}
    kept.update(_new)
    path = _kept_path()
    partial = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(partial, "wb") as f:
            marshal.dump(kept, f)
        os.replace(partial, path)
    except OSError:
        try:
            os.unlink(partial)
        except OSError:
            pass
        return
    _new.clear()


def record(cls=None, *, frozen=False):
    """Make `cls` a record (see the module's doc): @record or @record(frozen=True)."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)


def to_data(value):
    """`value` (a record, or lists, dicts and other sequences of them) as JSON's types."""
    kind = type(value)
    if kind in _LEAF_TYPES:   # most values: the leaves, answered before anything is looked up
        return value
    fields = getattr(kind, "__record_fields__", None)
    if fields is not None:
        omit = kind.__record_omit__
        if omit:
            left_out = {name for name, test in omit if test(value)}
            return {name: to_data(getattr(value, name)) for name in fields if name not in left_out}
        return {name: to_data(getattr(value, name)) for name in fields}
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {k: to_data(v) for k, v in value.items()}
    if not isinstance(value, _LEAVES) and isinstance(value, Sequence):   # made when asked for (a native sequence)
        return [to_data(v) for v in value]
    return value


def fields_of(value):
    """Record `value`'s fields as to_data() keeps them ({name: value}, in field order), the values unconverted."""
    omit = type(value).__record_omit__
    left_out = {name for name, test in omit if test(value)} if omit else ()
    return {name: getattr(value, name) for name in value.__record_fields__ if name not in left_out}


def from_data(cls, data):
    """The record of class `cls` that to_data() made `data` from; None for None; `data` itself when it is
    one of `cls` already."""
    if data is None or data.__class__ is cls:   # (the native module's answers are records already)
        return data
    names = cls.__record_names__
    # a collector's answer, per thread: its keys are most often the record's own (checked in C)
    kwargs = dict(data) if names.issuperset(data) else {k: v for k, v in data.items() if k in names}
    for name, inner in cls.__record_nested__:
        value = kwargs.get(name)
        if value is not None:
            kwargs[name] = [from_data(inner, v) for v in value] if isinstance(value, list) else from_data(inner, value)
    for name, inner in cls.__record_maps__:
        value = kwargs.get(name)
        if value is not None:
            kwargs[name] = {k: from_data(inner, v) for k, v in value.items()}
    return cls(**kwargs)


def replace(value, **changes):
    """A copy of record `value` with the fields `changes` names given new values (dataclasses.replace)."""
    unknown = set(changes) - value.__record_names__
    if unknown:
        raise TypeError("%s has no field %s" % (type(value).__qualname__, ", ".join(sorted(unknown))))
    return type(value)(**{name: changes[name] if name in changes else getattr(value, name)
                          for name in value.__record_fields__})
