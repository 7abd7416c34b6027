"""Users' findings: flags that did nothing printed no warning, or a warning with a reason that
was not true for the run (preflight/ineffective_flags.py).

* --gradient_repacking, --agg_small_grads_max_bytes/_group and --hierarchical_copy are read only
  by the managers that all-reduce (replicated and distributed_all_reduce); a run of any other
  --variable_update said nothing about them, nor did replicated on one tower (with
  --all_reduce_spec and --use_nccl), where nothing is all-reduced.
* --variable_consistency=relaxed acts in replicated training only (it defers the all-reduced
  gradients by one step, as the original's); the old line said it needed --staged_vars.
* --compact_gradient_transfer (default on) acts with --use_fp16 in replicated on several devices;
  the old line said it never did.
* --distortions and --distort_color with --eval (or --forward_only): the images get the central
  crop.
* --eval reads ImageNet shards with tf.data whatever --use_datasets says, and its tf.data honours
  the prefetch, the cache, the private threads and the interleave: the old line 'no effect
  without --use_datasets (RecordInput reads the files)' was false there.
* --forward_only --summary_verbosity=2 wrote level 1's summaries only (level 2 adds the
  gradients' histogram) and said nothing.
* Multi-device options: NCCL on one CPU tower was an error where the docs said it warns;
  --hierarchical_copy with --all_reduce_spec was refused (the original ignored it);
  --batch_group_size on synthetic data did nothing and said nothing.
"""

from __future__ import annotations

import pytest
from absl import flags

from tf_cnn_benchmarks import flag_parsing, params
from tf_cnn_benchmarks.preflight import ineffective_flags

import helpers

REAL = ['--data_dir=/d', '--data_name=imagenet']


def warnings_of(*args: str) -> list[str]:
    """The 'no effect' lines the command prints for `args` (test_typed_defaults' way)."""
    fv = flags.FlagValues()
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + list(args), fv)
    given = frozenset(n for n in params.SPEC_BY_NAME if fv[n].present)
    return ineffective_flags.messages(p, 0, None, given)


def _on(mode: str) -> list[str]:
    """Flags of a two-device (or two-worker) run of --variable_update=mode."""
    cluster = {
        'distributed_replicated': ['--job_name=worker', '--ps_hosts=h:1', '--worker_hosts=h:2,h:3'],
        'collective_all_reduce': ['--job_name=worker', '--worker_hosts=h:2,h:3'],
        'distributed_all_reduce': ['--job_name=controller', '--controller_host=h:1',
                                   '--worker_hosts=h:2,h:3'],
    }
    return ['--variable_update=' + mode, '--device=cpu', '--num_gpus=2'] + cluster.get(mode, [])


ALL_REDUCE_SET = ['--gradient_repacking=2', '--agg_small_grads_max_group=3',
                  '--hierarchical_copy']


def test_the_modes_that_read_the_all_reduce_flags_are_the_managers_that_all_reduce():
    """ALL_REDUCE_MODES is the rule's truth: the managers built on VariableMgrReplicated, whose
    all-reduce (allreduce.all_reduce_gradients) reads the flags; no other manager does."""
    from tf_cnn_benchmarks.variable_managers import distributed, one_host
    managers = {**one_host.MANAGERS, **distributed.MANAGERS}
    assert set(managers) == set(params.VARIABLE_UPDATES)
    reading = {name for name, cls in managers.items()
               if issubclass(cls, one_host.VariableMgrReplicated)}
    assert reading == set(ineffective_flags.ALL_REDUCE_MODES)


@pytest.mark.parametrize('mode', params.VARIABLE_UPDATES)
def test_all_reduce_flags_warn_under_every_variable_update_that_does_not_read_them(mode):
    said = warnings_of(*_on(mode), *ALL_REDUCE_SET, '--agg_small_grads_max_bytes=0')
    warned = [m for m in said if m.split(' ', 1)[0] in (
        '--gradient_repacking', '--agg_small_grads_max_group', '--hierarchical_copy')]
    if mode in ineffective_flags.ALL_REDUCE_MODES:
        assert warned == []
        return
    assert [m.split(' ', 1)[0] for m in warned] == [
        '--gradient_repacking', '--agg_small_grads_max_group', '--hierarchical_copy']
    for line in warned:  # one line each, with the mode and what to use
        assert (' has no effect with --variable_update=%s (' % mode) in line
        assert line.endswith('only replicated and distributed_all_reduce all-reduce the '
                             'gradients of several devices: use one of them)')


