"""What docs/devices-and-variable-managers.md says a run of several towers shows (a user's
trial of the multi-device options):

* one step of N towers of batch B equals one tower of batch N x B only on the same images
  (tests/test_variable_mgr.py feeds one fixed global batch split over the towers); on
  synthetic data each tower draws its own batch, so a run of the command shows a different
  loss, while every mode with the same seed and towers starts from the same weights and
  images: parameter_server and replicated print the same losses, independent the same first;
* `replicated` runs a hybrid --all_reduce_spec (the original refused one there): each
  gradient is summed by the entry its size selects.
"""

from __future__ import annotations

import functools

import pytest

import helpers

# Two logical CPU towers of the trivial model (helpers.TINY_CLASSES classes): its gradients
# are [768, 1], [1], [1, 4096], [4096] (under 32 KiB) and [4096, 10] (160 KiB), and [10].
_run = functools.partial(helpers.tiny_run, device='cpu', num_gpus=2, batch_size=4,
                         num_batches=2, tf_random_seed=5)


@pytest.fixture(scope='module')
def hybrid():
    """The result and graph of a replicated run with --all_reduce_spec=pscpu:32k:xring."""
    return helpers.tiny_run_and_graph(device='cpu', num_gpus=2, batch_size=4, num_batches=2,
                                      tf_random_seed=5, variable_update='replicated',
                                      all_reduce_spec='pscpu:32k:xring')


def test_synthetic_towers_draw_their_own_images_and_modes_agree(hybrid):
    ps = _run(variable_update='parameter_server')['losses']
    replicated = hybrid[0]['losses']
    assert replicated == pytest.approx(ps, rel=1e-5)
    assert _run(variable_update='independent')['losses'][0] == pytest.approx(ps[0], rel=1e-6)
    # One tower of the global batch: other images (tower 1's are its own), another loss.
    one = helpers.tiny_run(device='cpu', num_gpus=1, batch_size=8, num_batches=2,
                           tf_random_seed=5)['losses']
    assert one[0] != pytest.approx(ps[0], rel=1e-4)


def test_replicated_runs_a_hybrid_spec_by_gradient_size(hybrid):
    graph = hybrid[1]
    ops = graph.get_operations()
    # pscpu: one add_n of the two towers' copies on tower 0's CPU, per gradient under 32 KiB.
    summed = sorted(tuple(op.inputs[0].shape.as_list()) for op in ops
                    if op.type == 'AddN' and len(op.inputs) == 2 and op.inputs[0].shape.rank)
    assert summed == sorted([(768, 1), (1,), (1, 4096), (4096,), (10,)])
    assert {op.device for op in ops if op.type == 'AddN' and op.inputs[0].shape.rank} == {
        '/device:CPU:0'}
    # xring for the 160 KiB one: each tower adds its neighbour's half, 20,480 floats.
    ring = [op for op in ops if op.type == 'AddV2' and 'split' in op.inputs[0].name]
    assert sorted(op.device for op in ring) == ['/device:CPU:0', '/device:CPU:1']
    assert {tuple(op.inputs[0].shape.as_list()) for op in ring} == {(4096 * 10 // 2,)}
