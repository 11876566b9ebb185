"""A module of py_names.py: a lock that is one of its globals, and one that
is an attribute of an instance one of its globals refers to."""
import threading

LOCK = threading.Lock()


class Registry:
    def __init__(self):
        self._lock = threading.Lock()


REGISTRY = Registry()


def hold_lock(event):
    with LOCK:
        event.wait()


def use_lock():
    with LOCK:
        pass


def hold_registry(event):
    with REGISTRY._lock:
        event.wait()


def register():
    with REGISTRY._lock:
        pass
