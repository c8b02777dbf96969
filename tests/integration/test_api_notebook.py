"""docs/api.ipynb runs in a real Jupyter kernel: the report shows as its HTML with the verdict in it,
the figure renders as an image, and no cell fails."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import nbclient
import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "docs" / "api.ipynb"


def _outputs(cell: Any, kind: str) -> list[str]:
    return [o["data"][kind] for o in cell.get("outputs", []) if kind in o.get("data", {})]


def _code(nb: Any, starts: str) -> Any:
    return next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(starts))


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The notebook run once in a fresh kernel of this interpreter, importing this checkout's logdoctor;
    the kernel's files (connection file, IPython profile) go to a temporary folder."""
    home = tmp_path_factory.mktemp("jupyter")
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        nb = nbformat.read(NOTEBOOK, as_version=4)
        nbclient.NotebookClient(
            nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
        ).execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def test_the_notebook_is_committed_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")


def test_no_cell_fails(executed: Any) -> None:
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert errors == []


def test_the_report_shows_as_its_html_with_the_verdict(executed: Any) -> None:
    html = _outputs(_code(executed, "report = logdoctor.analyze(history"), "text/html")
    assert len(html) == 1
    page = html[0]
    assert page.startswith('<div class="logdoctor-report">') and "<script" not in page
    assert "ERROR LD501 sorted-batching" in page and "length-sorted batches" in page
    assert "<svg" in page  # the charts, inline


def test_the_attributes_say_what_the_html_says(executed: Any) -> None:
    printed = "".join(o.get("text", "") for o in _code(executed, "print(report.status").outputs)
    assert printed.startswith("error sorted ") and "LD501 sorted-batching 1 900" in printed


def test_the_figure_renders_as_an_image(executed: Any) -> None:
    png = _outputs(_code(executed, "report.figure()"), "image/png")
    assert len(png) == 1
    data = base64.b64decode(png[0])
    assert data.startswith(b"\x89PNG") and len(data) > 20_000


def test_the_log_history_report_is_printed(executed: Any) -> None:
    text = "".join(o.get("text", "") for o in _code(executed, "rng = np.random.default_rng(1)").outputs)
    assert "logdoctor: trainer.state.log_history" in text and "No problems found" in text
    assert "records, 105 rows" in text


def test_the_comparison_shows_the_fix_worked(executed: Any) -> None:
    html = _outputs(_code(executed, "fixed = logdoctor.analyze("), "text/html")
    assert len(html) == 1 and "The fix worked" in html[0] and "<script" not in html[0]
