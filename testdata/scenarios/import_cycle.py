"""Scenario: a deadlock between an import lock and an RLock.  Thread
"imports-module" imports import_cycle_module, whose top level waits for
CONFIG_LOCK (an RLock); thread "holds-config" holds CONFIG_LOCK and imports
the same module: it waits for the module's import lock, which the importer
holds.  Both owners are recorded (the RLock's owner, the _ModuleLock's
owner): a certain deadlock.  Truth: each thread's TID and role, the RLock's
id().  Works on every Python from 3.6 on."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
CONFIG_LOCK = threading.RLock()
HELD = threading.Event()
IMPORTING = threading.Event()


def holds_config():
    set_os_thread_name("holds-config")
    TRUTH.thread(tid=gettid(), name="holds-config", role="holds-config")
    with CONFIG_LOCK:
        HELD.set()
        IMPORTING.wait()
        time.sleep(0.3)  # the importer is now inside the module's top level, waiting for CONFIG_LOCK
        import import_cycle_module  # noqa: F401


def imports_module():
    set_os_thread_name("imports-module")
    TRUTH.thread(tid=gettid(), name="imports-module", role="imports-module")
    HELD.wait()
    IMPORTING.set()
    import import_cycle_module  # noqa: F401,F811


def main():
    for target in (holds_config, imports_module):
        threading.Thread(target=target, name=target.__name__.replace("_", "-"), daemon=True).start()
    while len(TRUTH.data["threads"]) < 2:
        time.sleep(0.01)
    time.sleep(0.6)
    TRUTH.write_and_signal_ready(config_lock=id(CONFIG_LOCK))
    while True:
        time.sleep(3600)


main()
