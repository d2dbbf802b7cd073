"""The probe and sweep reports as a person sees them: rendered in headless Chromium at 1366 and 1920
px, every figure whole (at least 300×250 px, inside the viewport, its drawing inside its box), every
axis titled, and no two titles of a figure overlapping. Screenshots land in the test's temp folder.

Needs Debian's ``chromium`` and ``chromium-driver`` and the ``selenium`` package, and fails without
them (never skips): .ci/run installs them; scripts/test.sh deselects these tests (``-m "not browser"``)
with a warning on a machine that lacks them."""

import shutil

import pytest
from mechinit.probes.report import write_report

from mechinit import probes, zoo
from mechinit.sweeps.grid import SweepSpec, reduce_runs
from mechinit.sweeps.report import write_report as write_sweep_report
from tests.conftest import build_cfg

pytestmark = pytest.mark.browser
WIDTHS = (1366, 1920)
MEASURE = """
const vw = document.documentElement.clientWidth;
return [...document.querySelectorAll('.js-plotly-plot')].map(d => {
  const r = d.getBoundingClientRect(), svg = d.querySelector('.main-svg').getBoundingClientRect();
  const titles = [...d.querySelectorAll('.gtitle, .annotation-text')].filter(t => t.textContent.trim())
    .map(t => { const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom, t.textContent]; });
  const n_axes = Object.keys(d._fullLayout).filter(k => /^[xy]axis\\d*$/.test(k) && d._fullLayout[k].visible !== false).length;
  const n_titled = [...d.querySelectorAll('text')].filter(t => /^[xy]\\d*title$/.test(t.getAttribute('class') || '')
    && t.textContent.trim()).length;
  const bar = d.querySelector('.modebar'), title = d.querySelector('.gtitle');
  const mb = bar ? bar.getBoundingClientRect() : null, tb = title ? title.getBoundingClientRect() : null;
  return {id: d.id, w: r.width, h: r.height, left: r.left, right: r.right, svg_right: svg.right, vw: vw,
          title_box: tb ? [tb.left, tb.top, tb.right, tb.bottom] : null, modebar_box: mb && mb.width ? [mb.left, mb.top, mb.right, mb.bottom] : null,
          titles: titles, n_axes: n_axes, n_titled: n_titled};
});
"""


def _driver(width: int):
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        webdriver = None
    if not (chromium and chromedriver and webdriver):
        pytest.fail("needs chromium, chromium-driver (apt-get) and selenium (pip); or deselect with -m 'not browser'")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--hide-scrollbars", f"--window-size={width},1000"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(chromedriver), options=options)


def _overlap(a, b) -> bool:
    return a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1


def _check_page(path, shots, name):
    for width in WIDTHS:
        driver = _driver(width)
        try:
            driver.get(path.as_uri())
            driver.execute_script("return document.readyState")
            figs = driver.execute_script(MEASURE)
            height = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(width, min(height + 100, 16000))
            figs = driver.execute_script(MEASURE)  # after the resize, as a person scrolling would see them
            driver.save_screenshot(str(shots / f"{name}-{width}.png"))
        finally:
            driver.quit()
        assert figs, "no plotly figure rendered"
        for f in figs:
            where = f"{name} at {width}px, {f['id']}"
            assert f["w"] >= 300 and f["h"] >= 250, f"{where}: figure box {f['w']:.0f}x{f['h']:.0f}"
            assert f["left"] >= 0 and f["right"] <= f["vw"] + 1 and f["svg_right"] <= f["right"] + 1, f"{where}: cut off at the right"
            assert f["n_titled"] == f["n_axes"], f"{where}: {f['n_axes'] - f['n_titled']} axes without a title"
            if f["title_box"]:
                assert f["title_box"][2] <= f["right"] + 1, f"{where}: the title runs past the figure"
                if f["modebar_box"]:
                    assert not _overlap(f["title_box"], f["modebar_box"]), f"{where}: the title runs under the toolbar"
            for i, a in enumerate(f["titles"]):
                for b in f["titles"][i + 1:]:
                    assert not _overlap(a, b), f"{where}: titles overlap: {a[4]!r} / {b[4]!r}"


def test_probe_report_shows_every_figure_whole(tmp_path):
    targets = [zoo.target(name) for name in ("cpu-small-init", "cpu-large-init")]
    results = probes.run_all(targets)
    report = write_report(tmp_path / "probes", results, {t.name: t.summary() for t in targets})
    _check_page(report, tmp_path, "probe-report")
    text = report.read_text()
    assert "seen-pair test accuracy" in text and "(4,3) held out: verdict" in text and "symmetric (inferential 0," in text


def test_sweep_report_shows_every_figure_whole(tmp_path):
    from mechinit.runs.ids import run_id
    from tests.mechinit.test_sweep import _fake_run

    spec = SweepSpec(build_cfg(**{"train.epochs": 1}), {"init.gamma": (0.5, 0.8), "model.n_layers": (1, 2), "train.seed": (0, 1)})
    for cfg in spec.configs():
        _fake_run(tmp_path / "runs" / run_id(cfg), cfg.init.gamma, 1 - cfg.init.gamma, 0.5 if cfg.model.n_layers == 2 else 1.0)
    summary = reduce_runs(spec, tmp_path / "runs")
    report = write_sweep_report(tmp_path, {**summary, "failed": {}})
    _check_page(report, tmp_path, "sweep-report")
    assert "<table>" in report.read_text()
