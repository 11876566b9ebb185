"""Where a thread waits, by name: the function the program called into the
library it sleeps in, whether or not libc's static helpers below it are named."""
from pyhang.model.report import NativeFrame, entry_frame

LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
PY = "/usr/bin/python3.11"


def test_the_outermost_named_frame_of_the_innermost_library_is_the_entry():
    frames = [NativeFrame(1, "__lll_lock_wait", LIBC), NativeFrame(2, "pthread_mutex_lock", LIBC),
              NativeFrame(4, "take_lock", "/opt/libdriver.so")]
    assert entry_frame(frames).function == "pthread_mutex_lock"


def test_names_from_a_debug_file_do_not_change_the_entry():
    # libc6-dbg names the static helpers; the answer is the one without it
    frames = [NativeFrame(1, "__futex_abstimed_wait_common", LIBC, from_debug_file=True),
              NativeFrame(2, "__new_sem_wait_slow64.constprop.0", LIBC, from_debug_file=True),
              NativeFrame(3, "PyThread_acquire_lock_timed", PY)]
    assert entry_frame(frames).function == "PyThread_acquire_lock_timed"
    frames = [NativeFrame(1, "__futex_abstimed_wait_common", LIBC, from_debug_file=True),
              NativeFrame(2, "pthread_rwlock_wrlock", LIBC), NativeFrame(3, None, "/opt/libdriver.so")]
    assert entry_frame(frames).function == "pthread_rwlock_wrlock"


def test_without_debug_symbols_the_same_entry_is_found():
    frames = [NativeFrame(1, None, LIBC), NativeFrame(2, "pthread_rwlock_wrlock", LIBC), NativeFrame(3, None, PY)]
    assert entry_frame(frames).function == "pthread_rwlock_wrlock"


def test_a_library_with_no_name_at_all_gives_the_innermost_named_frame_outside_it():
    frames = [NativeFrame(1, None, LIBC), NativeFrame(2, None, LIBC), NativeFrame(3, "PyThread_acquire_lock_timed", PY)]
    assert entry_frame(frames).function == "PyThread_acquire_lock_timed"


def test_no_name_anywhere_is_none():
    assert entry_frame([NativeFrame(1), NativeFrame(2, None, LIBC)]) is None
    assert entry_frame([]) is None
