"""Why gdb could not look at a target is decided on data, never on gdb's
words: the kind pyhang's side in gdb gives its failure (model.kinds.
CommandFailure: serve-facts' error reply, the `pyhang-failure:` line of a
command run for the command line), and what /proc says of the process
(its owner against ours, Yama's ptrace_scope, a tracer it has already).
The words the user reads stay the same."""
import argparse

from pyhang import gdb_batch, live_causes, procfs
from pyhang.model.kinds import CommandFailure
from pyhang.render import failures

PID = 4242


def target(pid=PID, core=None):
    return argparse.Namespace(pid=pid, core=core, executable=None, sysroot=None, lib_search_path=None)


def there(monkeypatch, owner=None, tracer=None):
    """Process PID is there (a live, running process), of `owner` ({"owner", "me"}: another user's), traced by
    `tracer`."""
    stat = {"state": "S", "start_ticks": 7, "ppid": 1}
    monkeypatch.setattr(procfs, "stat", lambda pid: stat if pid == PID else None)
    monkeypatch.setattr(live_causes, "permission", lambda pid: owner)
    monkeypatch.setattr(live_causes, "tracer", lambda pid: tracer)
    return stat


ANOTHER_USERS = {"owner": "root (uid 0)", "me": "nobody (uid 65534)"}
# What a gdb in another language says for EPERM: no English word pyhang could match.
LOCALISED = ["ptrace: Vorgang nicht zulässig."]


def test_a_gdb_that_could_not_attach_to_another_users_process_is_said_so_whatever_gdbs_language(monkeypatch):
    before = there(monkeypatch, owner=ANOTHER_USERS)
    f = gdb_batch._failed("no process or core file is loaded (use `gdb -p PID` or `gdb EXE CORE`)", LOCALISED,
                          target(), before, CommandFailure.NO_TARGET)
    assert f.message == failures.no_permission(PID, ANOTHER_USERS) and f.hint == failures.PTRACE_HINT
    assert f.details == LOCALISED


def test_a_process_traced_already_is_no_permission_problem(monkeypatch):
    before = there(monkeypatch, owner={"scope": 1}, tracer=99)
    f = gdb_batch._failed("no process or core file is loaded", LOCALISED, target(), before, CommandFailure.NO_TARGET)
    assert f.message == "gdb cannot attach to process %d" % PID and f.hint is None


def test_the_words_of_a_failure_decide_nothing_its_kind_does(monkeypatch):
    before = there(monkeypatch, owner=ANOTHER_USERS)
    # a failure of another kind whose words read as no target: said as it is, no hint
    f = gdb_batch._failed("no process or core file is loaded, says a message", ["ptrace: Operation not permitted."],
                          target(), before, CommandFailure.OTHER)
    assert f.message == "no process or core file is loaded, says a message" and f.hint is None
    # an older pyhang in gdb that gives no kind: the same
    assert gdb_batch._failed(f.message, f.details, target(), before).hint is None


def test_a_process_that_is_gone_is_said_so_with_its_hint_from_proc(monkeypatch):
    there(monkeypatch)
    f = gdb_batch._failed("no process or core file is loaded", ["ptrace: Keine Berechtigung."], target(pid=999999),
                          None, CommandFailure.NO_TARGET)
    assert f.message == gdb_batch.no_process(999999)
    assert f.hint == failures.no_process_hint(999999, live_causes.namespaced_as(999999))


def test_a_core_gdb_cannot_open_that_looks_whole_is_one_gdb_cannot_read(monkeypatch, tmp_path):
    monkeypatch.setattr(gdb_batch, "core_problem", lambda path: None)
    core = str(tmp_path / "core.1")
    f = gdb_batch._failed("no process or core file is loaded", ["\"/x\": nicht im Kernformat"], target(None, core),
                          None, CommandFailure.NO_TARGET)
    assert f.message == "gdb cannot open the core %s" % core and f.hint == "%s is not a core file gdb can read" % core


def test_a_command_run_for_the_command_line_gives_its_kind_on_a_line_gdbs_errors_leave_out():
    stderr = "ptrace: Operation not permitted.\n%sno-target\npyhang: no process or core file is loaded\n" % \
        gdb_batch.FAILURE_PREFIX
    assert gdb_batch._gdb_errors(stderr) == ["ptrace: Operation not permitted."]
    assert gdb_batch.gdb_env()[gdb_batch.FAILURE_KINDS_ENV] == "1"


def test_a_gdb_ended_for_its_time_is_said_so_by_that_fact_not_by_its_words():
    from pyhang.gdb_pipe import GdbEnded
    assert gdb_batch._ended(GdbEnded("any words", "", "", timed_out=True), target(), 30).message == \
        "gdb did not finish within 30 s"
    said = gdb_batch._ended(GdbEnded("gdb did not answer within the time given", "", ""), target(), 30)
    assert said.message == "gdb did not answer within the time given"
