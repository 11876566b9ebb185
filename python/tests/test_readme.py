"""The README stays one a newcomer finishes, and the documentation holds
together: the README is at most 330 lines, it gives the test command CI runs
exactly as CI runs it, its sample output names no path of the machine it was
made on, and every relative link in it and under docs/ leads to a file that
exists."""
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
MAX_LINES = 330
# Paths of the machines the samples were made on: a checkout under /work, a
# scenario's own temporary directory.
LOCAL_PATHS = ("/work/", "/tmp/pyhang")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")


def code_lines(text_lines):
    """The lines inside fenced code blocks: commands and their output."""
    inside = False
    for line in text_lines:
        if line.lstrip().startswith("```"):
            inside = not inside
        elif inside:
            yield line


def relative_links(path):
    """(line number, target) of every link that is neither a URL nor an anchor."""
    inside = False
    for number, line in enumerate(lines(path), 1):
        if line.lstrip().startswith("```"):
            inside = not inside
            continue
        if inside:
            continue
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            yield number, target


def documents():
    return [README, os.path.join(ROOT, "CHANGELOG.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))


def test_readme_is_at_most_330_lines():
    n = len(lines(README)) - 1  # the file ends with a newline
    assert n <= MAX_LINES, "README.md has %d lines; move detail into docs/ (at most %d)" % (n, MAX_LINES)


def test_readme_gives_the_test_command_ci_runs_verbatim():
    ci = [l.strip() for l in lines(os.path.join(ROOT, ".ci", "run")) if l.strip() and not l.startswith("#")]
    command = ci[-1]
    assert command == "testdata/run-tests.sh", ci
    shown = [l for l in code_lines(lines(README)) if l.split("#")[0].strip() == command]
    assert shown, "README.md no longer shows CI's test command %r on a line of its own" % command


def test_readme_samples_name_no_machine_local_path():
    bad = [l for l in code_lines(lines(README)) if any(p in l for p in LOCAL_PATHS)]
    assert not bad, "sample lines with machine-local paths: %s" % bad


def test_every_relative_link_in_the_documentation_leads_to_a_file():
    broken = []
    for doc in documents():
        for number, target in relative_links(doc):
            path = os.path.normpath(os.path.join(os.path.dirname(doc), target.split("#")[0]))
            if not os.path.exists(path):
                broken.append("%s:%d: %s" % (os.path.relpath(doc, ROOT), number, target))
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_the_link_check_sees_links():
    """The link pattern finds the README's links into docs/ (else the test above proves nothing)."""
    targets = [t for _, t in relative_links(README)]
    assert "docs/commands/README.md" in targets and "docs/json-contract.md" in targets, targets


def test_readme_gives_the_manual_build_for_the_python_gdb_embeds():
    """A newcomer building by hand is told to build for gdb's Python, not the first python3 on the PATH."""
    shown = [l for l in code_lines(lines(README)) if l.startswith("cmake -S . -B build")]
    assert shown and "-DPYHANG_GDB_PYTHON=" in shown[0], shown
