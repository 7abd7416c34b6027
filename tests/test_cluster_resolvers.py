"""--cluster_resolver: clusters from TF_CONFIG (Kubeflow TFJob) and Slurm steps, and the examples.

In process: the choice of source, TF_CONFIG's task types, Slurm's ranks, ports and GPUs, every
error line (TF_CONFIG and the Slurm variables set with monkeypatch; TensorFlow's resolvers read
os.environ). The cluster wave (marked `cluster`, once per session like test_distributed's waves):
a 1 ps + 2 worker cluster started with only TF_CONFIG per process (a TFJob's chief, worker and
ps, plus its evaluator) and one started with only simulated Slurm variables per process train
with the seams of tests/cluster_seams.py and give the losses and variables of the local reference
run, which test_distributed checks the host-flag cluster against too.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import yaml
from absl import flags
from test_distributed import (
    ENTRY,
    MODEL_FLAGS,
    REPO,
    SEAM_ENTRY,
    STARTUP_OK_SECS,
    Proc,
    expect_ok,
    finish_all,
    hosts,
    shared_reference,
)
from test_slurm_resolver import simulated_slurm

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks import params as params_lib
from tf_cnn_benchmarks.cluster import resolvers

from helpers import free_port, run_once

EXAMPLES = os.path.join(REPO, 'examples')
PS, CHIEF, WORKER = 'ps-0.svc:2222', 'chief-0.svc:2222', 'worker-0.svc:2222'
TFJOB = {'cluster': {'chief': [CHIEF], 'worker': [WORKER], 'ps': [PS]}}


def _params(**kwargs):
    values = dict(model='trivial', image_size=16, batch_size=2)
    values.update(kwargs)
    return params_lib.make_params(**values)


def _tf_config(monkeypatch, task_type, index, cluster=None):
    config = {'cluster': TFJOB['cluster'] if cluster is None else cluster,
              'task': {'type': task_type, 'index': index}}
    monkeypatch.setenv('TF_CONFIG', json.dumps(config))


# ------------------------------------------------------------------------------------------
# Choosing the source.

@pytest.mark.parametrize('kwargs, environ, source', [
    (dict(), {}, 'flags'),
    (dict(), {'TF_CONFIG': '{}'}, 'tf_config'),
    (dict(), {'TF_CONFIG': '  '}, 'flags'),
    (dict(), {'SLURM_PROCID': '0', 'SLURM_STEP_NUM_TASKS': '3'}, 'slurm'),
    (dict(), {'SLURM_PROCID': '0', 'SLURM_STEP_NUM_TASKS': '1'}, 'flags'),  # a one-task step
    (dict(), {'SLURM_NTASKS': '3'}, 'flags'),  # the batch script itself, not an srun step
    (dict(), {'TF_CONFIG': '{}', 'SLURM_PROCID': '0', 'SLURM_STEP_NUM_TASKS': '3'}, 'tf_config'),
    (dict(task_index=1), {'TF_CONFIG': '{}'}, 'flags'),
    (dict(worker_hosts=['h:1']), {'SLURM_PROCID': '0', 'SLURM_STEP_NUM_TASKS': '3'}, 'flags'),
    (dict(cluster_resolver='slurm'), {'TF_CONFIG': '{}'}, 'slurm'),
    (dict(cluster_resolver='tf_config'), {}, 'tf_config'),
])
def test_auto_prefers_host_flags_then_tf_config_then_slurm(kwargs, environ, source):
    assert resolvers.choose_source(_params(**kwargs), environ) == source


def test_values_are_checked_before_choosing_a_source():
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(cluster_resolver='kubernetes'))
    assert str(raised.value) == ("--cluster_resolver must be one of 'auto', 'flags', 'tf_config', "
                                 "'slurm'. Received: cluster_resolver='kubernetes'")
    with pytest.raises(params_lib.ParamsError, match=r'^--num_ps must be >= 0\. Received: '
                       r'num_ps=-1$'):
        resolvers.resolve(_params(cluster_resolver='slurm', num_ps=-1))


def test_a_local_run_resolves_to_the_flags_without_a_cluster_line():
    resolution = resolvers.resolve(_params())
    assert (resolution.source, resolution.description, resolution.environment) == (
        'flags', '', {})
    assert resolution.params == _params(cluster_resolver='flags')


def test_auto_warns_once_when_host_flags_hide_tf_config(monkeypatch, capsys):
    _tf_config(monkeypatch, 'worker', 0)
    p = _params(job_name='worker', task_index=1, ps_hosts=['localhost:1'],
                worker_hosts=['localhost:2', 'localhost:3'])
    resolution = resolvers.resolve(p)
    assert resolution.description == 'flags (worker 1 of 2, 1 ps)'
    assert capsys.readouterr().err == (
        'warning: the host flags define the cluster and TF_CONFIG is ignored (drop the host '
        'flags to use it, or give --cluster_resolver=flags to silence this)\n')
    resolvers.resolve(p._replace(cluster_resolver='flags'))
    assert capsys.readouterr().err == ''


def test_auto_says_when_it_takes_tf_config_over_a_slurm_step(monkeypatch, capsys):
    """A new user's step had both: auto took TF_CONFIG without a word."""
    _tf_config(monkeypatch, 'worker', 0)
    simulated_slurm(monkeypatch, 1)
    assert resolvers.resolve(_params()).source == 'tf_config'
    assert capsys.readouterr().err == (
        'warning: TF_CONFIG and a Slurm step (5 tasks) both describe a cluster; '
        '--cluster_resolver=auto took TF_CONFIG, which it prefers to Slurm (give '
        '--cluster_resolver=slurm to use the Slurm step, or --cluster_resolver=tf_config to '
        'silence this)\n')
    assert resolvers.resolve(_params(cluster_resolver='slurm')).source == 'slurm'
    assert resolvers.resolve(_params(cluster_resolver='tf_config')).source == 'tf_config'
    assert capsys.readouterr().err == ''
    monkeypatch.setenv('SLURM_STEP_NUM_TASKS', '1')  # a one-task step is no cluster: no line
    resolvers.resolve(_params())
    assert capsys.readouterr().err == ''


