"""The JSON of each tree edge's facts (model.tree_edge_facts), key for key and
in order beside the edge's own, as the analysis wrote them before they were
records: a field that is None is left out, and an edge of a kind with no
facts carries only its own keys."""
import json

from test_tree import holder, pipe_read, process, syscall_thread
from pyhang.analysis import tree as tree_analysis
from pyhang.model.files import FdObject, FileLock
from pyhang.model.kinds import OwnerSource, WaitKind
from pyhang.model.report import Edge
from pyhang.model.tree import TreeEdge, TreeReport
from pyhang.model.tree_edge_facts import ChildExitFacts, FdPeerFacts, FileLockFacts, ProcessEdgeFacts
from pyhang.render.tree import _edge_json

OWN = '"waiter": %d, "waiter_pid": %d, "owner": %d, "owner_pid": %d, "kind": "%s", "confidence": "%s"'


def _edges(*processes):
    """The tree's edges, each as the JSON text the tree's report carries."""
    edges, _ = tree_analysis.graph(TreeReport(root_pid=100, processes=list(processes)))
    return [json.dumps(_edge_json(None, e)) for e in edges], edges


def test_a_wait_for_a_child_carries_its_call_and_the_child_after_the_edges_own_keys():
    # Given a parent in wait4 for its child 200
    texts, edges = _edges(process(100, 1, syscall_thread(100, "wait4", child=200)),
                          process(200, 100, pipe_read(200, [holder(300)])))
    # When the tree's graph is made
    (child,) = [t for t, e in zip(texts, edges) if e.kind == "child-exit"]
    # Then its edge's facts are a ChildExitFacts, in the JSON as the call then the child
    assert [type(e.facts) for e in edges if e.kind == "child-exit"] == [ChildExitFacts]
    assert child == "{%s, %s}" % (OWN % (100, 100, 200, 200, "child-exit", "certain"),
                                  '"syscall": "wait4", "child": 200')


def test_a_pipe_read_carries_the_fd_link_direction_and_the_holders_fds_of_the_other_end():
    # Given a reader of a pipe whose other end process 100 holds on fds 4 and 6
    texts, edges = _edges(process(100, 1, syscall_thread(100, "wait4", child=200)),
                          process(200, 100, pipe_read(200, [holder(100, fds=(4, 6))], link="pipe:[9]")))
    # When the tree's graph is made
    (pipe,) = [t for t, e in zip(texts, edges) if e.kind == "pipe-other-end"]
    # Then its facts are an FdPeerFacts, the holder's fds its own list
    assert [type(e.facts) for e in edges if e.kind == "pipe-other-end"] == [FdPeerFacts]
    assert pipe == "{%s, %s}" % (OWN % (200, 200, 100, 100, "pipe-other-end", "certain"),
                                 '"syscall": "read", "fd": 3, "link": "pipe:[9]", "direction": "read", '
                                 '"holder_fds": [4, 6]')


def test_a_file_lock_wait_carries_the_path_and_leaves_out_what_is_not_known():
    # Given a flock on a file of no known path that process 100 holds the lock of
    texts, edges = _edges(process(100, 1, syscall_thread(100, "wait4", child=200)),
                          process(200, 100, syscall_thread(200, "flock", fd=5, object=FdObject(kind="file"),
                                                           lock_holders=[FileLock(pid=100)])))
    # When the tree's graph is made
    (lock,) = [t for t, e in zip(texts, edges) if e.kind == "file-lock"]
    # Then its facts are a FileLockFacts whose path, None, the JSON leaves out
    (facts,) = [e.facts for e in edges if e.kind == "file-lock"]
    assert facts == FileLockFacts(syscall="flock", fd=5, path=None)
    assert lock == "{%s, %s}" % (OWN % (200, 200, 100, 100, "file-lock", "certain"), '"syscall": "flock", "fd": 5')


def test_a_report_edge_within_a_process_carries_its_address_and_how_its_owner_was_found():
    # Given a process whose report has a join edge from thread 2 to thread 3
    p = process(100, 1, syscall_thread(2, "futex"), syscall_thread(3, "futex"))
    p.report.edges = [Edge(waiter=2, owner=3, kind=WaitKind.PY_JOIN, address=0x10, source=OwnerSource.THREAD_TID)]
    # When the tree's graph is made
    texts, edges = _edges(p)
    # Then it is a ProcessEdgeFacts, in the JSON as the address then the source
    assert [e.facts for e in edges] == [ProcessEdgeFacts(address=0x10, source=OwnerSource.THREAD_TID)]
    assert texts == ["{%s, %s}" % (OWN % (2, 100, 3, 100, "py-join", "certain"),
                                   '"address": 16, "source": "%s"' % OwnerSource.THREAD_TID)]


def test_an_edge_of_a_kind_without_facts_carries_only_its_own_keys():
    # Given a work-giver edge, made with no facts
    edge = TreeEdge(waiter=(100, 1), owner=(100, 2), kind="work-giver", confidence="likely")
    # When its JSON is written
    text = json.dumps(_edge_json(None, edge))
    # Then its facts are None and the JSON is the edge's own keys alone
    assert edge.facts is None
    assert text == "{%s}" % (OWN % (1, 100, 2, 100, "work-giver", "likely"))
