"""Scenario: threads blocked on Python-level locks, with known owners.

  lock-holder    holds a threading.Lock (inside `with`), sleeps
  lock-waiter    blocks in `with` on that Lock
  rlock-holder   holds a threading.RLock acquired twice, sleeps
  rlock-waiter   blocks in RLock.acquire() on it
  cond-waiter    waits in Condition.wait() (the Condition's lock is an RLock,
                 the default), nobody notifies
  cond-waiter-2  waits on a Condition(Lock()) with 40 more attributes (its
                 instance dict is a combined table in every version)
  cond-waiter-3  waits on a Condition whose RLock another thread then holds:
  cond-holder    holds that Condition's lock (`with cond:`), sleeps
  main           sleeps

Every thread records its role, its TID, the id() of the lock object it
holds or waits on and the TID of that lock's holder (null when none):
lock_id / holder_tid; the Condition waiter also records condition_id,
condition_lock_id (the RLock Condition._lock it must reacquire, free while
it waits) and waiter_type.  Works on every Python from 3.6 on.
usage: py_locks.py
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import Truth, gettid, set_os_thread_name  # noqa: E402

TRUTH = Truth()
LOCK = threading.Lock()
RLOCK = threading.RLock()
COND = threading.Condition()
COND2 = threading.Condition(threading.Lock())
for _i in range(40):
    setattr(COND2, "attribute_%d" % _i, _i)
COND3 = threading.Condition()
held = threading.Semaphore(0)  # a holder has its lock
tids = {}


def sleep_forever():
    while True:
        time.sleep(3600)


def lock_holder():
    set_os_thread_name("lock-holder")
    tids["lock-holder"] = gettid()
    with LOCK:
        TRUTH.thread(tid=gettid(), name="lock-holder", role="lock-holder", lock_id=id(LOCK),
                     lock_type="_thread.lock", holder_tid=gettid())
        held.release()
        sleep_forever()


def lock_waiter():
    set_os_thread_name("lock-waiter")
    TRUTH.thread(tid=gettid(), name="lock-waiter", role="lock-waiter", lock_id=id(LOCK),
                 lock_type="_thread.lock", holder_tid=tids["lock-holder"])
    held.release()
    with LOCK:  # blocks forever
        pass


def rlock_holder():
    set_os_thread_name("rlock-holder")
    tids["rlock-holder"] = gettid()
    with RLOCK:
        RLOCK.acquire()  # count 2
        TRUTH.thread(tid=gettid(), name="rlock-holder", role="rlock-holder", lock_id=id(RLOCK),
                     lock_type="_thread.RLock", holder_tid=gettid(), count=2)
        held.release()
        sleep_forever()


def rlock_waiter():
    set_os_thread_name("rlock-waiter")
    TRUTH.thread(tid=gettid(), name="rlock-waiter", role="rlock-waiter", lock_id=id(RLOCK),
                 lock_type="_thread.RLock", holder_tid=tids["rlock-holder"], count=2)
    held.release()
    RLOCK.acquire()  # blocks forever


def cond_waiter():
    set_os_thread_name("cond-waiter")
    TRUTH.thread(tid=gettid(), name="cond-waiter", role="cond-waiter", condition_id=id(COND),
                 condition_lock_id=id(COND._lock), condition_lock_type=lock_name(COND._lock),
                 lock_type="_thread.lock", holder_tid=None)
    held.release()
    with COND:
        COND.wait()  # nobody notifies


def lock_name(lock):
    return type(lock).__module__ + "." + type(lock).__name__


def cond_waiter_2():
    set_os_thread_name("cond-waiter-2")
    TRUTH.thread(tid=gettid(), name="cond-waiter-2", role="cond-waiter", condition_id=id(COND2),
                 condition_lock_id=id(COND2._lock), condition_lock_type=lock_name(COND2._lock),
                 lock_type="_thread.lock", holder_tid=None)
    held.release()
    with COND2:
        COND2.wait()


def cond_waiter_3():
    set_os_thread_name("cond-waiter-3")
    tids["cond-waiter-3"] = gettid()
    held.release()  # recorded by cond_holder, which knows the holder
    with COND3:
        COND3.wait()


def cond_holder():
    set_os_thread_name("cond-holder")
    while not COND3._waiters:  # the waiter is about to release the lock in wait()
        time.sleep(0.01)
    with COND3:
        TRUTH.thread(tid=tids["cond-waiter-3"], name="cond-waiter-3", role="cond-waiter", condition_id=id(COND3),
                     condition_lock_id=id(COND3._lock), condition_lock_type=lock_name(COND3._lock),
                     lock_type="_thread.lock", holder_tid=None, condition_lock_holder_tid=gettid())
        TRUTH.thread(tid=gettid(), name="cond-holder", role="cond-holder", lock_id=id(COND3._lock),
                     lock_type=lock_name(COND3._lock), holder_tid=gettid(), count=1)
        held.release()
        sleep_forever()


def start(target):
    threading.Thread(target=target, daemon=True).start()
    held.acquire()


def main():
    set_os_thread_name("py-locks-main")
    for target in (lock_holder, lock_waiter, rlock_holder, rlock_waiter, cond_waiter, cond_waiter_2, cond_waiter_3,
                   cond_holder):
        start(target)
    TRUTH.thread(tid=gettid(), name="py-locks-main", role="main")
    TRUTH.write_and_signal_ready()
    sleep_forever()


main()
