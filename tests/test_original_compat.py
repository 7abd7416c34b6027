"""Scripts and habits of the original tf_cnn_benchmarks: absl's help flags."""

import pytest

from tf_cnn_benchmarks import flag_parsing
from tf_cnn_benchmarks.params import ParamsError

import helpers


@pytest.mark.parametrize('argv, wanted, rest', [
    (['--help=false', '--model=x'], None, ['--model=x']),
    (['--nohelp', '--nohelpxml'], None, []),
    (['--helpxml'], 'xml', []),
    (['--helpfull=1'], 'help', []),
    (['-?'], 'help', []),
    (['--model=x', '--', '--help'], None, ['--model=x', '--', '--help']),
])
def test_absls_help_flags_read_as_absl_reads_them(argv, wanted, rest):
    # --help=false was 'error: Unknown command line flag 'help'' (exit 2), and --helpxml too.
    assert flag_parsing.help_request(['prog'] + argv) == (wanted, ['prog'] + rest)
    with pytest.raises(ParamsError, match='--help=maybe: a boolean flag takes true or false'):
        flag_parsing.help_request(['prog', '--help=maybe'])


@pytest.mark.cli
def test_helpxml_prints_every_flag_and_help_false_runs_on():
    done = helpers.run_command('--helpxml')
    assert done.returncode == 0 and done.stdout.startswith('<?xml')
    assert '<name>num_batches</name>' in done.stdout and '<usage>usage: tf_cnn' in done.stdout
    assert helpers.run_command('--help=false', '--nohelp', '--list_models').returncode == 0
