"""The vocabularies the Python side names (pyhang.model.kinds) are the
native library's name tables where both speak of the same thing: a value
one side produces is never unknown to the other."""
import _pyhang_native as native

from pyhang.model import glibc_kinds, kinds, live_kinds


def texts(native_enum):
    return {m.text for m in native_enum.__members__.values()} - {""}


def values(python_kinds):
    return {v for k, v in vars(python_kinds).items() if k.isupper() and isinstance(v, str)}


def test_owner_sources_are_the_native_name_table():
    assert values(kinds.OwnerSource) == texts(native.OwnerSource)


def test_confidences_are_the_native_name_table():
    assert values(kinds.Confidence) == texts(native.Confidence)


def test_python_statuses_the_analysis_names_are_native_statuses():
    assert values(kinds.PythonStatus) <= texts(native.Status)


def test_every_native_wait_kind_and_python_lock_kind_has_a_python_name():
    assert texts(native.WaitKind) | texts(native.PyLockKind) <= values(kinds.WaitKind)


def test_local_kinds_are_the_native_name_table():
    assert values(kinds.LocalKind) == texts(native.LocalKind)


def test_future_states_are_the_native_name_table():
    assert values(kinds.FutureState) == texts(native.FutureState)
    assert values(kinds.LockFound) == texts(native.LockFound)
    assert values(kinds.ForkProblem) == texts(native.ForkProblem)
    assert values(kinds.PyLockFound) == texts(native.PyLockFound)
    assert values(kinds.LayoutBasis) == texts(native.LayoutBasis)


def test_glibc_decoders_problem_and_score_kinds_are_the_native_name_tables():
    assert values(glibc_kinds.LockProblem) == texts(native.LockProblem)
    assert values(glibc_kinds.ScoreReason) == texts(native.ScoreReason)
    assert values(glibc_kinds.LockEvidence) == texts(native.LockEvidence)
    assert values(glibc_kinds.IdentifyProblem) == texts(native.IdentifyProblem)
    assert values(glibc_kinds.LayoutsProblem) == texts(native.LayoutsProblem)
    assert values(glibc_kinds.DescriptorCheck) == texts(native.DescriptorCheck)
    assert values(glibc_kinds.ThreadListProblem) == texts(native.ThreadListProblem)
    assert values(glibc_kinds.DescriptorsProblem) == texts(native.DescriptorsProblem)


def test_park_states_are_the_native_name_table():
    assert values(live_kinds.ParkState) == texts(native.ParkState)


def test_stop_problems_and_unwind_stops_are_the_native_name_tables():
    assert values(live_kinds.StopProblem) == texts(native.StopProblem)
    assert values(live_kinds.UnwindStop) == texts(native.Stop)
