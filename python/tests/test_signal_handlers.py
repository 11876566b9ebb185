"""A frame runs a signal handler when its two arguments are a signal's number and a frame (as the
interpreter calls a handler): anything else, garbage included, is no handler; a self-wait in a handler
is worded with the handler, its signal and the frame it interrupted."""
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