# ------------------------------------------------------------------------------------------
# TF_CONFIG.

@pytest.mark.parametrize('task_type, index, job, our_index', [
    ('chief', 0, 'worker', 0), ('worker', 0, 'worker', 1), ('ps', 0, 'ps', 0)])
def test_tf_config_chief_is_worker_0(monkeypatch, task_type, index, job, our_index):
    _tf_config(monkeypatch, task_type, index)
    resolution = resolvers.resolve(_params())
    p = resolution.params
    assert (p.job_name, p.task_index, p.ps_hosts, p.worker_hosts, p.cluster_resolver) == (
        job, our_index, [PS], [CHIEF, WORKER], 'tf_config')
    role = 'ps 0 of 1, 2 workers' if job == 'ps' else 'worker %d of 2, 1 ps' % our_index
    assert resolution.description == 'TF_CONFIG (task %s %d: %s)' % (task_type, index, role)
    params_lib.validate_params(p)


def test_tf_config_without_chief_and_the_master_alias():
    cluster = {'worker': ['w0:1', 'w1:1'], 'ps': ['p0:1', 'p1:1']}
    assert resolvers.tf_config_cluster(cluster, 'worker', 1) == (
        'worker', 1, ['p0:1', 'p1:1'], ['w0:1', 'w1:1'])
    cluster = {'master': ['m:1'], 'worker': ['w0:1', 'w1:1'], 'ps': ['p0:1']}
    assert resolvers.tf_config_cluster(cluster, 'master', 0) == (
        'worker', 0, ['p0:1'], ['m:1', 'w0:1', 'w1:1'])
    assert resolvers.tf_config_cluster(cluster, 'worker', 1) == (
        'worker', 2, ['p0:1'], ['m:1', 'w0:1', 'w1:1'])


SHAPE = resolvers._TF_CONFIG_SHAPE


