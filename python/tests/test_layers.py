"""The code's layers depend one way: gdbext → python → native.  Inside the
pyhang package: model depends on nothing else of pyhang, render on model
only, analysis on model only; nothing in pyhang imports gdb
or pyhang_gdb; the analysis, the renderers, the model and the library
lists import no compiled module, so that a saved snapshot or report is
analysed by any Python 3 (`pyhang merge`, `pyhang report --snapshot`).  No
module imports itself through others, not even by an import inside a
function (which hides the cycle until the order of imports changes)."""
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


def test_analysis_depends_on_the_model_only():
    allowed = ("pyhang.model", "pyhang.analysis", "pyhang.libraries")
    assert offending("python/pyhang/analysis", allowed) == []


def test_analysis_render_model_and_library_lists_never_import_the_native_module():
    paths = [p for d in ("analysis", "render", "model") for p in
             glob.glob(os.path.join(ROOT, "python", "pyhang", d, "**", "*.py"), recursive=True)]
    paths.append(os.path.join(ROOT, "python", "pyhang", "libraries.py"))
    assert len(paths) > 30
    assert [os.path.relpath(p, ROOT) for p in paths if "_pyhang_native" in imports(p)] == []


SENTENCE_WORDS = 4   # "cannot be read (%s)": four words are a phrase someone reads


def sentences(source, path="<string>"):
    """(line, text) of the string constants in `source` that read as words
    for people: SENTENCE_WORDS or more words (placeholders such as %s and an
    f-string's fields count).  Docstrings, dict keys and format specs are
    not; identifiers, paths and patterns are one word each."""
    tree = ast.parse(source, path)
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body and \
                isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))
        elif isinstance(node, ast.Dict):
            skip.update(id(k) for k in node.keys if k is not None)
        elif isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            skip.update(id(n) for n in ast.walk(node.format_spec))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            words = sum(len(v.value.split()) if isinstance(v, ast.Constant) else 1 for v in node.values)
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            skip.update(id(v) for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            words, text = len(node.value.split()), node.value
        else:
            continue
        if words >= SENTENCE_WORDS:
            out.append((node.lineno, text))
    return sorted(out)


def test_the_sentence_scan_tells_sentences_from_data():
    source = '''"""A module docstring of many words."""
def f(x):
    """A docstring of many words."""
    d = {"a key of many words": 1, "kind": "py-join", "re": r"^python(\\d+)?$"}
    g(f"{x:>{width} d}", "/usr/lib/python3.11/threading.py", "sched_get_priority_max")
    return "cannot be read (%s)" % x, f"waits for {x} to exit"
'''
    assert sentences(source) == [(6, "cannot be read (%s)"), (6, "waits for {} to exit")]


def test_analysis_writes_no_sentence():
    """The analysis returns data (kinds, addresses, names, facts); the
    renderer words it (pyhang.render), so that the text and the JSON say
    one thing one way, and the words can change without the analysis."""
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "python", "pyhang", "analysis", "*.py"))):
        found += ["%s:%d: %r" % (os.path.relpath(path, ROOT), line, text)
                  for line, text in sentences(open(path).read(), path)]
    assert found == [], "sentences in the analysis:\n" + "\n".join(found)


def test_each_gdb_command_module_imports_no_other_command_module():
    for path, names in modules("gdbext/pyhang_gdb/commands"):
        if path.endswith("__init__.py"):
            continue
        others = [n for n in names if n.startswith("pyhang_gdb.commands.") and n != "pyhang_gdb.commands.base"]
        assert others == [], path


def module_graph():
    """Each module of pyhang and pyhang_gdb → the modules of the two it
    imports anywhere in its text (inside functions too).  `from P import N`
    imports the module P.N where there is one, else P.  A package's
    __init__ is the package's name; the implicit import of a module's
    parent packages is not an edge (it cannot make a cycle of its own)."""
    files = {}
    for top, package in (("python", "pyhang"), ("gdbext", "pyhang_gdb")):
        for path in glob.glob(os.path.join(ROOT, top, package, "**", "*.py"), recursive=True):
            name = os.path.relpath(path, os.path.join(ROOT, top))[:-len(".py")].replace(os.sep, ".")
            files[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    graph = {}
    for name, path in files.items():
        edges = set()
        for node in ast.walk(ast.parse(open(path).read(), path)):
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name in files)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    sub = node.module + "." + a.name
                    if sub in files:
                        edges.add(sub)
                    elif node.module in files:
                        edges.add(node.module)
        edges.discard(name)
        graph[name] = sorted(edges)
    return graph


def find_cycle(graph):
    """One import cycle as [a, b, ..., a], or None: a depth-first search
    that meets a module still on its own path."""
    on_path, done = [], set()

    def visit(name):
        on_path.append(name)
        for other in graph[name]:
            if other in on_path:
                return on_path[on_path.index(other):] + [other]
            if other not in done:
                cycle = visit(other)
                if cycle:
                    return cycle
        on_path.pop()
        done.add(name)
        return None

    for name in sorted(graph):
        if name not in done:
            cycle = visit(name)
            if cycle:
                return cycle
    return None


def test_the_cycle_finder_finds_a_cycle_hidden_in_a_function():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"], "d": []}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b"], "b": [], "c": ["a", "b"]}) is None


def test_the_module_graph_sees_imports_inside_functions():
    graph = module_graph()
    assert "pyhang.processes" in graph["pyhang.cli"]  # imported inside report_tree
    assert "pyhang.processes" in graph["pyhang_gdb.commands.report"]  # imported inside tree


def test_no_module_of_pyhang_or_pyhang_gdb_imports_itself_through_others():
    cycle = find_cycle(module_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
