"""Where a target's source lines are read from and what of them is kept
(pyhang.sources), and how a frame shows its line with carets under the
instruction's span (render.names.frame_source_lines)."""
import os

from pyhang import sources
from pyhang.model.report import PythonFrame
from pyhang.render.names import frame_source_lines


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text)


def test_a_live_process_is_read_through_its_root_and_its_cwd_and_nothing_climbs_out(tmp_path):
    root, cwd = tmp_path / "root", tmp_path / "cwd"
    write(str(root / "srv/app.py"), b"import os\n    wait()   \n")
    write(str(cwd / "rel.py"), b"x = 1\n")
    write(str(tmp_path / "outside.py"), b"secret\n")
    files = sources.SourceFiles(str(root), str(cwd))
    assert files.answer([["/srv/app.py", 2], ["/srv/app.py", 3], ["rel.py", 1], ["/../outside.py", 1],
                         ["<string>", 1], ["/srv/app.py", 0]]) == ["    wait()", None, "x = 1", None, None, None]
    assert sources.for_live(42).host_path("/a/../../b.py") == "/proc/42/root/b.py"
    assert sources.for_live(42).host_path("b.py") == "/proc/42/cwd/b.py"


def test_a_core_reads_under_its_sysroot_and_never_a_relative_path():
    assert sources.for_core("/srv/host1").host_path("/usr/lib/x.py") == "/srv/host1/usr/lib/x.py"
    assert sources.for_core("target:").host_path("/usr/lib/x.py") == "/usr/lib/x.py"
    assert sources.for_core(None).host_path("x.py") is None


def test_a_core_reads_each_file_under_its_sysroot_first_then_where_the_core_names_it(tmp_path):
    # GIVEN a container's root holding its standard library, and a program file only this machine has
    root = tmp_path / "root"
    write(str(root / "usr/lib/python3.14/threading.py"), b"# the container's\n")
    write(str(tmp_path / "usr/lib/python3.14/threading.py"), b"# this machine's\n")
    write(str(tmp_path / "srv/app.py"), b"main()\n")
    files = sources.for_core(str(root))
    # THEN the root's file is read where it has one, this machine's where it has none, a live root never so
    assert files.answer([[str(tmp_path / "usr/lib/python3.14/threading.py"), 1], [str(tmp_path / "srv/app.py"), 1],
                         ["/usr/lib/python3.14/threading.py", 1]]) == ["# this machine's", "main()", "# the container's"]
    assert files.read("/nowhere.py")[1].endswith("(read at %s/nowhere.py and at /nowhere.py)" % root)
    assert sources.SourceFiles(str(root)).lines(str(tmp_path / "srv/app.py")) is None


def test_long_lines_are_cut_large_files_read_in_part_and_fifos_not_opened(tmp_path, monkeypatch):
    write(str(tmp_path / "long.py"), b"y = '" + b"a" * 500 + b"'\n")
    files = sources.SourceFiles(str(tmp_path))
    line = files.line("/long.py", 1)
    assert len(line) == sources.MAX_LINE_CHARS and line.endswith("...")
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 10)
    write(str(tmp_path / "big.py"), b"12345\n67890\nabc\n")
    assert sources.SourceFiles(str(tmp_path)).answer([["/big.py", 1], ["/big.py", 2]]) == ["12345", None]
    os.mkfifo(str(tmp_path / "pipe.py"))
    assert sources.SourceFiles(str(tmp_path)).read("/pipe.py") == (
        None, "not a regular file (read at %s/pipe.py)" % tmp_path)


def frame(source, indent, col, end_col, line=7, end_line=7):
    return PythonFrame("f", "/x.py", line, end_line=end_line, col=col, end_col=end_col, source=source,
                       source_indent=indent)


def test_carets_mark_the_span_in_characters_when_it_is_part_of_one_line():
    # "état = WAKE.wait()" indented by 4: the call is at bytes 12..23 (é is two bytes)
    f = frame("état = WAKE.wait()", 4, 12, 23)
    assert frame_source_lines(f, "  ") == ["  état = WAKE.wait()", "         ^^^^^^^^^^^"]
    assert frame_source_lines(frame("wait()", 4, 4, 10), "") == ["wait()"]            # the whole line
    assert frame_source_lines(frame("a(\n", 0, 0, 3, end_line=8), "") == ["a(\n"]       # spans lines
    assert frame_source_lines(frame("wait()", 0, -1, -1), "") == ["wait()"]           # no position
    assert frame_source_lines(frame(None, 0, 0, 3), "") == []
