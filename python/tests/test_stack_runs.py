"""native_facts.stack_runs: the live collectors read their threads' stacks ahead in runs the page cache
keeps whole (Target.batch_pages), every thread in order, none read ahead for a target with no cache."""
import pytest

pytest.importorskip("_pyhang_native")

from pyhang.native_facts import PAGE, STACK_PAGES, stack_runs  # noqa: E402


class Target:
    def __init__(self, batch_pages):
        self.pages, self.batches = batch_pages, []

    def batch_pages(self):
        return self.pages

    def prefetch(self, addresses):
        self.batches.append(list(addresses))


def test_each_run_reads_its_threads_stacks_first_and_no_more_pages_than_the_cache_keeps():
    threads = [(n, {"rsp": 0x10000 * n}) for n in range(1, 11)] + [(11, None), (12, {"rip": 1})]
    target = Target(batch_pages=4 * STACK_PAGES)
    runs = []
    for part in stack_runs(target, threads, lambda t: t[1]):
        runs.append([n for n, _ in part])
        # the run's stacks were read before it was handed out
        assert target.batches[-1] == [regs["rsp"] + k * PAGE for _, regs in part if regs and "rsp" in regs
                                      for k in range(STACK_PAGES)]
    assert sum(runs, []) == list(range(1, 13))          # every thread, in order
    assert all(len(r) <= 4 for r in runs) and len(runs) == 3
    assert all(len(b) <= target.pages for b in target.batches)


def test_a_target_with_no_cache_is_one_run_read_as_it_goes():
    target = Target(batch_pages=0)
    threads = [(n, {"rsp": 0x1000 * n}) for n in range(5)]
    assert list(stack_runs(target, threads, lambda t: t[1])) == [threads]
    assert target.batches == []
