"""The DOT renderer on synthetic reports: labels are escaped, a cycle's
edges are red, a likely edge is dashed, a wait whose owner is unknown ends
in a note rather than on a thread."""
import shutil
import subprocess

import pytest

from pyhang.model.kinds import OwnerSource, WaitKind
from pyhang.model.report import BlockedOn, Deadlock, Edge, Report, TargetInfo, ThreadReport
from pyhang.render.dot import quoted, report_dot


def report():
    r = Report(target=TargetInfo(kind="live", pid=10))
    r.threads = [ThreadReport(tid=11, gdb_num=1, name='say "hi"\\'),
                 ThreadReport(tid=12, gdb_num=2, name="b"),
                 ThreadReport(tid=13, gdb_num=3, name="c")]
    r.threads[0].blocked_on = BlockedOn(kind=WaitKind.MUTEX, address=0x20, owners=[12],
                                        owner_source=OwnerSource.LOCK_WORD)
    r.threads[1].blocked_on = BlockedOn(kind=WaitKind.MUTEX, address=0x10, owners=[11],
                                        owner_source=OwnerSource.LOCK_WORD)
    r.threads[2].blocked_on = BlockedOn(kind=WaitKind.FUTEX, address=0x30, owners=[],
                                        owner_source=OwnerSource.UNKNOWN)
    r.edges = [Edge(waiter=11, owner=12, kind=WaitKind.MUTEX, address=0x20, source=OwnerSource.LOCK_WORD),
               Edge(waiter=12, owner=11, kind=WaitKind.MUTEX, address=0x10, source=OwnerSource.LOCK_WORD)]
    r.deadlocks = [Deadlock(threads=[11, 12], confidence="certain", edges=list(r.edges))]
    return r


def test_quoting_escapes_quotes_backslashes_and_newlines():
    assert quoted('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'


def test_a_cycle_is_red_and_an_unknown_owner_is_a_note():
    text = report_dot(report())
    assert text.count("#c0392b") >= 4   # two edges and the two boxes in the cycle
    assert 'p10_t13 -> p10_unknown1' in text and "owner unknown" in text
    assert "p10_t13 -> p10_t" not in text


def test_a_heuristic_edge_is_dashed():
    r = report()
    r.edges[0].source = OwnerSource.HEURISTIC
    line = next(l for l in report_dot(r).splitlines() if "p10_t11 -> p10_t12" in l)
    assert "style=dashed" in line


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz is not installed")
def test_dot_parses_what_the_renderer_writes():
    r = subprocess.run(["dot", "-Tsvg"], input=report_dot(report()).encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    assert r.returncode == 0 and b"<svg" in r.stdout, r.stderr


def test_a_native_lock_with_no_variable_naming_it_is_labelled_with_its_elf_symbol():
    r = report()
    r.threads[0].blocked_on.symbol = "drv_lock"
    line = next(l for l in report_dot(r).splitlines() if "p10_t11 -> p10_t12" in l)
    assert "mutex 0x20\\n(drv_lock)" in line, line


def test_every_verdict_and_hazard_kind_has_a_title_for_its_box():
    from pyhang.model.kinds import HazardKind, VerdictKind
    from pyhang.render.dot import FINDING_TITLES
    from pyhang.render.forks import HAZARD_TITLES
    from pyhang.render.verdicts import HANG_SUMMARIES

    def kinds(cls):
        return [v for k, v in vars(cls).items() if k.isupper() and isinstance(v, str)]
    assert [k for k in kinds(VerdictKind) if k not in HANG_SUMMARIES and k not in FINDING_TITLES] == []
    assert [k for k in kinds(HazardKind) if k not in HAZARD_TITLES] == []


def test_a_finding_is_a_box_linked_to_each_thread_it_names_and_replaces_its_owner_unknown_note():
    from pyhang.model.kinds import VerdictKind
    from pyhang.model.report import Verdict
    r = report()
    r.verdicts = [Verdict(kind=VerdictKind.OWNERS_UNKNOWN, threads=[13],
                          facts={"waits": [{"tid": 13, "kind": WaitKind.FUTEX, "address": 0x30, "name": None}]})]
    text = report_dot(r)
    assert "p10_f0 [label=\"Waits on objects whose owner pyhang cannot name" in text, text
    assert "p10_t13 -> p10_f0 [style=dotted" in text and "p10_unknown" not in text, text