@pytest.mark.parametrize('text, message', [
    ('{"cluster": ', 'TF_CONFIG is not valid JSON (Expecting value: line 1 column 13 (char 12)); '
     'it must look like %s.' % SHAPE),
    ('{"cluster": {"worker": ["w:1"]}}',
     'TF_CONFIG has no "task" with a "type" and an "index"; it must look like %s.' % SHAPE),
    ('{"cluster": ["w:1"], "task": {"type": "worker", "index": 0}}',
     'TF_CONFIG has a "cluster" that is a list; give an object of job names to lists of '
     'addresses; it must look like %s.' % SHAPE),
    ('{"cluster": {"worker": {"1": "w:1"}}, "task": {"type": "worker", "index": 1}}',
     'TF_CONFIG lists the worker tasks by index ({"1": "w:1"}); give a list of addresses; it '
     'must look like %s.' % SHAPE),
    ('["w:1"]', 'TF_CONFIG is a list, not a JSON object; it must look like %s.' % SHAPE),
    ('{"cluster": {"worker": "w:1"}, "task": {"type": "worker", "index": 0}}',
     'TF_CONFIG gives the worker tasks as a string; give a list of addresses; it must look '
     'like %s.' % SHAPE),
    ('{"cluster": {"worker": ["w:1"]}, "task": "worker"}',
     'TF_CONFIG has a "task" that is a string, not an object; it must look like %s.' % SHAPE),
    ('{"cluster": {"worker": ["w:1"]}, "task": {"type": 1, "index": 0}}',
     'TF_CONFIG has a task "type" that is a number (1); give a string such as "worker"; it '
     'must look like %s.' % SHAPE),
    ('{"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": "one"}}',
     'TF_CONFIG has a task "index" of "one"; give a whole number >= 0; it must look like %s.'
     % SHAPE),
    ('{"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": -1}}',
     'TF_CONFIG has a task "index" of -1; give a whole number >= 0; it must look like %s.'
     % SHAPE),
    ('{"cluster": {"worker": ["w"]}, "task": {"type": "worker", "index": 0}}',
     "TF_CONFIG: the worker addresses must be host:port with a port in 1..65535. Received: 'w'"),
    ('{"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 1}}',
     'TF_CONFIG task worker 1 is not in its cluster, which has 1 worker task(s); fix "task" or '
     '"cluster".'),
    ('{"cluster": {"worker": ["w:1"]}, "task": {"type": "tpu_worker", "index": 0}}',
     "TF_CONFIG task type 'tpu_worker' is not run by tf_cnn_benchmarks: use chief, worker, ps or "
     "evaluator (TFJob replicas Chief, Worker, PS, Evaluator)."),
    ('{"cluster": {"worker": ["w:1"], "controller": ["c:1"]}, "task": {"type": "worker", '
     '"index": 0}}', "TF_CONFIG has a 'controller' job, which tf_cnn_benchmarks does not run (it "
     "runs chief, worker, ps and evaluator); it must look like %s." % SHAPE),
    ('{"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}}',
     'TF_CONFIG has 2 chief/master tasks (a:1,b:1); give one; it must look like %s.' % SHAPE),
    ('{"cluster": {"worker": ["localhost:5000", "127.0.0.1:5000"]}, "task": {"type": "worker", '
     '"index": 0}}', 'TF_CONFIG gives worker 0 (localhost:5000) and worker 1 (127.0.0.1:5000) '
     'the same address; every task needs its own host:port.'),
    ('{"cluster": {"chief": ["h:1"], "ps": ["h:1"]}, "task": {"type": "chief", "index": 0}}',
     'TF_CONFIG gives chief 0 (h:1) and ps 0 (h:1) the same address; every task needs its own '
     'host:port.'),
])
def test_bad_tf_config_is_one_error_line(monkeypatch, text, message):
    monkeypatch.setenv('TF_CONFIG', text)
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(variable_update='collective_all_reduce'))
    assert str(raised.value) == message


# resolve() on each TF_CONFIG in a fresh process: (error or description) per case, then
# whether TensorFlow was loaded.
_RESOLVE_EACH = textwrap.dedent('''
    import json, os, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import params
    from tf_cnn_benchmarks.cluster import resolvers
    out = []
    for text, flags in {cases!r}:
        os.environ['TF_CONFIG'] = text
        try:
            out.append(resolvers.resolve(params.make_params(**flags)).description)
        except params.ParamsError as e:
            out.append('error: %s' % e)
        if 'tensorflow' in sys.modules:
            out.append('TensorFlow loaded')
    print('\\nCASES ' + json.dumps(out))
''')


