"""Scenario: every glibc lock kind held by a known thread while another
thread blocks on it, set up by the C fixture library (liblockfixture.so)
inside a Python process.  usage: native_locks.py LIBLOCKFIXTURE"""
import ctypes
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
set_os_thread_name("locks-main")
lib = ctypes.CDLL(sys.argv[1])
records_path = os.environ["PYHANG_TRUTH"] + ".records"
if lib.lockfix_setup_all(records_path.encode()) < 0:
    sys.exit("lock fixture failed")
with open(records_path) as f:
    records = [json.loads(l) for l in f if l.startswith("{")]
TRUTH.thread(tid=gettid(), name="locks-main", role="main")
TRUTH.write_and_signal_ready(records=records)
while True:
    time.sleep(3600)
