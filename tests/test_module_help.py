"""The package's developer generators answer --help and refuse unknown arguments before they
work (stop 56's left-alone note: both measured or printed their tables whatever the arguments)."""

import re
import runpy
import subprocess
import sys

import pytest

GENERATORS = ['tf_cnn_benchmarks.models.model_table',
              'tf_cnn_benchmarks.speed_model.published_scaling']


def _run(module, monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, 'argv', [module, *args])
    # Run as a fresh __main__: an earlier import of the module would make runpy warn.
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(SystemExit) as exited:
        runpy.run_module(module, run_name='__main__')
    out, err = capsys.readouterr()
    return exited.value.code, out, err


@pytest.mark.parametrize('module', GENERATORS)
def test_help_says_what_the_generator_prints_and_does_nothing_else(module, monkeypatch, capsys):
    code, out, err = _run(module, monkeypatch, capsys, '--help')
    assert code == 0
    # (model_table's usage line goes on with its [--check | --write])
    assert re.match(r'usage: python -m %s \[-h\]( \[--check \| --write\])?\n'
                    % re.escape(module), out), out[:200]
    assert ('model_catalog.ROWS' in out) == module.endswith('model_table')
    assert ('published multi-GPU results' in out) == module.endswith('published_scaling')
    assert '|---|' not in out and "('alexnet'" not in out  # no table was made
    assert err == ''


@pytest.mark.parametrize('module', GENERATORS)
def test_an_unknown_argument_is_a_usage_error(module, monkeypatch, capsys):
    code, out, err = _run(module, monkeypatch, capsys, '--bogus')
    assert code == 2 and out == ''
    assert err.splitlines()[-1] == ('python -m %s: error: unrecognized arguments: --bogus'
                                    % module)


@pytest.mark.parametrize('module', GENERATORS)
def test_help_answers_without_loading_tensorflow(module):
    """A user's trial: model_table's --help printed TensorFlow's start-up lines first (its
    measuring modules were imported with it)."""
    code = ('import runpy, sys\nsys.argv = [%r, "--help"]\ntry:\n'
            '    runpy.run_module(%r, run_name="__main__")\nexcept SystemExit as e:\n'
            '    print("exit", e.code, "tensorflow" in sys.modules)\n') % (module, module)
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.splitlines()[-1] == 'exit 0 False', proc.stderr
