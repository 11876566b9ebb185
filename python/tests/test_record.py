"""pyhang.model.record: the dataclass subset the model is built with."""
import pytest

from pyhang.model.record import field, from_data, record, replace, to_data
from pyhang.model.report import Hazard


@record
class Point:
    x: int
    y: int = 0
    tags: list = field(default_factory=list)


@record(frozen=True)
class Key:
    name: str
    arity: tuple = ()


def test_init_takes_fields_in_order_by_position_or_keyword_with_defaults():
    p = Point(1, 2, ["a"])
    assert (p.x, p.y, p.tags) == (1, 2, ["a"])
    q = Point(x=3)
    assert (q.x, q.y, q.tags) == (3, 0, [])
    with pytest.raises(TypeError):
        Point()


def test_default_factory_gives_each_instance_its_own_value():
    a, b = Point(1), Point(2)
    a.tags.append("only a")
    assert b.tags == []


def test_repr_and_eq_over_the_fields_like_a_dataclass():
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=[])"
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(1, 3)
    assert Point(1) != (1, 0, [])


def test_mutable_records_are_not_hashable_and_frozen_ones_are_and_refuse_assignment():
    with pytest.raises(TypeError):
        hash(Point(1))
    assert hash(Key("a", (1,))) == hash(Key("a", (1,)))
    with pytest.raises(AttributeError):
        Key("a").name = "b"


def test_a_field_without_default_after_one_with_a_default_is_refused():
    with pytest.raises(TypeError):
        @record
        class Bad:
            a: int = 0
            b: int


def test_replace_gives_a_copy_with_the_fields_named_changed_and_leaves_the_record_as_it_was():
    p = Point(1, 2, ["a"])
    q = replace(p, y=5)
    assert q == Point(1, 5, ["a"]) and p == Point(1, 2, ["a"])
    assert replace(Key("k"), arity=(1,)) == Key("k", (1,))
    with pytest.raises(TypeError):
        replace(p, z=1)


def test_a_sentence_where_a_record_is_expected_is_not_read():
    @record
    class Found:
        name: str = ""

    @record
    class Lock:
        found: Found | None = None

        __nested__ = {"found": Found}

    # (what the first pyhang's snapshots held where the records are now: refused, as damaged data)
    with pytest.raises(AttributeError):
        from_data(Lock, {"found": "symbol of libc"})
    assert from_data(Lock, {"found": None}) == Lock()


def test_a_record_class_compiles_its_init_at_its_first_instance_and_keeps_it():
    @record
    class Late:
        a: int
        b: list = field(default_factory=list)
    first_init = Late.__init__
    one = Late(1)
    # the compiled __init__ replaced the one that compiled it; later instances use it directly
    assert Late.__init__ is not first_init and Late.__init__.__qualname__.endswith("Late.__init__")
    two = Late(2, b=[3])
    assert (one.a, one.b, two.a, two.b) == (1, [], 2, [3])
    with pytest.raises(TypeError):
        Late()   # a field without a default is still required, first instance or not


def test_the_build_compiles_every_model_record_init_ahead_and_a_class_takes_it_from_there():
    import os
    import subprocess
    import sys
    build = os.environ.get("PYHANG_BUILD_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "build")
    # GIVEN the package as the build staged it (with its cache of compiled __init__s)
    check = """if True:
        import marshal
        from pyhang.model import record, report, waits
        with open(record.CACHE, "rb") as f:
            cached = marshal.load(f)
        # every record the model's modules made is there, and a record's first instance takes that code
        assert record.MADE and set(record.MADE) <= set(cached), sorted(set(record.MADE) - set(cached))[:2]
        source = record.MADE[0]
        # each kept marshal'd on its own (loading the cache makes no code object), made when first needed
        assert all(isinstance(code, bytes) for code in cached.values())
        assert record._compiled[source] == cached[source] and record._code(source) == marshal.loads(cached[source])
        print(record.CACHE)
    """
    out = subprocess.run([sys.executable, "-S", "-c", check], env=dict(os.environ, PYTHONPATH=os.path.join(build, "python")),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # THEN it holds them all, from the staged package's own bytecode cache
    assert out.returncode == 0, out.stderr
    assert os.path.realpath(out.stdout.strip()).startswith(os.path.realpath(os.path.join(build, "python")))


def test_a_run_from_a_source_tree_keeps_what_it_compiled_for_the_next_and_writes_nothing_without_bytecode(tmp_path):
    import os
    import subprocess
    import sys
    import shutil
    # (a copy: the checkout's own package may hold a cache a user's run from it kept)
    source_tree = str(tmp_path / "src")
    shutil.copytree(os.path.join(os.path.dirname(__file__), "..", "pyhang"), os.path.join(source_tree, "pyhang"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    run = """if True:
        import sys
        from pyhang.model import record
        record._code(record.MADE[0])          # the first instance of a record class
        print(len(record._compiled), len(record._new))
        record.keep_compiled()              # as the command line does when it ends
    """
    def once(**env):
        out = subprocess.run([sys.executable, "-S", "-c", run], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict({k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                                      PYTHONPATH=source_tree, PYTHONPYCACHEPREFIX=str(tmp_path / "pyc"), **env))
        assert out.returncode == 0, out.stderr
        return [int(x) for x in out.stdout.split()]
    # GIVEN a source tree (no cache the build staged), bytecode written under PYTHONPYCACHEPREFIX
    # WHEN a run that writes no bytecode runs: THEN it compiles and keeps nothing
    held, compiled = once(PYTHONDONTWRITEBYTECODE="1")
    assert held == 0 and compiled >= 1
    assert not list((tmp_path / "pyc").rglob("record_inits.*"))
    # WHEN a run compiles an __init__: THEN it keeps it, under the prefix, and the next run compiles none
    assert once() == [0, compiled]
    (kept,) = (tmp_path / "pyc").rglob("record_inits.*")
    assert once() == [compiled, 0]
    # AND a damaged cache is read as none, then written again
    kept.write_bytes(b"not marshal")
    assert once() == [0, compiled] and once() == [compiled, 0]


def test_post_init_runs_last_with_every_field_set_as_a_dataclasses_does():
    @record
    class Sorted:
        threads: list
        name: str = "x"

        def __post_init__(self):
            self.threads = sorted(self.threads) + [self.name]

    assert Sorted([3, 1, 2], name="n").threads == [1, 2, 3, "n"]
    assert Hazard(kind="k", threads=[9, 4], confidence="likely", variant="").threads == [4, 9]


def test_a_record_holds_its_fields_in_slots_and_takes_no_other_attribute():
    @record
    class Wide:
        a: int
        b: list = field(default_factory=list)
        c: str = "c"

    w = Wide(1)
    assert (w.a, w.b, w.c) == (1, [], "c") and Wide.__slots__ == ("a", "b", "c")
    assert not hasattr(w, "__dict__")
    w.c = "d"   # a field is set as before
    with pytest.raises(AttributeError):
        w.other = 1
    assert Wide(2, c="x") == Wide(2, [], "x") and replace(w, a=5).a == 5