def test_the_reported_all_reduce_flags_of_a_parameter_server_run():
    said = warnings_of('--variable_update=parameter_server', '--device=cpu', '--num_gpus=2',
                       '--gradient_repacking=2', '--hierarchical_copy')
    why = ('has no effect with --variable_update=parameter_server (the towers\' gradients are '
           'summed into one update of the shared variables; only replicated and '
           'distributed_all_reduce all-reduce the gradients of several devices: use one of them)')
    assert said == ['--gradient_repacking ' + why, '--hierarchical_copy ' + why]
    # On one device the mode's line alone: no second one about the device count.
    one = warnings_of('--variable_update=parameter_server', '--hierarchical_copy')
    assert one == ['--hierarchical_copy ' + why]


ONE_TOWER = ('has no effect with --variable_update=replicated on one device (one tower: there '
             'is no all-reduce, nothing to pack, merge or copy; --num_gpus=N gives N towers)')


@pytest.mark.parametrize('flag', ['--gradient_repacking=2', '--all_reduce_spec=xring',
                                  '--agg_small_grads_max_bytes=1000', '--hierarchical_copy'])
def test_all_reduce_flags_warn_with_replicated_on_one_tower(flag):
    """`--device=cpu --variable_update=replicated --gradient_repacking=2` said nothing, though
    with one tower nothing is all-reduced (the same on one GPU)."""
    name = flag.split('=')[0]
    assert warnings_of('--device=cpu', '--variable_update=replicated', flag) == [
        '%s %s' % (name, ONE_TOWER)]
    assert warnings_of('--device=cpu', '--num_gpus=2', '--variable_update=replicated',
                       flag) == []
    # --plan_scaling plans the manager on more devices, where the flag chooses the plan.
    assert warnings_of('--device=gpu', '--gpu_model=V100', '--variable_update=replicated',
                       '--plan_scaling', flag) == []


def test_use_nccl_warns_with_replicated_on_one_gpu():
    assert warnings_of('--device=gpu', '--variable_update=replicated', '--use_nccl') == [
        '--use_nccl ' + ONE_TOWER]
    assert warnings_of('--device=gpu', '--variable_update=replicated', '--nouse_nccl') == []


def test_one_tower_is_returned_as_it_is_whatever_the_all_reduce_flags():
    """The rule's truth (variable_managers/allreduce.py): one device's gradients come back as
    the same tensors, before any spec, pack, group, hierarchy or NCCL is used."""
    import tensorflow as tf

    from tf_cnn_benchmarks.variable_managers import allreduce
    for device, kwargs in (('/cpu:0', dict(num_packs=2)),
                           ('/cpu:0', dict(agg_small_grads_max_bytes=1000)),
                           ('/cpu:0', dict(hierarchical_copy=True)),
                           ('/cpu:0', dict(spec_tuples=allreduce.parse_all_reduce_spec(
                               'pscpu:32k:xring'))),
                           ('/gpu:0', dict(use_nccl=True))):
        with tf.Graph().as_default() as graph:
            with tf.compat.v1.device(device):
                grads = [tf.zeros([3, 4]), tf.zeros([5])]
            ops = len(graph.get_operations())
            out = allreduce.all_reduce_gradients([grads], [device], **kwargs)
            assert out[0][0] is grads[0] and out[0][1] is grads[1], kwargs
            assert len(graph.get_operations()) == ops, kwargs


@pytest.mark.parametrize('mode', params.VARIABLE_UPDATES)
def test_the_all_reduce_algorithm_flags_warn_like_the_others_where_nothing_all_reduces(mode):
    """`--variable_update=parameter_server --all_reduce_spec=pscpu` was refused with
    `--use_nccl/--all_reduce_spec need --variable_update=replicated or distributed_all_reduce`,
    naming a flag not given, while --gradient_repacking there warned (as the docs say every
    all-reduce flag does, and as the original read --all_reduce_spec in its all-reduce
    managers only). Both now warn, the spec still checked."""
    said = warnings_of(*_on(mode), '--all_reduce_spec=pscpu')
    if mode in ineffective_flags.ALL_REDUCE_MODES:
        assert said == []
        return
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + _on(mode) + [
        '--all_reduce_spec=pscpu', '--use_nccl'], flags.FlagValues())
    params.validate_params(p)  # refused no more (NCCL on these CPU towers would never run)
    assert said == ['--all_reduce_spec has no effect with --variable_update=%s (%s; only '
                    'replicated and distributed_all_reduce all-reduce the gradients of several '
                    'devices: use one of them)' % (mode, ineffective_flags._OWN_AGGREGATION[mode])]
    with pytest.raises(params.ParamsError, match='unknown algorithm'):  # a bad spec: refused
        params.validate_params(params.make_params(variable_update=mode, all_reduce_spec='x'))


