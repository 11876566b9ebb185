"""torch.distributed collectives without gdb, on synthetic frames and
reports: a thread in a c10d collective sleeping as work.wait() does waits
for the other ranks, with the rank and world size its frames hold and never
one they do not; gloo's worker in its transport waits for them too; ranks
of a tree waiting in different collectives name the diverged one, and ranks
that agree name none."""
import json

import harness
from pyhang.analysis import collectives, tree as tree_analysis
from pyhang.model.kinds import Confidence, GilState, OwnerSource, VerdictKind, WaitKind
from pyhang.model.report import BlockedOn, NativeFrame, Report, TargetInfo, ThreadReport
from pyhang.model.tree import ProcessEntry, TreeReport
from pyhang.render.locks import summary
from pyhang.render.tree import render_tree_text, tree_json
from pyhang.model.python_facts import PyFrameFacts
from pyhang.model.python_values import FrameLocals, LocalValue
from pyhang.model.record import replace

C10D = "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"


def frames(collective="all_reduce"):
    return [PyFrameFacts(function=collective, file=C10D, line=1541, frame=1, code=2),
            PyFrameFacts(function="run", file="/job/train.py", line=53, frame=3, code=4),
            PyFrameFacts(function="_wrap", file="/torch/multiprocessing/spawn.py", line=69, frame=5, code=6)]


def local(name, type_, repr_):
    return LocalValue(name=name, kind="local", type=type_, repr=repr_, address=1)


def answers(rank="1", world_size="3", pg="torch._C._distributed_c10d.ProcessGroupGloo"):
    return [FrameLocals(locals=[local("tensor", "Tensor", "<Tensor object at 0x1>"), local("group", "NoneType", "None"),
                                local("default_pg", pg, "<ProcessGroupGloo object at 0x2>")]),
            FrameLocals(locals=[local("rank", "int", rank), local("world_size", "int", world_size)]),
            FrameLocals(locals=[local("i", "int", "7")])]


def condvar():
    return BlockedOn(kind=WaitKind.CONDVAR, address=0x1000, confidence=Confidence.CERTAIN)


def test_the_rank_and_world_size_are_read_from_the_frames_outward_with_where_they_were_read():
    c = collectives.describe(frames(), answers())
    assert (c.function, c.backend, c.group_type, c.rank, c.world_size) == \
        ("all_reduce", "gloo", "ProcessGroupGloo", 1, 3)
    assert c.read_from["rank"]["function"] == "run" and c.read_from["world_size"]["line"] == 53


def test_a_rank_that_is_no_rank_of_that_world_or_no_int_is_not_given():
    assert collectives.describe(frames(), answers(rank="5")).rank is None
    c = collectives.describe(frames(), answers(rank="'a'"))
    assert c.rank is None and c.world_size == 3
    assert collectives.describe(frames(), answers(pg="torch._C._distributed_c10d.ProcessGroup")).backend is None


def test_a_collective_sleeping_on_a_condition_variable_waits_for_the_other_ranks():
    c = collectives.describe(frames(), answers())
    b = collectives.collective_wait(condvar(), frames(), c)
    assert (b.kind, b.owners, b.owner_source, b.confidence) == \
        (WaitKind.COLLECTIVE, [], OwnerSource.OTHER_RANKS, Confidence.LIKELY)
    assert summary(b, str) == ("waits for the other ranks in torch.distributed's all_reduce (gloo; rank 1 of 3; "
                               "rank and world size from the locals of run): they are other processes [likely]")
    # without the locals read, the collective is still named, nothing else
    assert summary(collectives.collective_wait(condvar(), frames("barrier"), None), str) == \
        "waits for the other ranks in torch.distributed's barrier: they are other processes [likely]"


def test_other_waits_and_other_frames_are_left_as_they_are():
    mutex = BlockedOn(kind=WaitKind.MUTEX, address=0x1000)
    assert collectives.collective_wait(mutex, frames(), None) is mutex
    elsewhere = [replace(frames()[0], file="/job/distributed_c10d_copy.py")]
    b = condvar()
    assert collectives.collective_wait(b, elsewhere, None) is b
    assert collectives.collective_wait(b, [replace(frames()[0], function="get_rank")], None) is b


def test_the_gloo_worker_waiting_in_its_transport_waits_for_the_other_ranks():
    native = [NativeFrame(pc=1, function="pthread_cond_clockwait", library="/lib/libc.so.6"),
              NativeFrame(pc=2, function="gloo::transport::tcp::UnboundBuffer::waitRecv(int*, "
                                         "std::chrono::duration<long, std::ratio<1l, 1000l> >)",
                          library="/usr/lib/libgloo.so.0")]
    b = collectives.collective_wait(condvar(), [], None, native)
    assert b.kind == WaitKind.COLLECTIVE and b.collective.transport == "gloo::transport::tcp::UnboundBuffer::waitRecv"
    other = [native[0], NativeFrame(pc=2, function="gloo::transport::tcp::Loop::run()", library="/usr/lib/libgloo.so")]
    assert collectives.collective_wait(condvar(), [], None, other).kind == WaitKind.CONDVAR


def rank_process(pid, rank, function, world_size=3):
    detail = collectives.describe(frames(function), answers(rank=str(rank) if rank is not None else "None",
                                                            world_size=str(world_size)))
    detail.native_wait = "condvar"
    b = BlockedOn(kind=WaitKind.COLLECTIVE, owner_source=OwnerSource.OTHER_RANKS, confidence=Confidence.LIKELY,
                  collective=detail)
    t = ThreadReport(tid=pid, gdb_num=1, gil=GilState.RELEASED, blocked_on=b)
    report = Report(target=TargetInfo(kind="live", pid=pid, parent_pid=100, python_version="3.11.2"), threads=[t])
    return ProcessEntry(pid=pid, parent_pid=100, report=report, comm="python3")


def tree(*ranks):
    return tree_analysis.analyse(TreeReport(root_pid=100, processes=list(ranks)))


def test_the_tree_names_the_rank_that_waits_in_another_collective_first():
    t = tree(rank_process(201, 1, "all_reduce"), rank_process(200, 0, "barrier"), rank_process(202, 2, "all_reduce"))
    ((pid, v),) = t.verdicts
    assert (pid, v.kind, v.threads, v.facts.odd, v.facts.world_size) == \
        (200, VerdictKind.COLLECTIVE_MISMATCH, [200], [200], 3)
    doc = harness.validated_tree(json.loads(json.dumps(tree_json(t))))
    assert doc["headline"] == ("Hung without a deadlock: rank 0 (PID 200) waits in barrier while ranks 1, 2 "
                               "(PIDs 201, 202) wait in all_reduce.")
    assert doc["exit_status"] == 5
    assert "Ranks diverged: the ranks of one torch.distributed job wait" in render_tree_text(t)


def test_two_ranks_that_disagree_name_no_odd_one_and_ranks_not_read_are_named_by_pid():
    ((_, v),) = tree(rank_process(200, None, "barrier"), rank_process(201, None, "all_reduce")).verdicts
    assert v.facts.odd == []
    doc = tree_json(tree(rank_process(200, None, "barrier"), rank_process(201, None, "all_reduce")))
    assert doc["headline"] == "Hung without a deadlock: PID 200 waits in barrier while PID 201 waits in all_reduce."


def test_ranks_that_wait_in_the_same_collective_are_no_mismatch():
    assert tree(rank_process(200, 0, "all_reduce"), rank_process(201, 1, "all_reduce")).verdicts == []
