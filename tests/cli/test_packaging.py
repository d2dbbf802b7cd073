"""One import name: the CLI, the probes and the zoo install under ``mechinit``, so a user's own
``cli.py``, ``zoo/`` or ``probes/`` in the working folder cannot shadow them."""

import os
import subprocess
import sys
from pathlib import Path


def _hostile_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / "zoo").mkdir(parents=True)  # an empty folder: `import zoo` would be a namespace package
    (folder / "probes").mkdir()
    (folder / "cli.py").write_text("print('HIJACKED'); raise SystemExit(7)\n")
    return folder


def test_python_m_mechinit_and_the_console_script_ignore_a_local_cli_and_zoo(tmp_path):
    folder = _hostile_folder(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = Path(sys.executable).parent / "mechinit"
    for argv in ([sys.executable, "-m", "mechinit", "zoo", "list"], [str(script), "zoo", "list"]):
        if not Path(argv[0]).exists():
            continue
        done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        assert "HIJACKED" not in done.stdout and "small-init" in done.stdout


def test_the_library_imports_under_mechinit_only(tmp_path):
    folder = _hostile_folder(tmp_path)
    code = ("import mechinit.zoo, mechinit.probes, mechinit.cli, importlib.util, sys\n"
            "assert 'condensation' in mechinit.probes.available()\n"
            "assert mechinit.zoo.resolve('small-init').id.startswith('anchor-')\n"
            "print(mechinit.zoo.__file__)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not done.stdout.strip().startswith(str(folder))


def test_the_wheel_carries_code_index_and_cards_but_no_weights_tests_docs_or_experiments(tmp_path):
    import zipfile

    root = Path(__file__).parents[2]
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(root)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    names = zipfile.ZipFile(next(tmp_path.glob("mechinit-*.whl"))).namelist()
    assert "mechinit/zoo/entries/index.json" in names and "mechinit/readout.py" in names
    assert not [n for n in names if n.endswith(".safetensors")]
    assert not [n for n in names if n.split("/")[0] in ("tests", "docs", "experiments", "bench", "examples")]


def test_an_entry_without_its_weights_gets_one_line_naming_where_it_looked(tmp_path):
    import json
    import shutil

    import pytest
    from mechinit.zoo.store import SHIPPED, read_index

    from mechinit import zoo

    index = read_index(SHIPPED)
    entry = index["aliases"]["cpu-large-init-s1"]
    shutil.copytree(SHIPPED / entry, tmp_path / entry, ignore=shutil.ignore_patterns("*.safetensors"))
    (tmp_path / "index.json").write_text(json.dumps({"entries": {entry: index["entries"][entry]}, "aliases": {}}))
    with pytest.raises(zoo.ZooError, match="has no weights here") as raised:
        zoo.load(entry, zoo_dir=tmp_path)
    assert str(tmp_path / entry / "model.safetensors") in str(raised.value) and "\n" not in str(raised.value)


def test_a_checkout_does_not_expose_its_other_folders_under_mechinit(tmp_path):
    for name in ("docs", "tests", "bench", "experiments"):
        done = subprocess.run([sys.executable, "-c", f"import mechinit.{name}"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and "No module named" in done.stderr, name