def test_nccl_on_the_cpu_where_nothing_all_reduces_says_both_in_one_line():
    """`--use_nccl --variable_update=parameter_server` on a CPU said only that NCCL needs GPUs;
    the mode the warning advises would refuse NCCL there too, so its line says so."""
    why = ('has no effect with --variable_update=parameter_server (the towers\' gradients are '
           'summed into one update of the shared variables; only replicated and '
           'distributed_all_reduce all-reduce the gradients of several devices: use one of '
           'them); NCCL also needs GPUs, and this run is on the CPU, where replicated '
           'all-reduces with --all_reduce_spec=xring or pscpu')
    ps = ['--variable_update=parameter_server']
    assert warnings_of(*ps, '--use_nccl') == ['--use_nccl ' + why]  # no GPU visible
    assert warnings_of(*ps, '--device=cpu', '--all_reduce_spec=nccl') == [
        '--all_reduce_spec ' + why]
    params.check_nccl(flag_parsing.parse_flags(['tf_cnn_benchmarks', *ps, '--use_nccl'],
                                               flags.FlagValues()), 'cpu')  # no error
    # On a GPU only the mode is the problem; where NCCL would run, the CPU stays an error.
    fv = flags.FlagValues()
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', *ps, '--use_nccl'], fv)
    on_gpu = ineffective_flags.messages(p, 2, None, frozenset(
        n for n in params.SPEC_BY_NAME if fv[n].present))
    assert on_gpu == ['--use_nccl ' + why.split('; NCCL also')[0]]
    with pytest.raises(params.ParamsError, match='--use_nccl needs GPUs'):
        params.check_nccl(params.make_params(variable_update='replicated', use_nccl=True,
                                             num_gpus=2), 'cpu')


@pytest.mark.parametrize('flag', ['--use_nccl', '--all_reduce_spec=nccl'])
def test_nccl_on_one_cpu_tower_warns_as_the_docs_say(flag):
    """`--num_gpus=1 --variable_update=replicated --use_nccl` on the CPU was an error, though
    the devices page says each all-reduce flag warns on one device (the original ran NCCL on
    one GPU): a warning that adds that NCCL needs GPUs, and the run gets no NCCL to build."""
    args = ('--device=cpu', '--variable_update=replicated', flag)
    assert warnings_of(*args) == ['%s %s%s' % (flag.split('=')[0], ONE_TOWER,
                                               ineffective_flags.NCCL_ON_CPU)]
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', *args], flags.FlagValues())
    params.validate_params(p)
    resolved = params.resolve_params(p, num_visible_gpus=0)
    assert not resolved.use_nccl and resolved.all_reduce_spec is None
    on_gpu = params.make_params(device='gpu', variable_update='replicated', use_nccl=True)
    assert params.resolve_params(on_gpu, num_visible_gpus=1).use_nccl  # as the original
    with pytest.raises(params.ParamsError, match='needs GPUs'):  # two towers would run it
        params.validate_params(params.make_params(**dict(p._asdict(), num_gpus=2)))


@pytest.mark.cli
def test_nccl_on_one_cpu_tower_runs_with_its_warning():
    out = helpers.run_command('--model=trivial', '--batch_size=2', '--num_batches=1',
                              '--num_warmup_batches=0', '--image_size=8', '--noresults_db',
                              '--device=cpu', '--variable_update=replicated',
                              '--all_reduce_spec=nccl')
    assert out.returncode == 0, out.stderr
    assert ('warning: --all_reduce_spec ' + ONE_TOWER) in out.stderr


