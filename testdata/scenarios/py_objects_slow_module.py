"""Imported by py_objects.py: its top level blocks forever, so the thread
importing it keeps holding this module's import lock."""
import sys
import threading

sys.modules["__main__"].py_objects_slow_module_started.set()
threading.Event().wait()