def test_a_malformed_tf_config_is_refused_before_tensorflow_loads():
    """A new user's malformed TF_CONFIG was named after 4 s (TensorFlow loaded for its
    resolver), other usage errors at once: now every check of TF_CONFIG and of the host flags
    against it comes first, and TensorFlow's resolver reads only a TF_CONFIG that passed."""
    good = json.dumps(dict(TFJOB, task={'type': 'worker', 'index': 0}))
    cases = [('{"cluster": ', {}), ('["w:1"]', {}),
             ('{"cluster": {"worker": ["w"]}, "task": {"type": "worker", "index": 0}}', {}),
             ('{"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 3}}', {}),
             (good, dict(cluster_resolver='tf_config', task_index=2)),
             (good, {})]
    proc = subprocess.run([sys.executable, '-c', _RESOLVE_EACH.format(
        tests=os.path.join(REPO, 'tests'), cases=cases)], capture_output=True, text=True,
        timeout=240, cwd=REPO)
    _, _, last = proc.stdout.rpartition('\nCASES ')
    assert last, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = json.loads(last)
    assert [line.split(';')[0] for line in out] == [
        'error: TF_CONFIG is not valid JSON (Expecting value: line 1 column 13 (char 12))',
        'error: TF_CONFIG is a list, not a JSON object',
        "error: TF_CONFIG: the worker addresses must be host:port with a port in 1..65535. "
        "Received: 'w'",
        'error: TF_CONFIG task worker 3 is not in its cluster, which has 1 worker task(s)',
        'error: --task_index=2 contradicts TF_CONFIG: its task worker 0 is worker 1 here (ps %s'
        % PS,
        # A good TF_CONFIG is then read by TensorFlow's own resolver.
        'TF_CONFIG (task worker 0: worker 1 of 2, 1 ps)', 'TensorFlow loaded']


def test_tf_config_resolver_without_tf_config():
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(cluster_resolver='tf_config'))
    assert str(raised.value) == ('--cluster_resolver=tf_config, but TF_CONFIG is not set; set it '
                                 '(a TFJob does) or use the host flags.')


CONTRADICTS = ('contradicts TF_CONFIG: its task worker 0 is worker 1 here (ps %s; workers %s,%s); '
               'drop the host flags (TF_CONFIG gives them) or give --cluster_resolver=flags to '
               'ignore TF_CONFIG.' % (PS, CHIEF, WORKER))


@pytest.mark.parametrize('kwargs, message', [
    (dict(job_name='ps'), '--job_name=ps ' + CONTRADICTS),
    (dict(job_name='worker'), '--task_index=0 ' + CONTRADICTS),
    (dict(task_index=2), '--task_index=2 ' + CONTRADICTS),
    (dict(ps_hosts=['other:1']), '--ps_hosts=other:1 ' + CONTRADICTS),
    (dict(worker_hosts=[WORKER, CHIEF]), '--worker_hosts=%s,%s %s' % (WORKER, CHIEF, CONTRADICTS)),
    (dict(controller_host='c:1'), '--controller_host=c:1 ' + CONTRADICTS),
    (dict(num_ps=2), '--num_ps=2 contradicts TF_CONFIG, which has 1 ps task(s); drop --num_ps.'),
    (dict(variable_update='distributed_all_reduce'),
     '--variable_update=distributed_all_reduce needs a controller task, which TF_CONFIG does not '
     'describe; use collective_all_reduce, or the host flags with --controller_host.'),
])
def test_flags_that_contradict_tf_config_are_one_error_line(monkeypatch, kwargs, message):
    _tf_config(monkeypatch, 'worker', 0)
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(cluster_resolver='tf_config', **kwargs))
    assert str(raised.value) == message


def test_agreeing_host_flags_are_accepted_with_tf_config(monkeypatch):
    _tf_config(monkeypatch, 'worker', 0)
    p = _params(cluster_resolver='tf_config', job_name='worker', task_index=1, ps_hosts=[PS],
                worker_hosts=[CHIEF, WORKER], num_ps=1)
    assert resolvers.resolve(p).params == p


