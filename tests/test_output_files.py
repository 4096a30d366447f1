"""Files btlab writes outside a results folder: only regular files, whole or not at all.

``btlab report -o P``, :func:`btlab.views.plots.figure_files.save` and ``python -m
btlab.views.docs_tables --write`` all write through :mod:`btlab.views.outfile`: a FIFO,
a device, a socket, a directory or a symbolic link at P is refused (exit 2,
nothing written), a full disk or an I/O error gives exit 3, and no temporary
is ever left behind.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import textwrap
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from btlab.cli.main import main
from btlab.errors import OutputPathError, WriteError
from btlab.views import docs_tables, outfile
from btlab.views.plots import figure_files as figures

CONFIG = textwrap.dedent("""\
    name: out-files
    problem: knights_tour
    fixed: {board: [5, 5], heuristic: warnsdorff}
    matrix: {start: [[0, 0], [2, 2]]}
""")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A small real results folder (2 solved knight's-tour trials)."""
    base = tmp_path_factory.mktemp("outfiles")
    cfg = base / "c.yaml"
    cfg.write_text(CONFIG)
    out = base / "results"
    assert main(["run", str(cfg), "--backend", "serial", "--out", str(out), "--quiet"]) == 0
    return out


def leftovers(folder: Path) -> list[str]:
    """Hidden temporaries in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def report(results: Path, target: Path | str, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["report", str(results), "-o", str(target)])
    captured = capsys.readouterr()
    return code, captured.err + captured.out


def test_report_onto_a_fifo_is_refused_without_opening_it(results, tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, text = report(results, fifo, capsys)   # opening it would block: the test would hang
    assert code == 2
    assert f"{fifo}: cannot write the report there: it is a named pipe (FIFO)" in text
    assert "give -o -" in text
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert leftovers(tmp_path) == []


def test_report_onto_a_symlink_is_refused_and_the_target_untouched(results, tmp_path, capsys):
    target = tmp_path / "real.html"
    target.write_text("old")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    code, text = report(results, link, capsys)
    assert code == 2
    assert f"{link}: cannot write the report there: it is a symbolic link" in text
    assert f"give the link's target ({target}) itself" in text
    assert link.is_symlink() and target.read_text() == "old"
    # a dangling link is refused too (writing would create a file wherever it points)
    dangling = tmp_path / "dangling.html"
    dangling.symlink_to(tmp_path / "nowhere" / "x.html")
    assert report(results, dangling, capsys)[0] == 2
    assert not (tmp_path / "nowhere").exists()
    assert leftovers(tmp_path) == []


def test_report_onto_a_directory_is_refused_and_leaves_nothing(results, tmp_path, capsys):
    folder = tmp_path / "reports"
    folder.mkdir()
    code, text = report(results, folder, capsys)
    assert code == 2
    assert f"{folder}: cannot write the report there: it is a directory" in text
    assert f"fix: name a file inside it, e.g. {folder / 'report.html'}" in text
    assert "Traceback" not in text
    assert list(folder.iterdir()) == [] and leftovers(tmp_path) == []


def test_report_onto_a_device_node_is_refused(results, tmp_path, capsys):
    dev = tmp_path / "full"
    try:   # a character device like /dev/full (1, 7), made in the test's own folder
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    code, text = report(results, dev, capsys)
    assert code == 2
    assert f"{dev}: cannot write the report there: it is a character device" in text
    assert stat.S_ISCHR(os.lstat(dev).st_mode)          # still the device
    assert leftovers(tmp_path) == []


def test_report_onto_a_socket_is_refused(results, tmp_path, capsys):
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        code, text = report(results, path, capsys)
    assert code == 2 and "it is a socket" in text


def test_report_replaces_a_regular_file_and_keeps_its_mode(results, tmp_path, capsys):
    old = tmp_path / "r.html"
    old.write_text("old report")
    old.chmod(0o640)
    code, text = report(results, old, capsys)
    assert code == 0 and f"wrote {old}" in text
    assert old.read_text().startswith("<!DOCTYPE html>")
    assert stat.S_IMODE(old.stat().st_mode) == 0o640
    new = tmp_path / "a" / "b" / "new.html"       # missing folders are made
    assert report(results, new, capsys)[0] == 0 and new.read_text().endswith("</html>\n")
    assert leftovers(tmp_path) == [] and leftovers(new.parent) == []


def test_report_onto_a_read_only_file_is_refused_and_it_is_unchanged(results, tmp_path,
                                                                      capsys, monkeypatch):
    """``>`` refuses a file without write permission; a rename would replace it anyway.
    (The tests run as root, for whom every file is writable: access is answered as for a
    user.)"""
    old = tmp_path / "r.html"
    old.write_text("kept")
    old.chmod(0o444)
    real_access = os.access
    monkeypatch.setattr(outfile.os, "access", lambda p, mode: False if (
        Path(p) == old and mode == os.W_OK) else real_access(p, mode))
    code, text = report(results, old, capsys)
    assert code == 2, text
    assert f"{old}: cannot write the report there: the file is read-only for you (mode 0444)" \
        in text and f"chmod u+w {old}" in text
    assert old.read_text() == "kept" and leftovers(tmp_path) == []


def test_report_inside_the_results_folder_is_refused(results, tmp_path, capsys):
    """Readers of the folder would read the report as rows (btlab refuses the folder then)."""
    before = sorted(p.name for p in results.iterdir())
    for target in (results / "report.html", results / "sub" / ".report.html"):
        code, text = report(results, target, capsys)
        assert code == 2, text
        assert f"{target}: cannot write the report there: it is inside the results folder" \
            in text and f"fix: give a path outside it, e.g. {results}.html" in text
    assert sorted(p.name for p in results.iterdir()) == before
    assert main(["report", f"file://{results}/", "-o", str(results / "r.html")]) == 2
    assert report(results, tmp_path / "r.html", capsys)[0] == 0


def test_report_onto_a_hard_link_replaces_that_name_only(results, tmp_path, capsys):
    first = tmp_path / "first.html"
    first.write_text("old")
    other = tmp_path / "other.html"
    os.link(first, other)
    assert report(results, other, capsys)[0] == 0
    assert other.read_text().startswith("<!DOCTYPE html>") and first.read_text() == "old"


def test_report_onto_a_path_ending_in_a_slash_is_refused(results, tmp_path, capsys):
    code, text = report(results, f"{tmp_path}/new/", capsys)
    assert code == 2 and "the path ends in a slash, so it names a folder" in text
    assert list(tmp_path.iterdir()) == []


def test_report_under_a_file_is_refused(results, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, text = report(results, blocker / "r.html", capsys)
    assert code == 2 and "cannot write the report there" in text and "Traceback" not in text


def test_report_into_a_read_only_directory(results, tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as root: a read-only mode does not stop writes")
        code, text = report(results, folder / "r.html", capsys)
        assert code == 2 and "fix: give a path in a folder you can write to" in text
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)


def test_report_refused_by_the_filesystem_is_exit_2(results, tmp_path, capsys, monkeypatch):
    """A read-only filesystem or a folder the user may not write (EROFS, EACCES, injected:
    the tests run as root, whom a read-only mode does not stop)."""
    real_open = os.open

    def refuse(path, flags, *args, **kwargs):
        if str(path).endswith(".tmp"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    code, text = report(results, tmp_path / "r.html", capsys)
    assert code == 2
    assert f"{tmp_path / 'r.html'}: cannot write the report there: Read-only file system" in text
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("call", ["write", "fsync", "replace"])
def test_disk_full_is_exit_3_and_leaves_the_old_file(results, tmp_path, capsys, monkeypatch,
                                                     call):
    old = tmp_path / "r.html"
    old.write_text("old report")
    real = getattr(os, call)
    calls = []

    def full(*args, **kwargs):
        calls.append(args)
        if call != "write" or args[0] > 2:   # fd 0-2: pytest's own output
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, call, full)
    code, text = report(results, old, capsys)
    monkeypatch.undo()
    assert calls, f"os.{call} was not called"
    assert code == 3
    assert f"{old}: could not write the report: the disk is full" in text
    assert "nothing was written (a file already there is unchanged)" in text
    assert "Traceback" not in text
    assert old.read_text() == "old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_an_io_error_is_exit_3(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(
        OSError(errno.EIO, os.strerror(errno.EIO))))
    with pytest.raises(WriteError, match=r"could not write the file: Input/output error "
                                         r"\(errno EIO\)") as info:
        outfile.atomic_write_text(tmp_path / "x.txt", "data")
    assert info.value.exit_code == 3
    assert list(tmp_path.iterdir()) == []


def test_interrupted_write_leaves_nothing(tmp_path, monkeypatch):
    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        outfile.atomic_write_bytes(tmp_path / "x.bin", b"abc")
    assert list(tmp_path.iterdir()) == []


def test_report_to_standard_output(results, capsys):
    assert main(["report", str(results), "-o", "-"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>") and out.endswith("</html>\n")
    assert "2 trials of <b>knights_tour</b>" in out


def test_figures_are_written_through_the_same_checks(tmp_path):
    fig = Figure()
    fig.add_subplot().plot([1, 2], [3, 4])
    png, svg = tmp_path / "f.png", tmp_path / "f.svg"
    assert figures.save(fig, [png, svg]) == [png, svg]
    assert png.read_bytes().startswith(b"\x89PNG") and b"<svg" in svg.read_bytes()
    os.mkfifo(tmp_path / "pipe.png")
    (tmp_path / "dir.svg").mkdir()
    (tmp_path / "link.png").symlink_to(png)
    before = png.read_bytes()
    for bad, kind in (("pipe.png", "a named pipe (FIFO)"), ("dir.svg", "a directory"),
                      ("link.png", "a symbolic link")):
        with pytest.raises(OutputPathError, match=f"cannot write the figure there: it is "
                                                  f"{kind.replace('(', '.').replace(')', '.')}"):
            figures.save(fig, [tmp_path / "other.png", tmp_path / bad])
    assert not (tmp_path / "other.png").exists()     # checked before the first file is written
    assert png.read_bytes() == before and leftovers(tmp_path) == []


def test_docs_tables_write_goes_through_the_same_checks(tmp_path, monkeypatch, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{docs_tables.START}\nold\n{docs_tables.END}\nend\n")
    monkeypatch.setattr(docs_tables, "README", readme)
    assert docs_tables.main(["--write"]) == 0
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("\nend\n")
    assert "\nold\n" not in text and docs_tables.between_markers(text) == docs_tables.render()
    link = tmp_path / "LINK.md"
    link.symlink_to(readme)
    monkeypatch.setattr(docs_tables, "README", link)
    assert docs_tables.main(["--write"]) == 2
    assert "it is a symbolic link" in capsys.readouterr().err
    assert leftovers(tmp_path) == []
