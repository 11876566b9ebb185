#!/usr/bin/env python3
"""Writes python/_pyhang_native.pyi, the type stub of the native module,
from the module itself: every enum with its members, every class with its
methods and properties, every function, each with the signature and the
text pybind11 keeps in its docstring (the bindings' py::arg names and
descriptions).  The stub is never edited by hand:

    PYTHONPATH=build/python python3.11 python/tools/gen_stub.py > python/_pyhang_native.pyi

python/tests/test_interpreter.py checks the file is what this makes.
"""
import re
import sys

HEADER = '''"""Type stub of _pyhang_native, pyhang's native library as gdb's Python sees it.

Generated from the module by python/tools/gen_stub.py: do not edit.  A fact
crosses as the record of pyhang.model its table names (python/records.hpp;
record_tables() lists them: an `object` below is one of those records, as the
function's text says); its kinds ("kind", "confidence", "owner_source",
"status", ...) are the names of the enums below (their `.text`).
"""
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union, overload
import enum


class _Named(enum.Enum):
    @property
    def text(self) -> str:
        """The string the dicts carry for this member ("" for NONE)."""
        ...
'''

MODULE = "_pyhang_native."
_SIGNATURE = re.compile(r"^(?P<name>\w+)\((?P<params>.*)\)\s*->\s*(?P<ret>.+)$")


def _clean(text):
    """A type as the stub writes it: without the module's prefix or a C++
    namespace (a class bound under a name, returned before it was named)."""
    return re.sub(r"(?:\w+::|\(anonymous namespace\)::)+", "", text.replace(MODULE, ""))


def _params(params, self_type=None):
    """The parameter list of a pybind11 signature, defaults shown as `...`
    (pybind11 prints them as their repr, which is not always Python)."""
    out, depth, current = [], 0, ""
    for ch in params:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    cleaned = []
    for i, p in enumerate(out):
        name, _, rest = p.partition(":")
        annotation, eq, _default = rest.partition("=")
        if i == 0 and self_type is not None:
            cleaned.append("self")
            continue
        cleaned.append("%s: %s%s" % (name.strip(), _clean(annotation.strip()), " = ..." if eq else ""))
    return ", ".join(cleaned)


def _doc_lines(doc):
    """[(signature, prose)] of a pybind11 docstring: one each for an
    overloaded function, the prose of a signature being the lines after it."""
    found = []
    for line in (doc or "").strip().splitlines():
        body = re.sub(r"^\d+\.\s+", "", line.strip())
        if _SIGNATURE.match(body):
            found.append((body, []))
        elif found and line.strip() and "(*args, **kwargs)" not in line:
            found[-1][1].append(line.strip())
    return found


def _docstring(prose, indent):
    if not prose:
        return ""
    text = " ".join(prose).replace('"""', "'''").replace("\\", "\\\\")
    return '%s"""%s"""\n' % (indent, text)


def _function(name, doc, indent="", method=False, static=False):
    signatures = _doc_lines(doc)
    if not signatures:
        return "%sdef %s(%s*args: Any, **kwargs: Any) -> Any: ...\n" % (indent, name, "self, " if method else "")
    out = ""
    for sig, prose in signatures:
        m = _SIGNATURE.match(sig)
        params = _params(m.group("params"), self_type=True if method and not static else None)
        head = ""
        if len(signatures) > 1:
            head += "%s@overload\n" % indent
        if static:
            head += "%s@staticmethod\n" % indent
        body = _docstring(prose, indent + "    ")
        out += "%s%sdef %s(%s) -> %s:%s" % (head, indent, name, params, _clean(m.group("ret")),
                                          ("\n" + body + indent + "    ...\n") if body else " ...\n")
    return out


def _property(name, prop, indent):
    doc = (getattr(prop.fget, "__doc__", None) or "").strip()
    m = re.match(r"^\((?:self|arg0): [\w.]+\)\s*->\s*(.+)$", doc.splitlines()[0]) if doc else None
    # pybind11 keeps either the getter's signature or the property's description
    ret, prose = (_clean(m.group(1)), []) if m else ("Any", [line.strip() for line in doc.splitlines() if line.strip()])
    body = _docstring(prose, indent + "    ")
    return "%s@property\n%sdef %s(self) -> %s:%s" % (indent, indent, name, ret,
                                                     ("\n" + body + indent + "    ...\n") if body else " ...\n")


def _enum(name, cls):
    members = "".join("    %s = ...\n" % m for m in cls.__members__)
    return "class %s(_Named):\n%s" % (name, members)


def _class(name, cls):
    out = "class %s:\n" % name
    doc = cls.__doc__ if cls.__doc__ and not cls.__doc__.startswith(name) else None
    if doc:
        out += _docstring([doc.strip()], "    ")
    body = ""
    for attr, value in cls.__dict__.items():
        if attr.startswith("__") and attr not in ("__init__", "__len__", "__bool__", "__getitem__", "__iter__",
                                                  "__next__", "__eq__"):
            continue
        if attr.startswith("_") and not attr.startswith("__"):
            continue
        if isinstance(value, property):
            body += _property(attr, value, "    ")
        elif isinstance(value, staticmethod):
            body += _function(attr, value.__func__.__doc__, "    ", method=True, static=True)
        elif callable(value):
            body += _function(attr, value.__doc__, "    ", method=True)
    return out + (body or "    ...\n")


def stub(module):
    """The stub's text for `module`."""
    parts = [HEADER]
    names = sorted(n for n in dir(module) if not n.startswith("_"))
    enums = [n for n in names if hasattr(getattr(module, n), "__members__")]
    errors = [n for n in names if isinstance(getattr(module, n), type) and issubclass(getattr(module, n), Exception)]
    classes = [n for n in names if isinstance(getattr(module, n), type) and n not in enums and n not in errors]
    functions = [n for n in names if n not in enums and n not in errors and n not in classes]
    parts += [_enum(n, getattr(module, n)) for n in enums]
    parts += ["class %s(Exception):\n    reason: ErrorReason\n    path: str\n    number: int\n" % n for n in errors]
    parts += [_class(n, getattr(module, n)) for n in classes]
    parts += [_function(n, getattr(module, n).__doc__) for n in functions]
    return "\n\n".join(p.rstrip("\n") + "\n" for p in parts)


def main():
    import _pyhang_native
    sys.stdout.write(stub(_pyhang_native))


if __name__ == "__main__":
    main()
