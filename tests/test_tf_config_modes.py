"""TF_CONFIG read as TensorFlow reads it, and the cluster modes it cannot serve: a ps task in
collective_all_reduce refused on every task, a task index given as a string of digits."""

from __future__ import annotations

import pytest
from test_cluster_resolvers import PS, TFJOB, WORKER, _params, _tf_config

from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import resolvers


def test_collective_all_reduce_refuses_a_ps_task(monkeypatch):
    """A TF_CONFIG with a ps and --variable_update=collective_all_reduce waited for the ps,
    which no task uses, for --startup_timeout_secs without a word: every task, the ps too, is
    refused with one line (TensorFlow's collective strategy leaves a ps out; this project's
    collective mode has none). The host flags' --ps_hosts are refused by the flag rules."""
    message = ('--variable_update=collective_all_reduce has no ps task (its workers all-reduce '
               'among themselves), and TF_CONFIG has 1 (%s); drop the PS replica, or use '
               'parameter_server or distributed_replicated.' % PS)
    for task_type in ('chief', 'worker', 'ps'):
        _tf_config(monkeypatch, task_type, 0)
        with pytest.raises(params_lib.ParamsError) as raised:
            resolvers.resolve(_params(variable_update='collective_all_reduce'))
        assert str(raised.value) == message
    flags_given = _params(variable_update='collective_all_reduce', job_name='worker',
                          ps_hosts=['localhost:1'], worker_hosts=['localhost:2'])
    with pytest.raises(params_lib.ParamsError) as raised:
        params_lib.validate_params(flags_given)
    assert str(raised.value) == ('--variable_update=collective_all_reduce has no ps task (its '
                                 'workers all-reduce among themselves); drop --ps_hosts.')


@pytest.mark.parametrize('index, expected', [('1', 1), ('0', 0), (1, 1)])
def test_a_task_index_given_as_a_string_of_digits_is_read_as_tensorflow_reads_it(
        monkeypatch, index, expected):
    """TensorFlow's TFConfigClusterResolver reads "index": "0" with int(): accepted here too,
    the same task as the number (a string that is no whole number is refused: above)."""
    _tf_config(monkeypatch, 'worker', index, dict(TFJOB['cluster'],
                                                   worker=[WORKER, 'worker-1.svc:2222']))
    resolution = resolvers.resolve(_params())
    assert (resolution.params.job_name, resolution.params.task_index) == ('worker', expected + 1)
    assert resolution.description.startswith('TF_CONFIG (task worker %d: ' % expected)
