"""pyhang's settings, as gdb parameters (`set pyhang ...`, `show pyhang ...`).

  set pyhang unwinder native|gdb   who unwinds native stacks: pyhang's .eh_frame
                                   unwinder where it can (gdb where it cannot), or
                                   gdb's own unwinder always (to compare the two)
  set pyhang reader auto|gdb       who reads target memory: pyhang itself (/proc,
                                   the core file) where it can, or always through gdb
  set pyhang frame-filter on|off   whether `bt` shows the Python frames each evaluation-loop
                                   frame runs (pyhang_gdb/frame_filter.py)
  set pyhang native-depth N        native frames per thread in reports; 0 (the
                                   default) is automatic: a few, and more for
                                   blocked threads whose lock owner is guessed
  show pyhang                      every setting

The environment variables PYHANG_UNWIND=gdb, PYHANG_READER=gdb,
PYHANG_NATIVE_DEPTH=N and PYHANG_FRAME_FILTER=off set the initial values, for scripts that cannot type gdb
commands first.
"""
import os

import gdb


class _Prefix(gdb.Command):
    def __init__(self, name, doc):
        self.__doc__ = doc
        super().__init__(name, gdb.COMMAND_DATA, prefix=True)


class _ShowAll(_Prefix):
    """`show pyhang`: every setting, one a line."""

    def invoke(self, arg, from_tty):
        for p in _PARAMETERS.values():
            print(p.shown())


class _Setting(gdb.Parameter):
    """One `set pyhang NAME` parameter of gdb type `kind` (extra: the enum's choices)."""

    def __init__(self, name, kind, initial, doc, show, *extra):
        self.__doc__ = doc
        self.set_doc = doc
        self.show_doc = show
        super().__init__(name, gdb.COMMAND_DATA, kind, *extra)
        self.value = initial

    def get_set_string(self):
        return ""

    def get_show_string(self, value):
        # gdb hands the value as text ("on", "0"): said from the value itself,
        # so that `show pyhang NAME` and `show pyhang` say the same
        return self.shown()

    def shown(self):
        return "%s is %s." % (self.show_doc, self.value_text(self.value))

    def value_text(self, value):
        return str(value)


class _Choice(_Setting):
    def __init__(self, name, choices, initial, doc, show):
        super().__init__(name, gdb.PARAM_ENUM, initial, doc, show, list(choices))


class _Switch(_Setting):
    def __init__(self, name, initial, doc, show):
        super().__init__(name, gdb.PARAM_BOOLEAN, initial, doc, show)

    def value_text(self, value):
        # Python's bool; gdb's own switches say on/off, as `set` takes them
        return "on" if value else "off"


class _Count(_Setting):
    def __init__(self, name, initial, doc, show):
        super().__init__(name, gdb.PARAM_ZUINTEGER, initial, doc, show)

    def value_text(self, value):
        return str(value) if value else "0 (automatic: more for blocked threads whose lock owner is guessed)"


_PARAMETERS = {}
_ENV = {"unwinder": "PYHANG_UNWIND", "reader": "PYHANG_READER", "native-depth": "PYHANG_NATIVE_DEPTH",
        "frame-filter": "PYHANG_FRAME_FILTER"}
_DEFAULT = {"unwinder": "native", "reader": "auto", "native-depth": 0, "frame-filter": True}


def _initial(name):
    """A setting's value before anyone types `set pyhang`: from its
    environment variable where that holds a valid value."""
    env = os.environ.get(_ENV[name])
    if name == "native-depth":
        return int(env) if env and env.isdigit() else 0
    if name == "frame-filter":
        return env != "off"
    return "gdb" if env == "gdb" else _DEFAULT[name]


def register():
    if _PARAMETERS:
        return
    _Prefix("set pyhang", "pyhang's settings.")
    _ShowAll("show pyhang", "pyhang's settings.")
    _PARAMETERS["unwinder"] = _Choice(
        "pyhang unwinder", ("native", "gdb"), _initial("unwinder"),
        "Who unwinds native stacks: pyhang's unwinder where it can (native), or gdb's always (gdb).",
        "The native stack unwinder pyhang uses")
    _PARAMETERS["reader"] = _Choice(
        "pyhang reader", ("auto", "gdb"), _initial("reader"),
        "Who reads target memory: pyhang itself where it can (auto), or gdb always (gdb).",
        "The target memory reader pyhang uses")
    _PARAMETERS["native-depth"] = _Count(
        "pyhang native-depth", _initial("native-depth"),
        "Native frames per thread in reports (0: automatic, more for blocked threads whose lock owner is guessed).",
        "Native frames per thread")
    _PARAMETERS["frame-filter"] = _Switch(
        "pyhang frame-filter", _initial("frame-filter"),
        "Whether backtraces show, at each evaluation-loop frame, the Python frames it runs.",
        "Python frames in backtraces")


def value(name):
    """The current value of a setting (its initial value before register())."""
    p = _PARAMETERS.get(name)
    if p is not None:
        return p.value
    return _initial(name)
