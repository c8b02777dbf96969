"""What an output path is decides how it is written, for every command that writes with ``-o``.

Device nodes are made with mknod under the test's own temporary folder (never the machine's /dev):
a null-like node (1, 3) must stay a character device, a full-like node (1, 7) must give one error
line and exit 2, a FIFO is written in place for its reader, symlinks lead to their target, and what
is not a file (a directory, a socket, a block device, a symlink loop) is refused with one line.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from logdoctor.cli import main
from logdoctor.errors import OutputError
from logdoctor.renderers import output

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example.log"
LENGTHS_TEXT = "\n".join(str(10 + (i * 37) % 400) for i in range(400)) + "\n"


def _node(path: Path, kind: int, major: int, minor: int) -> Path:
    try:
        os.mknod(path, kind | 0o666, os.makedev(major, minor))
        with open(path, "wb"):  # a filesystem mounted nodev refuses to open device nodes
            pass
    except OSError as err:
        pytest.skip(f"cannot make a device node here ({err.strerror})")
    return path


@pytest.fixture
def null_node(tmp_path: Path) -> Path:
    return _node(tmp_path / "null", stat.S_IFCHR, 1, 3)


@pytest.fixture
def full_node(tmp_path: Path) -> Path:
    return _node(tmp_path / "full", stat.S_IFCHR, 1, 7)


def _commands(tmp_path: Path, dest: Path) -> dict[str, list[str]]:
    """Every command that writes with ``-o``, in a form that writes to ``dest``."""
    lengths = tmp_path / "lengths.txt"
    lengths.write_text(LENGTHS_TEXT)
    d = str(dest)
    return {
        "analyze": ["analyze", str(EXAMPLE), "-o", d],
        "analyze-json": ["analyze", str(EXAMPLE), "-f", "json", "-o", d],
        "analyze-png": ["analyze", str(EXAMPLE), "-f", "png", "-o", d],
        "check": ["check", str(EXAMPLE), "-o", d, "--exit-zero"],
        "plot": ["plot", str(EXAMPLE), "-o", d + ".png"] if dest.suffix else ["plot", str(EXAMPLE), "-o", d],
        "parse": ["parse", str(EXAMPLE), "--table-format", "csv", "-o", d],
        "parse-parquet": ["parse", str(EXAMPLE), "--table-format", "parquet", "-o", d],
        "compare": ["compare", str(EXAMPLE), str(EXAMPLE), "-o", d],
        "buckets": ["buckets", str(lengths), "--token-budget", "4096", "-o", d],
    }


COMMANDS = ["analyze", "analyze-json", "analyze-png", "check", "parse", "parse-parquet", "compare", "buckets"]


def _one_line_error(rc: int, err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("logdoctor: error:"), err
    for needle in needles:
        assert needle in lines[0], err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_null_device_stays_a_device(
    command: str, null_node: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = os.stat(null_node)
    rc = main(_commands(tmp_path, null_node)[command])
    assert rc == 0, capsys.readouterr().err
    after = os.stat(null_node)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lengths.txt", "null"]  # no temporary left


@pytest.mark.parametrize("command", COMMANDS)
def test_a_full_device_is_one_line_and_exit_2(
    command: str, full_node: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(_commands(tmp_path, full_node)[command])
    _one_line_error(rc, capsys.readouterr().err, str(full_node), "No space left on device")
    assert stat.S_ISCHR(os.stat(full_node).st_mode)


def test_plot_to_a_device_named_like_an_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node = _node(tmp_path / "null.png", stat.S_IFCHR, 1, 3)
    assert main(["plot", str(EXAMPLE), "-o", str(node)]) == 0, capsys.readouterr().err
    assert stat.S_ISCHR(os.stat(node).st_mode)
    assert capsys.readouterr().err.strip() == f"logdoctor: wrote {node}"
    full = _node(tmp_path / "full.svg", stat.S_IFCHR, 1, 7)
    _one_line_error(main(["plot", str(EXAMPLE), "-o", str(full)]), capsys.readouterr().err, "No space left")


def _reader(fifo: Path, got: list[bytes], limit: int | None = None) -> threading.Thread:
    def read() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read() if limit is None else fh.read(limit))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_a_fifo_is_written_in_place_for_its_reader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    thread = _reader(fifo, got)
    assert main(["analyze", str(EXAMPLE), "-f", "json", "-o", str(fifo)]) == 0, capsys.readouterr().err
    thread.join(10)
    assert got and got[0].startswith(b"{") and b'"format_version"' in got[0]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_fifo_whose_reader_leaves_is_one_line(tmp_path: Path) -> None:
    """The reader takes one byte and closes: the rest of a large table meets a closed pipe (EPIPE)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    log = tmp_path / "big.log"
    log.write_text("".join(f"step {i} | loss={2 + 1 / i:.5f}\n" for i in range(1, 40_001)))
    code = f"import os, sys\nfh = open({str(fifo)!r}, 'rb')\nfh.read(1)\nfh.close()\n"
    reader = subprocess.Popen([sys.executable, "-c", code])
    proc = subprocess.run(
        [sys.executable, "-m", "logdoctor", "parse", str(log), "--table-format", "csv", "-o", str(fifo)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    reader.wait(30)
    assert "Traceback" not in proc.stderr
    _one_line_error(proc.returncode, proc.stderr, str(fifo))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_symlink_to_a_file_keeps_the_link_and_replaces_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target.name)
    assert main(["analyze", str(EXAMPLE), "-f", "json", "-o", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == "real.json"
    assert target.read_text().startswith("{")


def test_a_dangling_symlink_makes_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.md"
    link.symlink_to("made.md")
    assert main(["analyze", str(EXAMPLE), "-f", "markdown", "-o", str(link)]) == 0
    assert link.is_symlink() and (tmp_path / "made.md").read_text().strip()


def test_a_symlink_to_a_device_writes_into_the_device(tmp_path: Path, null_node: Path) -> None:
    link = tmp_path / "to-null"
    link.symlink_to(null_node)
    assert main(["analyze", str(EXAMPLE), "-o", str(link)]) == 0
    assert link.is_symlink() and stat.S_ISCHR(os.stat(null_node).st_mode)


def _socket(path: Path) -> Path:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()
    return path


def _loop(path: Path) -> Path:
    (path.parent / "loop-b").symlink_to(path.name)
    path.symlink_to("loop-b")
    return path


REFUSED: dict[str, tuple[Callable[[Path], Path], str]] = {
    "directory": (lambda p: (p.mkdir(), p)[1], "is a directory"),
    "socket": (_socket, "is a socket"),
    "symlink loop": (_loop, "symlink loop"),
    "block device": (lambda p: _node(p, stat.S_IFBLK, 7, 250), "is a block device"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_is_not_a_file_is_refused(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make, why = REFUSED[case]
    dest = make(tmp_path / "dest")
    before = os.lstat(dest)
    _one_line_error(main(["analyze", str(EXAMPLE), "-o", str(dest)]), capsys.readouterr().err, why)
    after = os.lstat(dest)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


def test_nothing_is_created_under_a_system_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new name under /dev or /proc is refused, not created (the folder is played by a temporary one)."""
    fake_dev = tmp_path / "dev"
    fake_dev.mkdir()
    monkeypatch.setattr(output, "SYSTEM_DIRS", (f"{fake_dev}/",))
    with pytest.raises(OutputError, match="no such device"):
        output.write_output("x", str(fake_dev / "nul"))
    assert list(fake_dev.iterdir()) == []
    link = tmp_path / "typo"
    link.symlink_to(fake_dev / "nul")
    with pytest.raises(OutputError, match="no such device"):
        output.write_output("x", str(link))


def test_a_regular_file_under_a_system_folder_is_appended_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A system stdout redirected to a file (`-o /dev/stdout >> log`): added to, never renamed over."""
    fake_dev = tmp_path / "dev"
    fake_dev.mkdir()
    stdout_file = fake_dev / "stdout"
    stdout_file.write_text("earlier\n")
    inode = stdout_file.stat().st_ino
    monkeypatch.setattr(output, "SYSTEM_DIRS", (f"{fake_dev}/",))
    output.write_output("report\n", str(stdout_file))
    assert stdout_file.read_text() == "earlier\nreport\n" and stdout_file.stat().st_ino == inode


def _cli(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "logdoctor", *args], text=True, env=env, timeout=120, cwd=REPO, **kw)  # type: ignore[call-overload,no-any-return]


@pytest.mark.parametrize(
    "args",
    [
        ["analyze", str(EXAMPLE)],
        ["analyze", str(EXAMPLE), "-f", "json"],
        ["formats"],
        ["check", str(EXAMPLE), "-q"],
        ["analyze", "--help"],
    ],
)
def test_a_full_stdout_is_one_line_and_exit_2(args: list[str], full_node: Path) -> None:
    with open(full_node, "wb") as out:
        proc = _cli(args, stdout=out, stderr=subprocess.PIPE)
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    _one_line_error(proc.returncode, proc.stderr, "No space left on device")


def test_a_closed_stdout_is_one_line_and_exit_2() -> None:
    proc = _cli(
        ["analyze", str(EXAMPLE), "-f", "png"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        pass_fds=(),
        preexec_fn=lambda: os.close(1),
    )
    assert "Traceback" not in proc.stderr
    _one_line_error(proc.returncode, proc.stderr, "stdout is closed")


def test_a_full_stderr_loses_the_line_but_not_the_exit_code(full_node: Path, tmp_path: Path) -> None:
    with open(full_node, "wb") as err:
        proc = _cli(["analyze", str(tmp_path / "missing.log")], stdout=subprocess.PIPE, stderr=err)
    assert proc.returncode == 2 and proc.stdout == ""