def test_a_ps_mode_needs_a_ps_task(monkeypatch):
    _tf_config(monkeypatch, 'worker', 0, {'worker': ['w0:1', 'w1:1']})
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(_params(variable_update='distributed_replicated'))
    assert str(raised.value) == (
        '--variable_update=distributed_replicated needs a ps task, and TF_CONFIG has none; add ps '
        'tasks (a PS replica) or use --variable_update=collective_all_reduce.')
    p = resolvers.resolve(_params(variable_update='collective_all_reduce')).params
    assert (p.job_name, p.task_index, p.ps_hosts) == ('worker', 0, [])


def test_the_evaluator_evaluates_the_train_dir_outside_the_cluster(monkeypatch, tmp_path):
    _tf_config(monkeypatch, 'evaluator', 0, {'evaluator': ['e:1']})
    p = _params(variable_update='distributed_replicated', train_dir=str(tmp_path))
    resolution = resolvers.resolve(p)
    q = resolution.params
    assert (q.eval, q.eval_interval_secs, q.job_name, q.worker_hosts, q.variable_update) == (
        True, 60, '', [], 'parameter_server')
    assert resolution.description == (
        'TF_CONFIG (task evaluator 0: --eval of %s every 60 s, outside the cluster)' % tmp_path)
    params_lib.validate_params(q)
    assert resolvers.resolve(p._replace(eval_interval_secs=5)).params.eval_interval_secs == 5
    with pytest.raises(params_lib.ParamsError) as raised:
        resolvers.resolve(p._replace(train_dir=None))
    assert str(raised.value) == ('the TF_CONFIG evaluator evaluates the checkpoints of '
                                 '--train_dir, shared with the chief; give --train_dir.')
    with pytest.raises(params_lib.ParamsError, match='^TF_CONFIG makes this task the evaluator, '
                       'which is not a cluster member; drop the host flags.$'):
        resolvers.resolve(p._replace(cluster_resolver='tf_config', job_name='worker'))


# ------------------------------------------------------------------------------------------
# What a resolved task shows: the header, the results' plan; a ps without GPUs.

def test_header_and_plan_name_the_source(monkeypatch):
    _tf_config(monkeypatch, 'worker', 0, {'chief': ['localhost:2223'],
                                          'worker': ['localhost:2224'], 'ps': ['localhost:2222']})
    bench = benchmark_cnn.BenchmarkCNN(_params(), gpus=0)
    assert bench.plan.cluster_role == 'worker 1'
    assert 'Cluster:     TF_CONFIG (task worker 0: worker 1 of 2, 1 ps)' in bench.info_lines()
    assert bench.plan.summary()['cluster_source'] == (
        'TF_CONFIG (task worker 0: worker 1 of 2, 1 ps)')
    assert bench.params.cluster_resolver == 'tf_config'
    local = benchmark_cnn.BenchmarkCNN(_params(cluster_resolver='flags'), gpus=0)
    assert not any(line.startswith('Cluster:') for line in local.info_lines())


def test_a_ps_without_gpus_ignores_the_workers_gpu_flags():
    p = _params(job_name='ps', ps_hosts=['h:1'], worker_hosts=['h:2'], device='gpu',
                local_parameter_device='gpu', num_gpus=4)
    q = params_lib.resolve_params(p, 0)
    assert (q.device, q.local_parameter_device, q.data_format) == ('cpu', 'cpu', 'NHWC')
    with pytest.raises(params_lib.ParamsError, match='no GPU is visible'):
        params_lib.resolve_params(p._replace(job_name='worker'), 0)


# ------------------------------------------------------------------------------------------
# The examples: every replica of the TFJobs and every rank of the sbatch script resolves and
# passes the flag rules.

def _parse(args: list[str]) -> params_lib.Params:
    values = flags.FlagValues()
    params_lib.define_flags(values)
    rest = values(['tf_cnn_benchmarks'] + list(args))
    assert rest == ['tf_cnn_benchmarks'], rest
    return params_lib.make_params_from_flags(values)


