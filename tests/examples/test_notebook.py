"""The quickstart notebook executes offline without error, and is committed without outputs."""

from pathlib import Path

import nbformat
import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "quickstart.ipynb"


def test_notebook_is_committed_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.slow
def test_notebook_executes_and_shows_every_probe(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("MECHINIT_ZOO", str(tmp_path / "empty-user-zoo"))  # the shipped entries only
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    plots = [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert len(plots) == 8  # the attention pattern, one figure per probe, the trajectory over snapshots
    text = "".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "symmetric" in text and "large-init" in text
