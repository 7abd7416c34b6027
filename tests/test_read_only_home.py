"""A home folder that exists but cannot be written (a read-only mount in a locked-down
container): matplotlib's settings go to a temporary folder of the process, as they do under a
home that does not exist (runtime/runtime_env.py spare_home), so the commands that plot print
none of its warnings.

A CI engineer's trial: `tf_cnn_sweep`, `tf_cnn_sweep report` and `tf_cnn_results history`
printed 'mkdir -p failed for path ~/.config/matplotlib: [Errno 30] Read-only file system' and
'Matplotlib created a temporary cache directory ...' on stderr, though docs/output.md said the
settings go to a temporary folder (which was done only for HOME=/nonexistent).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from test_sweep import _records

from tf_cnn_benchmarks.runtime import runtime_env

import results_helpers as rh
from results_helpers import private_mounts as _private_mounts

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def unspared(monkeypatch):
    """No library folder variable set, and spare_home not done yet in this process."""
    for name in runtime_env.HOME_WRITERS + ('XDG_CONFIG_HOME', 'XDG_CACHE_HOME'):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(runtime_env, '_SPARED', False)


def test_settings_folders_that_cannot_be_made_go_to_a_temporary_folder(tmp_path, monkeypatch,
                                                                        unspared):
    # ~/.config is a file: ~/.config/matplotlib cannot be made, for any user (root included);
    # ~/.keras can be: KERAS_HOME stays unset.
    home = tmp_path / 'home'
    home.mkdir()
    (home / '.config').write_text('not a folder')
    monkeypatch.setenv('HOME', str(home))
    folder = runtime_env.spare_home()
    try:
        assert folder and not folder.startswith(str(home))
        assert os.environ['MPLCONFIGDIR'] == folder and 'KERAS_HOME' not in os.environ
        assert runtime_env.spare_home() is None  # once a process
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    monkeypatch.setattr(runtime_env, '_SPARED', False)
    monkeypatch.delenv('MPLCONFIGDIR')
    (home / '.config').unlink()  # a home whose folders can be made: nothing to spare
    assert runtime_env.spare_home() is None and 'MPLCONFIGDIR' not in os.environ
    assert runtime_env.settings_folders({'HOME': '/h', 'XDG_CONFIG_HOME': '/c'}) == {
        'KERAS_HOME': ['/h/.keras'], 'MPLCONFIGDIR': ['/c/matplotlib', '/h/.cache/matplotlib']}


_PLOTS = '''
set -e
mount --bind -o ro "$HOME" "$HOME"
cd "$REPO"
"$PY" -m tools.results_cli history --results_db="$DB" --png="$OUT/h.png"; echo "STATUS $?"
"$PY" -m tools.sweep report "$OUT/sweep" > /dev/null; echo "STATUS $?"
'''


@pytest.mark.cli
def test_the_commands_that_plot_under_a_read_only_home_print_no_matplotlib_warning(tmp_path):
    why = _private_mounts()
    if why:
        pytest.skip(why)
    home, out = tmp_path / 'home', tmp_path / 'out'
    home.mkdir()
    out.mkdir()
    db = str(tmp_path / 'r.sqlite')
    rh.fill(db, rh.series([1000, 1010, 990]))
    rh.sweep_folder(str(out / 'sweep'), _records('trivial', 8, 1, [100.0, 101.0]))
    env = {k: v for k, v in os.environ.items() if k not in runtime_env.HOME_WRITERS + (
        'XDG_CONFIG_HOME', 'XDG_CACHE_HOME')}
    env.update(HOME=str(home), REPO=REPO, PY=sys.executable, DB=db, OUT=str(out))
    proc = subprocess.run(['unshare', '-rm', 'bash', '-c', _PLOTS], env=env,
                          capture_output=True, text=True, timeout=300)
    statuses = [x for x in proc.stdout.splitlines() if x.startswith('STATUS')]
    assert statuses == ['STATUS 0', 'STATUS 0'], proc.stdout + proc.stderr
    assert proc.stderr == '', proc.stderr  # before: mkdir -p failed ..., Matplotlib created ...
    assert (out / 'h.png').stat().st_size > 0
    assert any(name.endswith('.png') for name in os.listdir(out / 'sweep' / 'plots'))
    assert os.listdir(home) == []
