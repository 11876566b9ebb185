"""Who holds each GIL, who waits for it and who runs with it released."""
from pyhang.analysis.python_state import gil_state, holder_blocked, main_gil
from pyhang.model.kinds import GilState
from pyhang.model.python_facts import GilFacts
from pyhang.model.report import InterpreterGil


def gils(view, threads):
    """([InterpreterGil], TIDs without a Python thread state) from the
    decoded interpreter and thread snapshots (registers and frames)."""
    snaps = {t.tid: t for t in threads}
    states = {tid: gil_state(view, tid, s.registers) for tid, s in snaps.items()}
    out = []
    decoded = view.gils or [GilFacts(interp_id=-1)]
    main = main_gil(view)
    owners = {g.interp_id for g in decoded}
    for g in sorted(decoded, key=lambda g: g.interp_id):
        # an interpreter without a GIL of its own shares the main interpreter's (CPython's only sharing)
        members = [t for t in view.threads if g.interp_id < 0 or t.interp_id == g.interp_id
                   or (g is main and t.interp_id not in owners)]
        entry = InterpreterGil(interp_id=g.interp_id, locked=g.locked)
        holder = next((t for t in members if t.holds_gil), None)
        if holder and holder.native_tid:
            entry.holder_tid = holder.native_tid
            s = snaps.get(entry.holder_tid)
            if s is not None:
                entry.holder_blocked = holder_blocked(s.tid, s.registers, s.frames)
        # each OS thread once, under the interpreters of the state(s) it is shown with (python_state.one_thread)
        interps = {t.interp_id for t in members}
        tids = [tid for tid in view.by_tid if g.interp_id < 0 or interps.intersection(view.interpreters(tid))]
        entry.waiting = [t for t in tids if states.get(t) == GilState.WAITING]
        entry.released = [t for t in tids if states.get(t) == GilState.RELEASED]
        out.append(entry)
    no_python = sorted(tid for tid, st in states.items() if st == GilState.NO_PYTHON)
    return out, no_python
