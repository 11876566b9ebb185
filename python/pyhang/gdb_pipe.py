"""The facts of a process or core as a `gdb -batch` of its own answers them
(pyhang.model.facts.Facts): gdb attaches (or opens the core), loads pyhang
and runs `pyhang serve-facts QUESTIONS ANSWERS`; each question goes to it as
one JSON line on one pipe and its answer comes back as one JSON line on the
other.  The analysis and the rendering run here, in the command line's own
process, once; gdb only collects.  When the questions end (close()), gdb
detaches and exits.

gdb's own output (attach messages, warnings) goes to files and is read only
to say why gdb could not answer at all."""
import json
import os
import select
import subprocess
import tempfile
import time

from pyhang.model.facts import Facts, asking, decode, frame_sequence


class GdbEnded(Exception):
    """gdb stopped answering.  `message`: the one line pyhang in gdb said,
    when it said one; `stdout`, `stderr`: what gdb printed; `timed_out`:
    it was ended here, the time given being over."""

    def __init__(self, message, stdout, stderr, timed_out=False):
        super().__init__(message or "gdb ended before answering")
        self.message, self.stdout, self.stderr, self.timed_out = message, stdout, stderr, timed_out


class AnswerError(Exception):
    """gdb answered a question with the one line saying why it could not; `kind`: what kind of
    failure (model.kinds.CommandFailure), None from a pyhang that did not say."""

    def __init__(self, message, kind=None):
        super().__init__(message)
        self.kind = kind


@asking
class GdbPipe(Facts):
    """Facts answered by a gdb started with `argv` (which loads pyhang and
    opens the target; the serve command is added here).  `timeout`: seconds
    for the whole session."""

    def __init__(self, argv, env=None, timeout=None):
        self.deadline = None if timeout is None else time.monotonic() + timeout
        q_read, q_write = os.pipe()
        a_read, a_write = os.pipe()
        self.out = tempfile.TemporaryFile(mode="w+")
        self.err = tempfile.TemporaryFile(mode="w+")
        try:
            self.proc = subprocess.Popen(argv + ["-ex", "pyhang serve-facts %d %d" % (q_read, a_write)],
                                         stdin=subprocess.DEVNULL, stdout=self.out, stderr=self.err, env=env,
                                         pass_fds=(q_read, a_write))
        except OSError:
            for fd in (q_read, q_write, a_read, a_write):
                os.close(fd)
            raise
        os.close(q_read)
        os.close(a_write)
        self.questions = os.fdopen(q_write, "w")
        self.answers = os.fdopen(a_read, "r")
        self.closed = False
        self.known = {}   # question line → its answer

    def _ask(self, question, *args):
        """The answer to `question`, asked of gdb once (a question asked again is answered from memory)."""
        line = json.dumps([question, list(args)], separators=(",", ":"), default=frame_sequence)
        if line not in self.known:
            self.known[line] = self._asked(question, line)
        return self.known[line]

    def _asked(self, question, line):
        try:
            self.questions.write(line)
            self.questions.write("\n")
            self.questions.flush()
        except BrokenPipeError:
            raise self.ended()
        line = self._line()
        reply = json.loads(line)
        if "error" in reply:
            raise AnswerError(reply["error"], reply.get("failure"))
        return decode(question, reply["answer"])

    def _line(self):
        """The next answer line, waiting no longer than the deadline."""
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.answers], [], [], left)[0]:
                self.proc.kill()
                raise self.ended("gdb did not answer within the time given", timed_out=True)
        line = self.answers.readline()
        if not line:
            raise self.ended()
        return line

    def first_answer(self):
        """The target, asked first: gdb says here whether it could open it
        at all (GdbEnded, or AnswerError with pyhang's one line)."""
        return self.target()

    def ended(self, message=None, timed_out=False):
        """GdbEnded with what gdb said, once it has exited."""
        self.close()
        self.out.seek(0)
        self.err.seek(0)
        stdout, stderr = self.out.read(), self.err.read()
        said = [l[len("pyhang: "):] for l in stdout.splitlines() if l.startswith("pyhang: ")]
        return GdbEnded(message or (said[-1] if said else None), stdout, stderr, timed_out)

    def close(self):
        """No more questions: gdb detaches and exits."""
        if self.closed:
            return
        self.closed = True
        for f in (self.questions, self.answers):
            try:
                f.close()
            except OSError:
                pass
        try:
            left = None if self.deadline is None else max(1.0, self.deadline - time.monotonic())
            self.proc.wait(timeout=left)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()



def pipe_threads(pipe):
    """The threads part of a collector whose threads `pipe`'s gdb gives (their registers and frames)."""
    return lambda facts, depth, tids: pipe.threads(depth, tids)


def read_here(pipe, pid=None, core=None, executable=None, sysroot=None, search_path=(), debug_directories=()):
    """Facts for the target `pipe`'s gdb holds, read in this process where it
    can, else all answered by gdb (the pipe itself).  gdb stops the target
    and says what only a debugger knows (the threads, their registers and
    frames, and the target's facts and warnings); this process reads
    everything else from the target itself, as gdb would (memory of the
    stopped process, or the core), so the interpreter's state, the largest
    answer, never goes through the pipe (pyhang.native_facts.Collector)."""
    try:
        from pyhang.native_facts import Collector, native
    except ImportError:
        return pipe
    try:
        if pid is not None:
            target = native.Target.live(pid)
        else:
            target = native.Target.core(core, executable or "", sysroot or "", list(search_path))
        dirs = list(debug_directories)
        if sysroot and sysroot != "/":
            dirs += [os.path.join(sysroot, d.lstrip("/")) for d in dirs]
        target.set_debug_directories(dirs)
    except Exception:  # noqa: BLE001 — not readable here (permissions, a core gdb reads otherwise): gdb answers all
        return pipe
    return Collector(target, pipe_threads(pipe), lambda facts: pipe.target(), core=core,
                     # where the core's files are, as gdb was told (gdb_batch.gdb_argv)
                     sysroot=os.path.abspath(sysroot) if sysroot else None)
