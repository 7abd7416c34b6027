"""The static page (history/page.py) as a browser shows it: headless Chromium (Debian's
`chromium` package; .ci/run installs it) renders OUT_DIR/index.html from disk, and the
screenshot is checked for the plots: the host's line colour, and the red of a step down on
the page of a slowed series but not on the page of a flat one."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

from tf_cnn_benchmarks.history import page, plots, store

import results_helpers as rh

CHROMIUM = next((shutil.which(n) for n in ('chromium', 'chromium-browser', 'google-chrome')
                 if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason='no headless Chromium here (Debian: apt-get install chromium; '
                             '.ci/run installs it where apt-get works)')


def _rgb(text: str) -> tuple[int, int, int]:
    return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))


HOST = _rgb(plots.HOST_COLOURS[0])
STEP = _rgb(plots.STEP_COLOUR)


def _site(tmp_path, name, rates, **kwargs) -> str:
    db = str(tmp_path / (name + '.sqlite'))
    rh.fill(db, rh.series(rates, **kwargs))
    with store.opened(db) as conn:
        rows = store.select_runs(conn)
    return page.write_page(str(tmp_path / name), rows, db, 5.0)


def _screenshot(tmp_path, html_path) -> np.ndarray:
    png = str(tmp_path / (os.path.basename(os.path.dirname(html_path)) + '.png'))
    proc = subprocess.run(
        [CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
         '--force-device-scale-factor=1', '--user-data-dir=%s' % (tmp_path / 'profile'),
         '--window-size=1100,1000', '--screenshot=%s' % png, 'file://' + html_path],
        capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and os.path.exists(png), proc.stderr[-2000:]
    from PIL import Image
    return np.asarray(Image.open(png).convert('RGB'))


def _count(image: np.ndarray, colour) -> int:
    return int(np.all(image == np.array(colour, dtype=image.dtype), axis=-1).sum())


def test_the_page_is_one_file_without_scripts(tmp_path):
    path = _site(tmp_path, 'slowed', [1000, 1010, 990, 700, 705, 698], change_at=3,
                 changed={'label': 'image-2'})
    text = open(path, encoding='utf-8').read()
    assert os.listdir(os.path.dirname(path)) == ['index.html']
    assert '<script' not in text and 'src="http' not in text and 'href=' not in text
    assert '1 step down found.' in text and '<td>image-2</td>' in text
    assert text.count('src="data:image/png;base64,') == 1


@needs_chromium
def test_chromium_shows_the_plot_and_the_step_down_only_where_there_is_one(tmp_path):
    slowed = _screenshot(tmp_path, _site(tmp_path, 'slowed', [1000, 1010, 990, 1005, 995,
                                                              700, 705, 698, 702],
                                         change_at=5, changed={'num_intra_threads': 1}))
    flat = _screenshot(tmp_path, _site(tmp_path, 'flat', [1000, 1010, 990, 1005, 995, 1002,
                                                          998, 1003, 997]))
    assert slowed.shape == flat.shape == (1000, 1100, 3)
    # The host's 2-pixel line with its markers, and the dashed red line of the step (its
    # label too): hundreds of pixels of each, in the plot's colours exactly.
    assert _count(slowed, HOST) > 300 and _count(flat, HOST) > 300
    assert _count(slowed, STEP) > 100
    assert _count(flat, STEP) == 0
