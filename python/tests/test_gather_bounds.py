"""The collection's searches of other threads' frames are bounded in total,
not only per thread: a process of thousands of threads gets fewer frames a
thread searched for the connections one of them may hold (the SQLite busy
handler's holder, a pool's, a database's), never sixteen of each."""
from types import SimpleNamespace

from pyhang.analysis import gather


class View:
    """A PythonView of `n` threads, each `depth` frames deep."""

    def __init__(self, n, depth):
        self.n, self.depth = n, depth

    def frames(self, tid):
        return [SimpleNamespace(frame=tid * 1000 + i, code=1, function="f", file="app.py", line=i)
                for i in range(self.depth)]


def test_a_few_threads_have_their_sixteen_innermost_frames_searched():
    threads = [SimpleNamespace(tid=t) for t in range(1, 11)]
    found = gather._searched_frames(View(10, 50), threads)
    assert len(found) == 10 * gather.CONNECTION_FRAMES
    assert [f.line for t, f in found if t.tid == 1] == list(range(gather.CONNECTION_FRAMES))


def test_a_thousand_threads_are_searched_within_the_total_and_every_thread_still_is():
    for n in (1000, 4000):
        threads = [SimpleNamespace(tid=t) for t in range(1, n + 1)]
        found = gather._searched_frames(View(n, 50), threads)
        per_thread = max(gather.CONNECTION_FRAMES_LEAST, gather.CONNECTION_FRAMES_TOTAL // n)
        assert len(found) == n * per_thread <= max(gather.CONNECTION_FRAMES_TOTAL, n * gather.CONNECTION_FRAMES_LEAST)
        assert {t.tid for t, _ in found} == {t.tid for t in threads}   # each thread's innermost frames, at least
