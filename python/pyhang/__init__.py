"""pyhang: why is this Python program stuck?

The package holds what is independent of gdb: the report model, its text and
JSON renderings, and the command line that runs gdb for the user.
"""
SCHEMA = "pyhang-report/1"
VERSION = "0.1.0"
