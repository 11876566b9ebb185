"""Imported by import_cycle.py: its top level takes the scenario's
CONFIG_LOCK, which another thread holds while it imports this module."""
import __main__

with __main__.CONFIG_LOCK:
    VALUE = 1
