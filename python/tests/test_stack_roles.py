"""Where a thread is in its program beyond its frames: a frame runs a signal handler when its two arguments are a signal's number and a frame (as the
interpreter calls a handler): anything else, garbage included, is no handler; a self-wait in a handler
is worded with the handler, its signal and the frame it interrupted; the main thread past
threading._shutdown runs the exit."""
from pyhang.analysis.gather import signal_handler
from pyhang.model.python_values import FrameLocals, LocalValue
from pyhang.render.names import python_frame_line
from pyhang.model.report import PythonFrame


def arg(name, type, repr):
    return LocalValue(name=name, kind="argument", type=type, repr=repr)


def test_an_int_that_is_a_signal_and_a_frame_make_a_handler():
    assert signal_handler(FrameLocals(locals=[arg("signum", "int", "10"), arg("frame", "frame", "<frame>")])) == 10
    assert signal_handler(FrameLocals(locals=[arg("s", "int", "64"), arg("f", "frame", "<frame>"),
                                              arg("extra", "str", "'x'")])) == 64


def test_other_arguments_locals_out_of_range_numbers_and_garbage_make_none():
    for locals in ([arg("signum", "int", "10")],                                     # one argument
                   [arg("a", "int", "10"), arg("b", "int", "3")],                    # no frame
                   [arg("a", "int", "0"), arg("b", "frame", "<frame>")],             # no signal 0
                   [arg("a", "int", "65"), arg("b", "frame", "<frame>")],
                   [arg("a", "int", "ten"), arg("b", "frame", "<frame>")],           # a repr that is no number
                   [arg("a", "int", None), arg("b", "frame", "<frame>")],
                   [LocalValue(name="a", kind="local", type="int", repr="10"),       # locals, not arguments
                    LocalValue(name="b", kind="local", type="frame", repr="<frame>")],
                   []):
        assert signal_handler(FrameLocals(locals=locals)) is None, locals
    assert signal_handler(None) is None


def test_a_handler_frame_says_its_signal_by_name_and_an_unnamed_one_by_number():
    f = PythonFrame("on_signal", "/x.py", 3, signal=10)
    assert python_frame_line(f) == 'File "/x.py", line 3, in on_signal  [signal handler for signal 10 (SIGUSR1)]'
    assert python_frame_line(PythonFrame("h", "/x.py", 3, signal=40)).endswith("[signal handler for signal 40]")


def test_the_main_thread_past_threading_shutdown_runs_the_exit_and_no_other_thread_does():
    from pyhang.analysis.threading import exiting
    from pyhang.model.kinds import ExitPath
    from pyhang.model.report import Report, TargetInfo, ThreadReport
    from pyhang.model.threading_facts import ThreadingState

    def report(*outer):
        main = ThreadReport(tid=7, gdb_num=1, python_frames=[PythonFrame("join", "/q.py", 1)] +
                            [PythonFrame(f, "/x.py", 2) for f in outer])
        other = ThreadReport(tid=8, gdb_num=2, python_frames=[PythonFrame("run", "/t.py", 3)])
        return Report(target=TargetInfo(kind="live", pid=7), threads=[main, other])

    for outer, state, want in (
            (["flush"], True, ExitPath.ATEXIT),                         # called by the exit, module code done
            (["<module>"], True, None),                                 # still under module code (a fork child)
            (["flush"], False, None), (["flush"], None, None)):         # not exiting, or not read
        r = report(*outer)
        exiting(r, ThreadingState(imported=True, shutting_down=state))
        assert [t.exiting for t in r.threads] == [want, None], (outer, state)
    r = report()
    r.threads[0].python_frames.append(PythonFrame("_shutdown", "/usr/lib/python3.11/threading.py", 1589))
    exiting(r, ThreadingState(imported=True, shutting_down=True))
    assert r.threads[0].exiting == ExitPath.THREADING_SHUTDOWN
    exiting(report(), None)   # no threading state: nothing said, nothing raised
