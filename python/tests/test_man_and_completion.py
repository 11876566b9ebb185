"""The manual page and the bash completion name every command and option
the command line has, and the completion completes them in a real bash."""
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
from pyhang import cli, merge_commands  # noqa: E402

MAN = os.path.join(ROOT, "docs", "pyhang.1")
COMPLETION = os.path.join(ROOT, "python", "bin", "pyhang-completion.bash")


def _long_options(parser):
    return {s for a in parser._actions for s in a.option_strings if s.startswith("--")} - {"--help"}


def _completion_list(name):
    m = re.search(r'^%s="([^"]*)"' % name, open(COMPLETION).read(), re.M)
    return set(m.group(1).split())


def test_the_manual_page_names_every_command_and_every_long_option():
    # GIVEN the man page's text, with roff's escaped hyphens as hyphens
    text = open(MAN).read().replace("\\-", "-")
    # THEN each command has its own entry, and each option of `pyhang` and `pyhang job` is named
    for command in cli.COMMANDS:
        assert re.search(r"^\.B %s$" % re.escape(command), text, re.M), command
    for option in _long_options(cli.parser()) | _long_options(merge_commands.job_parser()):
        assert re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(option), text), option


def test_the_manual_page_gives_every_exit_status_of_the_contract():
    text = open(MAN).read()
    section = text.split(".SH EXIT STATUS", 1)[1].split(".SH ", 1)[0]
    assert {int(n) for n in re.findall(r"^\.B (\d+)$", section, re.M)} == {int(s) for s in (
        cli.OK, cli.FAILED, cli.USAGE, cli.DEADLOCK, cli.INCOMPLETE, cli.HUNG)}


@pytest.mark.skipif(shutil.which("man") is None, reason="no man(1) here")
def test_man_renders_the_page_without_a_warning():
    r = subprocess.run(["man", "--warnings", "-l", MAN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0"), timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    text = re.sub(".\b", "", r.stdout)   # overstrike (bold, underline) off
    assert "why is this Python program stuck?" in text and "EXIT STATUS" in text


def test_the_completion_lists_are_the_command_lines_own():
    assert _completion_list("_pyhang_commands") == set(cli.COMMANDS)
    options = _long_options(cli.parser())
    report = _completion_list("_pyhang_report_options")
    assert options - {"--version", "--output"} == {o for o in report if o.startswith("--")}
    assert _completion_list("_pyhang_job_options") == _long_options(merge_commands.job_parser())


def _complete(*words):
    """What bash completes for `pyhang WORDS`, the last word being the one completed."""
    line = " ".join(("pyhang",) + words)
    script = ('source %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_pyhang\nprintf "%%s\\n" "${COMPREPLY[@]}"\n'
              % (COMPLETION, line if words[-1] else line + ' ""', len(words)))
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.stderr == "", r.stderr
    return set(r.stdout.split())


def test_bash_completes_commands_then_each_commands_own_options_then_pids():
    assert _complete("rep") == {"report"}
    assert _complete("py-b") == {"py-bt", "py-bt-full"}
    assert _complete("report", "--no") == {"--no-stop"}
    assert _complete("report", "--sys") == {"--sysroot"}
    assert _complete("job", "--sl") == {"--slurm"}
    assert _complete("gcore", "--tr") == {"--tree"}
    assert "--no-stop" not in _complete("merge", "--")
    assert str(os.getpid()) in _complete("report", "-p", str(os.getpid()))
