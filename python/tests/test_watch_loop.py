"""`pyhang watch`'s loop (pyhang.watch.run) on synthetic looks and a clock
of its own: a report only once the process stood still `after` seconds, the
report's problem ends the watch with its status, a report that accounts for
every thread lets it go on and the next comes only after the process moved,
the process's end and --for end it with 0; and the lines it writes."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
from pyhang import watch  # noqa: E402
from pyhang.model.kinds import ExitStatus  # noqa: E402
from pyhang.model.live_kinds import WatchEnd  # noqa: E402
from pyhang.render import watch as words  # noqa: E402


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now

    def sleep(self, s):
        assert s >= 0
        self.now += s


class Looks:
    """Looks from a script: one state per look (equal states are still), None when the process is gone;
    each look costs `cost` seconds of the clock."""

    def __init__(self, clock, states, cost=0.0):
        self.clock, self.states, self.cost, self.taken = clock, list(states), cost, []

    def look(self):
        self.clock.now += self.cost
        state = self.states.pop(0) if self.states else self.taken[-1]
        self.taken.append(state)
        return state

    @staticmethod
    def same(a, b):
        return a == b


def watched(states, statuses, interval=1.0, after=3.0, limit=None, cost=0.0):
    clock = Clock()
    looks = Looks(clock, states, cost)
    reports, went_on = [], []

    def report():
        reports.append((clock(), len(looks.taken)))
        return statuses.pop(0)

    outcome = watch.run(looks, report, interval, after, limit=limit, clock=clock, sleep=clock.sleep,
                        on_report=lambda status, still: went_on.append(still))
    return outcome, reports, went_on, looks


def test_a_process_still_for_after_seconds_gets_its_report_and_its_problem_ends_the_watch():
    # GIVEN a process that moves for three looks, then stands still
    outcome, reports, went_on, _ = watched(["a", "b", "c"] + ["d"] * 10, [ExitStatus.DEADLOCK])
    # THEN one report, taken at the look 3 s after the still state was first seen, ends it with its status
    assert (outcome.end, outcome.status, outcome.reports) == (WatchEnd.PROBLEM, ExitStatus.DEADLOCK, 1)
    assert reports == [(106.0, 7)] and outcome.still == 3.0 and went_on == []


def test_a_report_that_accounts_for_every_thread_lets_the_watch_go_on_until_it_moves_and_stands_still_again():
    # GIVEN a process still (idle: its report is OK), then moving, then still again (this time hung)
    states = ["idle"] * 6 + ["busy-1", "busy-2"] + ["stuck"] * 6
    outcome, reports, went_on, looks = watched(states, [ExitStatus.OK, ExitStatus.HUNG])
    # THEN the idle stretch got one report only, however long it stayed still, and the watch went on
    assert went_on == [3.0] and len(reports) == 2
    # AND the second report came 3 s into the second still stretch, and ended the watch with HUNG
    assert reports[1][1] == 6 + 2 + 4 and (outcome.end, outcome.status) == (WatchEnd.PROBLEM, ExitStatus.HUNG)


def test_a_process_that_ends_ends_the_watch_with_0_and_one_that_never_stands_still_gets_no_report():
    outcome, reports, _, _ = watched(["a", "b", "c", None], [])
    assert (outcome.end, outcome.status, outcome.reports, outcome.looks) == (WatchEnd.EXITED, ExitStatus.OK, 0, 4)
    assert reports == []
    # AND one gone at the first look is the same end, after one look
    outcome, _, _, _ = watched([None], [])
    assert (outcome.end, outcome.looks) == (WatchEnd.EXITED, 1)


def test_for_ends_the_watch_with_0_after_its_seconds_and_looks_keep_their_pace_whatever_a_look_costs():
    # GIVEN a process that moves at every look, each look costing 0.25 s of a 1 s interval
    states = ["s%d" % i for i in range(100)]
    outcome, reports, _, looks = watched(states, [], limit=10.0, cost=0.25)
    # THEN ten looks in its ten seconds (one a second, not one every 1.25 s), no report, status 0
    assert (outcome.end, outcome.status, reports) == (WatchEnd.LIMIT, ExitStatus.OK, [])
    assert outcome.looks == 11 and 10.0 <= outcome.seconds <= 10.5


def test_a_report_that_could_not_be_taken_ends_the_watch_as_not_read_with_its_failure_status():
    outcome, _, _, _ = watched(["x"] * 10, [ExitStatus.FAILED])
    assert (outcome.end, outcome.status) == (WatchEnd.NOT_READ, ExitStatus.FAILED)


def test_an_interrupt_ends_the_watch_as_the_users_end_with_its_counts():
    clock = Clock()

    class Interrupted(Looks):
        def look(self):
            if len(self.taken) == 3:
                raise KeyboardInterrupt
            return super().look()

    outcome = watch.run(Interrupted(clock, ["a", "b", "c"]), lambda: 0, 1.0, 3.0, clock=clock, sleep=clock.sleep)
    assert (outcome.end, outcome.status, outcome.looks) == (WatchEnd.INTERRUPTED, ExitStatus.OK, 3)


def test_every_end_has_its_line_and_the_lines_say_what_was_done():
    def line(end, **kw):
        return words.ended(1234, watch.WatchOutcome(end=end, status=kw.pop("status", 0), **kw), 5.0)
    assert {e for e in WatchEnd.ALL} == {WatchEnd.EXITED, WatchEnd.LIMIT, WatchEnd.PROBLEM, WatchEnd.NOT_READ,
                                           WatchEnd.INTERRUPTED}
    texts = {e: line(e, looks=3, reports=1, seconds=12.34, still=5.2) for e in WatchEnd.ALL}
    assert len(set(texts.values())) == len(WatchEnd.ALL)
    assert "stood still 5.2 s; its report (exit status 3)" in line(WatchEnd.PROBLEM, status=3, looks=3, reports=1,
                                                                     seconds=9, still=5.2)
    assert "ended; watched 12.3 s (3 looks, 1 report)" in texts[WatchEnd.EXITED]
    assert "no report named a problem" in texts[WatchEnd.LIMIT]
    assert "it never stood still 5 s, so no report was taken" in line(WatchEnd.LIMIT, looks=9, seconds=9)
    assert words.started(1234, 0.1, 5.0, None).startswith("pyhang: watching process 1234 every 0.1 s")