def test_hierarchical_copy_warns_where_the_spec_or_nccl_chooses_the_all_reduce():
    """The original ignored --hierarchical_copy with --all_reduce_spec; here it was refused,
    even on one device, where the docs say these flags warn."""
    two = ['--device=cpu', '--num_gpus=2', '--variable_update=replicated', '--hierarchical_copy']
    assert warnings_of(*two, '--all_reduce_spec=xring') == [
        '--hierarchical_copy has no effect with --all_reduce_spec (the spec chooses the '
        'all-reduce, as in the original; --hierarchical_copy is the spec psgpu/psgpu)']
    plan = ['--device=gpu', '--gpu_model=V100', '--dry_run', '--num_gpus=2',
            '--variable_update=replicated', '--hierarchical_copy', '--use_nccl']
    assert warnings_of(*plan) == [
        '--hierarchical_copy has no effect with --use_nccl (NCCL all-reduces every gradient; '
        '--hierarchical_copy is the spec psgpu/psgpu)']
    one = warnings_of('--device=cpu', '--variable_update=replicated', '--hierarchical_copy',
                      '--all_reduce_spec=xring')
    assert one == ['--all_reduce_spec ' + ONE_TOWER, '--hierarchical_copy ' + ONE_TOWER]
    # The manager is given the spec alone (allreduce.all_reduce_gradients refuses both).
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', *two, '--all_reduce_spec=xring'],
                                 flags.FlagValues())
    params.validate_params(p)
    resolved = params.resolve_params(p, num_visible_gpus=0)
    assert (resolved.hierarchical_copy, resolved.all_reduce_spec) == (False, 'xring')
    assert params.resolve_params(p._replace(all_reduce_spec=None), 0).hierarchical_copy


def test_batch_group_size_warns_on_synthetic_data():
    """Synthetic batches live on each device (preprocessing.SyntheticInput: staging_depth
    0), so --batch_group_size, which sizes the staging of real data's batches, did nothing
    and said nothing."""
    assert warnings_of('--batch_group_size=4') == [
        '--batch_group_size has no effect on synthetic data (it sets the batches staged per '
        'device; synthetic batches are made on each device, and nothing is staged)']
    assert warnings_of('--batch_group_size=1') == []  # the default asks for nothing
    assert warnings_of(*REAL, '--batch_group_size=4') == []
    from tf_cnn_benchmarks import preprocessing
    synthetic = preprocessing.SyntheticInput(batch_size=2, image_size=8, num_classes=10,
                                             data_format='NHWC', dtype=None)
    assert synthetic.staging_depth == 0


def test_all_reduce_flags_in_forward_only_and_eval_runs():
    assert warnings_of('--variable_update=replicated', '--num_gpus=2', '--device=cpu',
                       '--gradient_repacking=2', '--forward_only') == [
        '--gradient_repacking has no effect with --forward_only (no gradients, no updates)']
    assert warnings_of('--variable_update=replicated', '--num_gpus=2', '--device=cpu',
                       '--hierarchical_copy', '--eval', '--train_dir=/t') == [
        '--hierarchical_copy has no effect with --eval (nothing is trained)']


def test_variable_consistency_warns_outside_replicated_training():
    assert warnings_of('--variable_consistency=relaxed') == [
        '--variable_consistency has no effect with --variable_update=parameter_server (relaxed '
        'defers the gradients of --variable_update=replicated by one step, as in the original; '
        'elsewhere each step applies its own)']
    assert len(warnings_of('--variable_consistency=relaxed', '--staged_vars')) == 1
    assert warnings_of('--variable_consistency=relaxed', '--variable_update=replicated') == []
    assert warnings_of('--variable_consistency=relaxed', '--variable_update=replicated',
                       '--forward_only') == [
        '--variable_consistency has no effect with --forward_only (no gradients)']
    assert warnings_of('--variable_consistency=strong') == []  # the default asks for nothing


def test_compact_gradient_transfer_warns_where_nothing_is_compacted():
    two = ('--variable_update=replicated', '--num_gpus=2', '--device=cpu')
    assert warnings_of('--compact_gradient_transfer', *two) == [
        '--compact_gradient_transfer has no effect without --use_fp16 (it moves float32 '
        'gradients as float16 in the all-reduce of --variable_update=replicated)']
    assert warnings_of('--nocompact_gradient_transfer', *two) == [
        '--compact_gradient_transfer has no effect without --use_fp16 (it moves float32 '
        'gradients as float16 in the all-reduce of --variable_update=replicated)']
    assert warnings_of('--nocompact_gradient_transfer', '--use_fp16', *two) == []
    assert warnings_of('--compact_gradient_transfer', '--use_fp16', *two) == []
    assert warnings_of('--compact_gradient_transfer', '--use_fp16', '--num_gpus=2',
                       '--device=cpu') == [
        '--compact_gradient_transfer has no effect with --variable_update=parameter_server '
        '(only the all-reduce of --variable_update=replicated moves gradients as float16)']
    assert warnings_of('--compact_gradient_transfer', '--use_fp16',
                       '--variable_update=replicated', '--device=cpu') == [
        '--compact_gradient_transfer has no effect with --variable_update=replicated on one '
        'device (one tower: nothing is transferred)']
    assert warnings_of('--use_fp16', *two) == []  # untyped, the default asks for nothing


