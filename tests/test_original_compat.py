"""Scripts and habits of the original tf_cnn_benchmarks: absl's help flags, the --mkl advice."""

import pytest

from tf_cnn_benchmarks import flag_parsing
from tf_cnn_benchmarks.params import ParamsError, make_params
from tf_cnn_benchmarks.preflight import ineffective_flags

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


@pytest.mark.parametrize('loaded, advice', [
    (False, '; for the threads it set use --num_intra_threads and --num_inter_threads (this '
            'TensorFlow loads no OpenMP runtime, so the --kmp_* flags do nothing either)'),
    (True, '; for the threads it set use --num_intra_threads, and --kmp_blocktime, '
           '--kmp_affinity, --kmp_settings for the OpenMP runtime this build loads'),
])
def test_the_mkl_advice_names_no_flag_that_then_warns(loaded, advice):
    # It advised --kmp_blocktime, --kmp_affinity, --kmp_settings, and giving them printed three
    # lines: '--kmp_blocktime has no effect: no OpenMP runtime is loaded ...'.
    [line] = ineffective_flags.messages(make_params(mkl=True), 0, 'synthetic',
                                        openmp_loaded=lambda: loaded, device='cpu')
    assert line.startswith('--mkl has no effect on TensorFlow 2.21') and line.endswith(
        'use TF_ENABLE_ONEDNN_OPTS=0 to turn it off' + advice)