def test_the_tfjob_examples_resolve_for_every_replica(monkeypatch):
    with open(os.path.join(EXAMPLES, 'kubeflow_tfjob_resnet50.yaml')) as f:
        jobs = list(yaml.safe_load_all(f))
    seen = {}
    for job in jobs:
        assert (job['apiVersion'], job['kind']) == ('kubeflow.org/v1', 'TFJob')
        name, specs = job['metadata']['name'], job['spec']['tfReplicaSpecs']
        # The cluster the training operator writes: every replica but the evaluator, by type.
        cluster = {kind.lower(): ['%s-%s-%d.default.svc:2222' % (name, kind.lower(), i)
                                  for i in range(spec['replicas'])]
                   for kind, spec in specs.items() if kind != 'Evaluator'}
        for kind, spec in specs.items():
            container = spec['template']['spec']['containers'][0]
            assert container['name'] == 'tensorflow' and container['command'] == [
                'tf_cnn_benchmarks']
            for index in range(spec['replicas']):
                _tf_config(monkeypatch, kind.lower(), index, cluster)
                resolution = resolvers.resolve(_parse(container['args']))
                params_lib.validate_params(resolution.params)
                seen[(name, kind, index)] = resolution.description
    assert seen[('resnet50-parameter-server', 'Chief', 0)] == (
        'TF_CONFIG (task chief 0: worker 0 of 2, 1 ps)')
    assert seen[('resnet50-parameter-server', 'Evaluator', 0)] == (
        'TF_CONFIG (task evaluator 0: --eval of /train/resnet50-parameter-server every 120 s, '
        'outside the cluster)')
    assert seen[('resnet50-distributed-replicated', 'Worker', 2)] == (
        'TF_CONFIG (task worker 2: worker 3 of 4, 2 ps)')
    assert len(seen) == 4 + 6


@pytest.mark.parametrize('mode', ['parameter_server', 'distributed_replicated'])
def test_the_sbatch_example_resolves_for_every_rank(monkeypatch, tmp_path, mode):
    script = os.path.join(EXAMPLES, 'slurm_resnet50.sbatch')
    assert subprocess.run(['bash', '-n', script]).returncode == 0
    fake = tmp_path / 'bin'
    fake.mkdir()
    (fake / 'srun').write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$SRUN_ARGS"\n')
    (fake / 'srun').chmod(0o755)
    env = dict(os.environ, PATH='%s:%s' % (fake, os.environ['PATH']), MODE=mode,
               SRUN_ARGS=str(tmp_path / 'args'), SLURM_JOB_ID='123456', HOME=str(tmp_path))
    assert subprocess.run(['bash', script], env=env).returncode == 0
    args = (tmp_path / 'args').read_text().splitlines()
    assert args[:2] == ['--distribution=block', '--kill-on-bad-exit=1']
    assert args[2] == 'tf_cnn_benchmarks'
    p = _parse(args[3:])
    assert (p.slurm_port_base, p.variable_update) == (20000 + 123456 % 20000, mode)
    sbatch = dict(re.findall(r'^#SBATCH --([a-z-]+)=(\S+)', open(script).read(), re.M))
    assert (sbatch['nodes'], sbatch['ntasks'], sbatch['gres']) == ('2', '5', 'gpu:4')
    gpus = []
    for rank in range(5):
        simulated_slurm(monkeypatch, rank, CUDA_VISIBLE_DEVICES='0,1,2,3')
        resolution = resolvers.resolve(p)
        params_lib.validate_params(resolution.params)
        gpus.append(resolution.environment['CUDA_VISIBLE_DEVICES'])
    assert gpus == ['', '0,1', '2,3', '0,1', '2,3']  # --num_gpus=2 per worker


# ------------------------------------------------------------------------------------------
# The command: one error line, exit status 2.