CENTRAL = ('(its images get the central crop of evaluation: no random crop, flip or colour '
           'change)')


def test_distortions_warn_where_the_images_get_the_central_crop():
    assert warnings_of(*REAL, '--eval', '--train_dir=/t', '--distortions') == [
        '--distortions has no effect with --eval ' + CENTRAL]
    assert warnings_of(*REAL, '--forward_only', '--distort_color') == [
        '--distort_color has no effect with --forward_only ' + CENTRAL]
    # Training distorts; evaluations during training crop, but the training steps distort.
    assert warnings_of(*REAL, '--distortions', '--distort_color',
                       '--eval_during_training_every_n_steps=5') == []


def test_summary_verbosity_2_in_a_forward_only_run_says_it_writes_level_1():
    """test_summaries pins what each level writes forward-only: level 2 nothing more than 1,
    level 3 the images and (unfrozen) the weights' histograms."""
    fo = ['--forward_only', '--train_dir=/t', '--save_summaries_steps=2']
    said = ('--summary_verbosity=2 has no effect with --forward_only beyond level 1 (it adds '
            'the histogram of the gradients, and a forward-only run has none); '
            '--summary_verbosity=3 adds the input images')
    assert warnings_of(*fo, '--summary_verbosity=2') == [said + " and the weights' histograms"]
    assert warnings_of(*fo, '--summary_verbosity=2', '--freeze_when_forward_only') == [said]
    for verbosity in ('1', '3'):
        assert warnings_of(*fo, '--summary_verbosity=' + verbosity) == []
    assert warnings_of('--train_dir=/t', '--save_summaries_steps=2',
                       '--summary_verbosity=2') == []


RECORD_INPUT = 'without --use_datasets (RecordInput reads the files)'


@pytest.mark.parametrize('flag', ['--datasets_use_prefetch', '--datasets_use_caching',
                                  '--datasets_prefetch_buffer_size=4',
                                  '--datasets_num_private_threads=2',
                                  '--datasets_parallel_interleave_cycle_length=2'])
def test_an_eval_runs_tf_data_flags_are_not_said_to_need_use_datasets(flag):
    """The reported line: `--eval --datasets_use_prefetch` said 'no effect without
    --use_datasets (RecordInput reads the files)' while the run's Eval: line said tf.data."""
    assert warnings_of(*REAL, '--eval', '--train_dir=/t', flag) == []
    # A training run on RecordInput: the flag does nothing (the line as before).
    assert warnings_of(*REAL, flag) == ['%s has no effect %s' % (flag.split('=')[0],
                                                                 RECORD_INPUT)]


def test_what_an_eval_run_does_not_read_is_named_with_its_reason():
    said = warnings_of(*REAL, '--eval', '--train_dir=/t', '--use_datasets',
                       '--shuffle_buffer_size=5', '--datasets_repeat_cached_sample',
                       '--nodatasets_use_prefetch')
    assert said == [
        '--use_datasets has no effect with --eval (an evaluation reads with tf.data whatever '
        'it says)',
        '--shuffle_buffer_size has no effect with --eval (an evaluation reads each record once, '
        'in a fixed order: tf.data without shuffling)',
        '--datasets_repeat_cached_sample has no effect with --eval (an evaluation reads each '
        'record once, in a fixed order: tf.data without shuffling)',
        '--datasets_use_prefetch has no effect here: the tf.data input always prefetches; use '
        '--datasets_prefetch_buffer_size to size it']


def test_tf_data_flags_of_a_training_run_on_record_input_act_on_its_evaluations_only():
    said = warnings_of(*REAL, '--eval_during_training_every_n_steps=5', '--datasets_use_caching',
                       '--datasets_use_prefetch', '--datasets_repeat_cached_sample')
    assert said == [
        '--datasets_use_caching acts only on the evaluations without --use_datasets '
        '(RecordInput reads the training files; the evaluations read with tf.data)',
        '--datasets_repeat_cached_sample has no effect without --use_datasets (RecordInput '
        'reads the training files, and the evaluations do not use it)']


