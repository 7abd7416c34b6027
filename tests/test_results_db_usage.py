"""A results database that cannot be made or written is a usage error before the run (moved
from tests/test_results_store.py)."""

from __future__ import annotations

import os

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.history import store
from tf_cnn_benchmarks.preflight import output_paths

import results_helpers as rh


@pytest.mark.skipif(os.path.isdir('/proc/self') is False, reason='needs /proc')
def test_a_database_whose_folder_cannot_be_made_is_a_usage_error():
    # os.access says a root process may write /proc; making a folder there fails. Before, the
    # run trained, then ended in a traceback from the fallback's makedirs.
    with pytest.raises(params.ParamsError,
                       match=r'^--results_db: the results database /proc/x/r.sqlite cannot be '
                             r'made: the folder /proc exists but no folder can be made in it \('
                             r'.*\); give another --results_db=PATH \(or --noresults_db'):
        output_paths.check_output_paths(params.make_params(results_db='/proc/x/r.sqlite'))


def _writes_through_permission_bits(folder) -> bool:
    """Whether this process writes a file whose permission bits deny it (root, with
    CAP_DAC_OVERRIDE)."""
    probe = os.path.join(folder, 'probe')
    open(probe, 'w').close()
    os.chmod(probe, 0o444)
    try:
        open(probe, 'ab').close()
    except PermissionError:
        return False
    finally:
        os.remove(probe)
    return True


def test_an_existing_database_this_user_cannot_write_is_a_usage_error(tmp_path):
    # Before: the run trained, then warned 'the run was not recorded'; a database not yet made
    # in a folder it cannot write was refused up front. The read-only reads still work.
    if _writes_through_permission_bits(str(tmp_path)):
        pytest.skip('this process (root) writes a file whose permission bits deny writing; '
                    'the read-only mounts of tests/test_results_read_only.py stop root')
    db = str(tmp_path / 'results.sqlite')
    rh.fill(db, [rh.result(321.0)])
    fix = ("; tf_cnn_results' read-only commands (list, show, history, regressions, html) read "
           "it, a run needs another --results_db=PATH (or --noresults_db to record nothing)")
    output_paths.check_output_paths(params.make_params(results_db=db))  # writable: no error
    for mode, folder_mode, reason in ((0o444, 0o755, 'the file is read-only'),
                                      (0o644, 0o555, 'its folder %s is not writable' % tmp_path)):
        os.chmod(db, mode)
        os.chmod(tmp_path, folder_mode)
        try:
            with pytest.raises(params.ParamsError) as raised:
                output_paths.check_output_paths(params.make_params(results_db=db))
            with store.opened(db, read_only=True) as conn:
                assert rh.count_runs(conn) == 1
        finally:
            os.chmod(tmp_path, 0o755)
            os.chmod(db, 0o644)
        assert str(raised.value) == ('--results_db: the results database %s cannot be written: '
                                     '%s%s' % (db, reason, fix))
