"""The code's layers depend one way: gdbext → python → native.  Inside the
pyhang package: model depends on nothing else of pyhang, render on model
only, analysis on model only; nothing in pyhang imports gdb
or pyhang_gdb; the analysis, the renderers, the model and the library
lists import no compiled module, so that a saved snapshot or report is
analysed by any Python 3 (`pyhang merge`, `pyhang report --snapshot`)."""
import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def imports(path):
    """Every module `path` imports, at its top or inside a function."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def modules(package_dir):
    for path in glob.glob(os.path.join(ROOT, package_dir, "**", "*.py"), recursive=True):
        yield os.path.relpath(path, ROOT), set(imports(path))


def offending(package_dir, allowed):
    """(file, import) pairs of pyhang/pyhang_gdb/gdb imports not in `allowed`."""
    out = []
    for path, names in modules(package_dir):
        for name in names:
            top = name.split(".")[0]
            if top in ("gdb", "pyhang_gdb") or name.startswith("pyhang."):
                if not any(name == a or name.startswith(a + ".") for a in allowed):
                    out.append((path, name))
    return sorted(out)


def test_pyhang_never_imports_gdb_or_the_gdb_side():
    assert offending("python/pyhang", ("pyhang",)) == []


def test_model_depends_on_nothing_else_of_pyhang():
    assert offending("python/pyhang/model", ("pyhang.model",)) == []


def test_render_depends_on_the_model_only():
    assert offending("python/pyhang/render", ("pyhang.model", "pyhang.render", "pyhang.libraries")) == []


def test_analysis_writes_no_sentence_and_depends_on_the_model_only():
    allowed = ("pyhang.model", "pyhang.analysis", "pyhang.libraries")
    assert offending("python/pyhang/analysis", allowed) == []


def test_analysis_render_model_and_library_lists_never_import_the_native_module():
    paths = [p for d in ("analysis", "render", "model") for p in
             glob.glob(os.path.join(ROOT, "python", "pyhang", d, "**", "*.py"), recursive=True)]
    paths.append(os.path.join(ROOT, "python", "pyhang", "libraries.py"))
    assert len(paths) > 30
    assert [os.path.relpath(p, ROOT) for p in paths if "_pyhang_native" in imports(p)] == []


def test_each_gdb_command_module_imports_no_other_command_module():
    for path, names in modules("gdbext/pyhang_gdb/commands"):
        if path.endswith("__init__.py"):
            continue
        others = [n for n in names if n.startswith("pyhang_gdb.commands.") and n != "pyhang_gdb.commands.base"]
        assert others == [], path