def test_an_eval_pipeline_applies_the_tf_data_flags_it_is_silent_about(tmp_path):
    """What the eval rules rest on: the full pass of an --eval run reads ImageNet shards with
    tf.data (no --use_datasets), caches the records and prefetches the buffer it is given."""
    import tensorflow as tf

    from tf_cnn_benchmarks import preprocessing

    import input_helpers
    made = [input_helpers.example(input_helpers.image_bytes(16, 16), 1) for _ in range(4)]
    for subset in ('train', 'validation'):
        input_helpers.write_shards(str(tmp_path), subset, [made[:2], made[2:]])
    bench = helpers.tiny_bench(data_dir=str(tmp_path), eval=True, num_classes=10,
                               datasets_use_caching=True, datasets_prefetch_buffer_size=3)
    with tf.Graph().as_default() as graph:
        pipeline = preprocessing.eval_pipeline_for(bench.plan, bench.dataset)
        assert isinstance(pipeline, preprocessing.DatasetPipeline)
        pipeline._make_dataset()
    nodes = graph.as_graph_def().node
    ops = {n.op for n in nodes}
    assert 'PrefetchDataset' in ops and any(op.startswith('CacheDataset') for op in ops), ops
    consts = {n.name: n for n in nodes if n.op == 'Const'}
    prefetch = next(n for n in nodes if n.op == 'PrefetchDataset')
    buffer = consts[prefetch.input[1].split(':')[0]]
    assert tf.make_ndarray(buffer.attr['value'].tensor) == 3
    said = ineffective_flags.messages(bench.params, 0, 'imagenet', frozenset(
        {'datasets_use_caching', 'datasets_prefetch_buffer_size', 'datasets_use_prefetch'}))
    assert not [m for m in said if m.startswith('--datasets_')], said


@pytest.mark.cli
def test_the_command_warns_of_the_reported_flags(tmp_path):
    out = helpers.run_command('--model=trivial', '--batch_size=2', '--num_batches=1',
                              '--num_warmup_batches=0', '--image_size=8', '--noresults_db',
                              '--device=cpu', '--num_gpus=2',
                              '--variable_update=parameter_server', '--gradient_repacking=2',
                              '--hierarchical_copy', '--variable_consistency=relaxed')
    assert out.returncode == 0, out.stderr
    warned = [line.split(' ', 2)[1] for line in out.stderr.splitlines()
              if line.startswith('warning: ') and ' has no effect ' in line]
    assert warned == ['--gradient_repacking', '--hierarchical_copy', '--variable_consistency']


def test_the_baseline_gates_flags_without_a_baseline_are_said():
    # A user's trial: --include_unclean_runs without --baseline said nothing (--fail_on_slower
    # did); both only shape the --baseline gate.
    assert warnings_of('--include_unclean_runs', '--fail_on_slower=10') == [
        '--fail_on_slower has no effect without --baseline',
        '--include_unclean_runs has no effect without --baseline']
    assert warnings_of('--include_unclean_runs', '--baseline=/b.json') == []


@pytest.mark.parametrize('args', [
    ['--variable_update=replicated', '--num_gpus=1', '--use_nccl', '--gradient_repacking=2',
     '--variable_consistency=relaxed'],
    ['--variable_update=parameter_server', '--all_reduce_spec=nccl', '--hierarchical_copy'],
    ['--variable_update=replicated', '--num_gpus=2', '--all_reduce_spec=pscpu',
     '--hierarchical_copy', '--nocompact_gradient_transfer'],
    ['--forward_only', '--variable_update=replicated', '--use_nccl',
     '--variable_consistency=relaxed'],
])
def test_the_usage_check_prints_the_exchange_flags_lines_its_rules_compose(monkeypatch, args):
    """check_with_tensorflow decides the device and hands it to
    ineffective_flags.device_messages, which decides the all-reduce and transfer flags' reasons
    on it (params/device_rules.all_reduce_reasons, variable_managers/transfer_rules): its
    lines are `messages`' (which decides the device itself), NCCL on the CPU included."""
    from tf_cnn_benchmarks import cnn_util
    from tf_cnn_benchmarks.preflight import usage
    fv = flags.FlagValues()
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks', '--device=cpu'] + args, fv)
    given = frozenset(n for n in params.SPEC_BY_NAME if fv[n].present)
    printed = []
    monkeypatch.setattr(cnn_util, 'warn', printed.append)
    usage.check_with_tensorflow(p, 0, given)
    expected = ineffective_flags.messages(p, 0, 'synthetic', given)
    assert [m for m in printed if ' has no effect ' in m] == [
        m for m in expected if ' has no effect ' in m]
    assert any(m.startswith(('--use_nccl', '--all_reduce_spec', '--hierarchical_copy'))
               for m in printed)
