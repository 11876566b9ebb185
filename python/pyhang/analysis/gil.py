"""Who holds each GIL, who waits for it and who runs with it released."""
from pyhang.analysis.python_state import gil_state, holder_blocked
from pyhang.model.kinds import GilState
from pyhang.model.report import InterpreterGil


def gils(view, threads):
    """([InterpreterGil], TIDs without a Python thread state) from the
    decoded interpreter and thread snapshots (registers and frames)."""
    snaps = {t.tid: t for t in threads}
    states = {tid: gil_state(view, tid, s.registers) for tid, s in snaps.items()}
    out = []
    decoded = view.gils or [{"interp_id": -1, "locked": None, "holder_tstate": 0}]
    for g in sorted(decoded, key=lambda g: g["interp_id"]):
        members = [t for t in view.threads if g["interp_id"] < 0 or t["interp_id"] == g["interp_id"]]
        entry = InterpreterGil(interp_id=g["interp_id"], locked=g.get("locked"))
        holder = next((t for t in members if t["holds_gil"]), None)
        if holder and holder.get("native_tid"):
            entry.holder_tid = holder["native_tid"]
            s = snaps.get(entry.holder_tid)
            if s is not None:
                entry.holder_blocked = holder_blocked(s.tid, s.registers, s.frames)
        tids = [t.get("native_tid") for t in members if t.get("native_tid")]
        entry.waiting = [t for t in tids if states.get(t) == GilState.WAITING]
        entry.released = [t for t in tids if states.get(t) == GilState.RELEASED]
        out.append(entry)
    no_python = sorted(tid for tid, st in states.items() if st == GilState.NO_PYTHON)
    return out, no_python