@pytest.mark.cli
def test_the_command_reports_bad_tf_config_and_contradictions_in_one_line():
    config = json.dumps(dict(TFJOB, task={'type': 'worker', 'index': 0}))
    runs = [({'TF_CONFIG': '{"cluster": '}, []),
            ({'TF_CONFIG': config}, ['--cluster_resolver=tf_config', '--task_index=2'])]
    procs = [subprocess.Popen([sys.executable, ENTRY] + args, cwd=REPO, text=True,
                              env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3', **env),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for env, args in runs]
    outs = [proc.communicate(timeout=240) + (proc.returncode,) for proc in procs]
    assert outs[0] == ('', 'error: TF_CONFIG is not valid JSON (Expecting value: line 1 column '
                       '13 (char 12)); it must look like %s.\n' % SHAPE, 2)
    assert outs[1] == ('', 'error: --task_index=2 %s\n' % CONTRADICTS, 2)


# ------------------------------------------------------------------------------------------
# The cluster wave: TF_CONFIG and Slurm clusters of 1 ps + 2 workers, and a TFJob evaluator.

EQUIV = ['--optimizer=momentum', '--init_learning_rate=0.01', '--num_batches=2',
         '--num_warmup_batches=0', '--tf_random_seed=5']
COMMON = MODEL_FLAGS + EQUIV + ['--variable_update=parameter_server',
                                '--startup_timeout_secs=%d' % STARTUP_OK_SECS]


def consecutive_free_ports(count: int, taken=()) -> int:
    """A port p with p .. p + count - 1 all free now (a Slurm node's tasks use consecutive ones)
    and none of them in `taken` (ports handed out already but not yet bound by their task:
    two clusters on one port would reach each other's tasks): helpers.free_port."""
    return free_port(span=count, taken=taken)


def slurm_env(rank: int, tasks: int = 3) -> dict:
    """The variables of rank `rank` of an srun step of `tasks` tasks on the node 'localhost'."""
    return {'SLURM_PROCID': str(rank), 'SLURM_LOCALID': str(rank), 'SLURM_NTASKS': str(tasks),
            'SLURM_STEP_NUM_TASKS': str(tasks), 'SLURM_STEP_NODELIST': 'localhost',
            'SLURM_JOB_NODELIST': 'localhost', 'SLURM_STEP_TASKS_PER_NODE': str(tasks),
            'SLURMD_NODENAME': 'localhost', 'SLURM_JOB_ID': '1'}


def produce_resolver_wave(d, shared) -> dict:
    init, reference = shared['init'], shared['reference']  # test_distributed's reference run
    seams = lambda name: ['--seam_init=' + init, '--seam_dump=' + str(d / ('dump_' + name))]
    chief, worker, ps = hosts(3)
    cluster = {'chief': [chief], 'worker': [worker], 'ps': [ps], 'evaluator': ['localhost:1']}
    train_dir = ['--train_dir=' + str(d / 'train_dir')]

    def tf_config(task_type):
        return {'TF_CONFIG': json.dumps({'cluster': cluster,
                                         'task': {'type': task_type, 'index': 0}})}

    runs, evaluator = {}, None
    try:
        runs['tf_config'] = [
            Proc('tf_config_ps0', COMMON + train_dir, d, env=tf_config('ps')),
            Proc('tf_config_chief0', seams('tf_config') + COMMON + train_dir, d,
                 env=tf_config('chief'), entry=SEAM_ENTRY),
            Proc('tf_config_worker0', seams('tf_config') + COMMON + train_dir, d,
                 env=tf_config('worker'), entry=SEAM_ENTRY)]
        evaluator = Proc('tf_config_evaluator0', COMMON + train_dir + ['--eval_interval_secs=1'],
                         d, env=tf_config('evaluator'))
        base = consecutive_free_ports(
            3, taken=[int(h.rsplit(':', 1)[1]) for h in (chief, worker, ps)])
        port = ['--slurm_port_base=%d' % base]
        runs['slurm'] = [Proc('slurm_rank%d' % rank, (seams('slurm') if rank else []) + COMMON +
                              port, d, env=slurm_env(rank), entry=SEAM_ENTRY if rank else ENTRY)
                         for rank in range(3)]
        # The chief saves model.ckpt-2 at the end of its run; the evaluator then evaluates it.
        evaluator.wait_for(r'^Accuracy @ 1 = .* \[4 examples\]$')
        evaluator.proc.send_signal(signal.SIGTERM)
        runs['evaluator'] = [evaluator]
    except BaseException:
        finish_all([p for procs in runs.values() for p in procs] + [evaluator] * bool(evaluator))
        raise
    results = {name: finish_all(procs) for name, procs in runs.items()}
    return {'runs': results, 'reference': reference, 'port_base': base,
            'dumps': {name: str(d / ('dump_' + name)) for name in ('tf_config', 'slurm')},
            'train_dir': str(d / 'train_dir')}


@pytest.fixture(scope='module')
def wave(tmp_path_factory):
    reference = shared_reference(tmp_path_factory)
    return run_once(tmp_path_factory, 'resolver_wave',
                    lambda d: produce_resolver_wave(d, reference))


def _dumps(wave, name):
    return [np.load(os.path.join(wave['dumps'][name], 'worker%d.npz' % i)) for i in range(2)]


@pytest.mark.cluster
@pytest.mark.parametrize('name', ['tf_config', 'slurm'])
def test_resolved_cluster_trains_like_the_local_reference(wave, name):
    """Same losses and variables after 2 sync steps as local replicated on 2 devices with the
    same initial values and batches (test_distributed checks the host-flag cluster against the
    same reference)."""
    for result in wave['runs'][name]:
        expect_ok(result)
    ref = np.load(wave['reference'])
    dumps = _dumps(wave, name)
    np.testing.assert_allclose((dumps[0]['losses'] + dumps[1]['losses']) / 2, ref['losses'],
                               rtol=1e-5)
    names = [k[len('final/'):] for k in ref.files if k.startswith('final/')]
    assert len(names) == 6  # trivial: 3 affine layers, weights and biases
    for var in names:
        for dump in dumps:
            np.testing.assert_allclose(dump['var/' + var], ref['final/' + var], rtol=1e-5,
                                       atol=1e-7, err_msg=var)


@pytest.mark.cluster
def test_tf_config_and_slurm_clusters_agree_worker_by_worker(wave):
    tf_config, slurm = _dumps(wave, 'tf_config'), _dumps(wave, 'slurm')
    for i in range(2):
        assert tf_config[i]['losses'].shape == (2,)
        np.testing.assert_allclose(tf_config[i]['losses'], slurm[i]['losses'], rtol=1e-6)
    assert not np.allclose(tf_config[0]['losses'], tf_config[1]['losses'])  # their own batches


@pytest.mark.cluster
def test_resolved_tasks_say_where_their_cluster_came_from(wave):
    logs = {r['name']: r['log'] for procs in wave['runs'].values() for r in procs}
    base = wave['port_base']
    expected = {
        'tf_config_ps0': 'TF_CONFIG (task ps 0: ps 0 of 1, 2 workers)',
        'tf_config_chief0': 'TF_CONFIG (task chief 0: worker 0 of 2, 1 ps)',
        'tf_config_worker0': 'TF_CONFIG (task worker 0: worker 1 of 2, 1 ps)',
        'slurm_rank0': 'Slurm (rank 0 of 3: ps 0 of 1, 2 workers; localhost:%d; no GPU)' % base,
        'slurm_rank1': 'Slurm (rank 1 of 3: worker 0 of 2, 1 ps; localhost:%d)' % (base + 1),
        'slurm_rank2': 'Slurm (rank 2 of 3: worker 1 of 2, 1 ps; localhost:%d)' % (base + 2),
    }
    for name, text in expected.items():
        assert re.search('^Cluster:     %s$' % re.escape(text), logs[name], re.M), (
            name, logs[name][-2000:])
    assert re.search(r'^cluster images/sec: [0-9.]+ \(2 workers: \d+ images in ',
                     logs['slurm_rank1'], re.M)
    assert 'every task is done' in logs['tf_config_ps0']


@pytest.mark.cluster
def test_the_tfjob_evaluator_evaluates_the_chiefs_checkpoint(wave):
    result = wave['runs']['evaluator'][0]
    log = result['log']
    assert result['code'] == 143, log[-3000:]  # stopped by SIGTERM, as Kubernetes does
    assert re.search(r'^Cluster:     TF_CONFIG \(task evaluator 0: --eval of %s every 1 s, '
                     r'outside the cluster\)$' % re.escape(wave['train_dir']), log, re.M)
    assert 'Mode:        evaluation' in log
    assert re.search(r'^Successfully loaded model from .*model\.ckpt-2\.\n'
                     r'Running evaluation at global_step 2$', log, re.M)
    # Synthetic data: --num_batches (2) batches of 2 images.
    assert re.search(r'^Accuracy @ 1 = [0-9.]+ Accuracy @ 5 = [0-9.]+ \[4 examples\]$', log,
                     re.M)
