"""pyhang's settings, as gdb parameters (`set pyhang ...`, `show pyhang ...`).

  set pyhang unwinder native|gdb   who unwinds native stacks: pyhang's .eh_frame
                                   unwinder where it can (gdb where it cannot), or
                                   gdb's own unwinder always (to compare the two)
  set pyhang reader auto|gdb       who reads target memory: pyhang itself (/proc,
                                   the core file) where it can, or always through gdb
  set pyhang frame-filter on|off   whether `bt` shows the Python frames each evaluation-loop
                                   frame runs (pyhang_gdb/frame_filter.py)

The environment variables PYHANG_UNWIND=gdb and PYHANG_READER=gdb set the
initial values, for scripts that cannot type gdb commands first.
"""
import os

import gdb


class _Prefix(gdb.Command):
    def __init__(self, name, doc):
        self.__doc__ = doc
        super().__init__(name, gdb.COMMAND_DATA, prefix=True)


class _Choice(gdb.Parameter):
    def __init__(self, name, choices, initial, doc, show):
        self.__doc__ = doc
        self.set_doc = doc
        self.show_doc = show
        super().__init__(name, gdb.COMMAND_DATA, gdb.PARAM_ENUM, list(choices))
        self.value = initial

    def get_set_string(self):
        return ""

    def get_show_string(self, value):
        return "%s is %s." % (self.show_doc, value)


class _Switch(gdb.Parameter):
    def __init__(self, name, initial, doc, show):
        self.__doc__ = doc
        self.set_doc = doc
        self.show_doc = show
        super().__init__(name, gdb.COMMAND_DATA, gdb.PARAM_BOOLEAN)
        self.value = initial

    def get_set_string(self):
        return ""

    def get_show_string(self, value):
        return "%s is %s." % (self.show_doc, value)


_PARAMETERS = {}


def register():
    if _PARAMETERS:
        return
    _Prefix("set pyhang", "pyhang's settings.")
    _Prefix("show pyhang", "pyhang's settings.")
    _PARAMETERS["unwinder"] = _Choice(
        "pyhang unwinder", ("native", "gdb"), "gdb" if os.environ.get("PYHANG_UNWIND") == "gdb" else "native",
        "Who unwinds native stacks: pyhang's unwinder where it can (native), or gdb's always (gdb).",
        "The native stack unwinder pyhang uses")
    _PARAMETERS["reader"] = _Choice(
        "pyhang reader", ("auto", "gdb"), "gdb" if os.environ.get("PYHANG_READER") == "gdb" else "auto",
        "Who reads target memory: pyhang itself where it can (auto), or gdb always (gdb).",
        "The target memory reader pyhang uses")
    _PARAMETERS["frame-filter"] = _Switch(
        "pyhang frame-filter", os.environ.get("PYHANG_FRAME_FILTER") != "off",
        "Whether backtraces show, at each evaluation-loop frame, the Python frames it runs.",
        "Python frames in backtraces")


def value(name):
    """The current value of a setting (its initial value before register())."""
    p = _PARAMETERS.get(name)
    if p is not None:
        return p.value
    if name == "frame-filter":
        return os.environ.get("PYHANG_FRAME_FILTER") != "off"
    env = {"unwinder": "PYHANG_UNWIND", "reader": "PYHANG_READER"}[name]
    return "gdb" if os.environ.get(env) == "gdb" else {"unwinder": "native", "reader": "auto"}[name]
