"""CPU tuning: thread-pool defaults and flags, the KMP/OMP/XLA environment (set before TensorFlow
starts), NUMA affinity, the header line."""

import os
import subprocess
import sys
import textwrap

import pytest

from tf_cnn_benchmarks import benchmark_cnn
from tf_cnn_benchmarks.hardware import cpu_quota
from tf_cnn_benchmarks.params import make_params
from tf_cnn_benchmarks.runtime import cpu_tuning

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_physical_cores_counts_each_core_once(tmp_path, monkeypatch):
    cpuinfo = tmp_path / 'cpuinfo'
    # Two packages x two cores x two hyper-threads: 8 logical CPUs, 4 cores.
    cpuinfo.write_text('\n'.join(
        'processor\t: %d\nphysical id\t: %d\ncore id\t\t: %d\n' % (cpu, cpu // 4, (cpu // 2) % 2)
        for cpu in range(8)))
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: set(range(8)))
    assert cpu_tuning.physical_cores(str(cpuinfo)) == 4
    # The process may run on the first package only: its two cores.
    monkeypatch.setattr(os, 'sched_getaffinity', lambda pid: {0, 1, 2, 3})
    assert cpu_tuning.physical_cores(str(cpuinfo)) == 2
    assert cpu_tuning.physical_cores(str(tmp_path / 'absent')) == 4


def test_default_threads_rule_and_flags():
    assert cpu_tuning.default_thread_counts(8) == (8, 2)
    assert cpu_tuning.default_thread_counts(1) == (1, 1)
    # Real data: one more inter-op thread for the input pipeline's ops in the step.
    assert cpu_tuning.default_thread_counts(8, real_data=True) == (8, 3)
    assert cpu_tuning.default_thread_counts(1, real_data=True) == (1, 2)
    cores = cpu_tuning.physical_cores()
    assert cpu_tuning.thread_counts(make_params()) == cpu_tuning.default_thread_counts(cores)
    assert cpu_tuning.thread_counts(make_params(data_dir='/data')) == (cores, min(2, cores) + 1)
    assert cpu_tuning.thread_counts(make_params(data_dir='/data', num_inter_threads=2)) == (
        cores, 2)
    assert cpu_tuning.thread_counts(make_params(num_intra_threads=3, num_inter_threads=0)) == (
        3, 0)


def test_a_gpu_run_has_one_intra_op_thread_unless_the_flag_is_given():
    # The original's rule: --num_intra_threads unset on a GPU is 1 thread per op. Inter-op
    # and the CPU's rule stay as they are.
    cores = cpu_tuning.physical_cores()
    cpu_intra, inter = cpu_tuning.default_thread_counts(cores)
    assert cpu_tuning.thread_counts(make_params(device='gpu')) == (1, inter)
    assert cpu_tuning.thread_counts(make_params(device='gpu', data_dir='/data')) == (
        1, inter + 1)
    assert cpu_tuning.thread_counts(make_params(device='gpu', num_intra_threads=0)) == (0, inter)
    assert cpu_tuning.thread_counts(make_params(device='gpu', num_intra_threads=4)) == (4, inter)
    assert cpu_tuning.thread_counts(make_params(device='cpu')) == (cpu_intra, inter)
    # The session's pools and the header's line are the plan's one value.
    config = benchmark_cnn.make_session_config(make_params(device='gpu'), 1)
    assert (config.intra_op_parallelism_threads, config.inter_op_parallelism_threads) == (
        1, inter)
    assert cpu_tuning.describe((1, inter), make_params(device='gpu')).startswith(
        "intra-op 1 (a GPU run's default, as the original's), inter-op %d (" % inter)
    assert cpu_tuning.describe((1, inter), make_params(device='gpu', num_intra_threads=1)
                               ).startswith('intra-op 1, inter-op')


def test_session_config_gets_the_thread_counts():
    config = benchmark_cnn.make_session_config(
        make_params(device='cpu', num_intra_threads=1, num_inter_threads=2), 1)
    assert (config.intra_op_parallelism_threads, config.inter_op_parallelism_threads) == (1, 2)
    default = benchmark_cnn.make_session_config(make_params(device='cpu'), 1)
    assert (default.intra_op_parallelism_threads, default.inter_op_parallelism_threads) == (
        cpu_tuning.default_thread_counts())


def test_kmp_flags_become_environment_variables():
    environ = {}
    updates = cpu_tuning.configure_environment(
        make_params(kmp_blocktime=0, kmp_affinity='granularity=fine,compact,1,0',
                    kmp_settings=True, num_intra_threads=2, device='cpu'), environ)
    assert environ == updates == {
        'KMP_BLOCKTIME': '0', 'KMP_AFFINITY': 'granularity=fine,compact,1,0',
        'KMP_SETTINGS': '1', 'OMP_NUM_THREADS': '2'}


def test_users_omp_num_threads_is_kept_and_nothing_set_by_default():
    environ = {'OMP_NUM_THREADS': '7'}
    # --device=cpu: on a GPU host the defaults also set the GPU variables (gpu_settings.py).
    cpu_tuning.configure_environment(make_params(kmp_blocktime=1, device='cpu'), environ)
    assert environ == {'OMP_NUM_THREADS': '7', 'KMP_BLOCKTIME': '1'}
    assert cpu_tuning.environment_updates(make_params(device='cpu'), {}) == {}


def test_xla_adds_the_cpu_jit_flag_once():
    environ = {'TF_XLA_FLAGS': '--tf_xla_min_cluster_size=2'}
    cpu_tuning.configure_environment(make_params(xla=True, device='cpu'), environ)
    assert environ['TF_XLA_FLAGS'] == '--tf_xla_min_cluster_size=2 --tf_xla_cpu_global_jit'
    assert cpu_tuning.environment_updates(make_params(xla=True, device='cpu'), environ) == {}


def test_setting_kmp_after_tensorflow_loaded_warns(capsys):
    # TensorFlow is imported in the test process (conftest).
    cpu_tuning.configure_environment(make_params(kmp_blocktime=1), {})
    assert 'warning: KMP_BLOCKTIME, OMP_NUM_THREADS set after TensorFlow was imported' in (
        capsys.readouterr().err)


def test_the_commands_preparation_sets_the_environment_before_the_cluster_resolves(
        monkeypatch):
    # The TF_CONFIG resolver loads TensorFlow, which reads the environment as it loads.
    from tf_cnn_benchmarks.cluster import resolvers
    from tf_cnn_benchmarks.preflight import usage
    order = []
    resolve = resolvers.resolve_checked
    monkeypatch.setattr(cpu_tuning, 'configure_environment', lambda p: order.append('env'))
    monkeypatch.setattr(resolvers, 'resolve_checked',
                        lambda p: order.append('cluster') or resolve(p))
    monkeypatch.setattr(resolvers, 'apply_environment',
                        lambda resolution: order.append('cluster env'))
    checked = usage.prepare(make_params(model='trivial', results_db=False))
    assert order == ['env', 'cluster', 'cluster env']
    assert checked.resolution.source == 'flags' and checked.params.cluster_resolver == 'flags'
    order.clear()
    usage.prepare(make_params(list_models=True, results_db=False))
    assert order == ['env', 'cluster env']  # --list_models: the flags only


_ENTRY_SCRIPT = textwrap.dedent('''
    import os, sys
    sys.path.insert(0, os.path.join({repo!r}, 'tests'))
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import cli
    from tf_cnn_benchmarks.runtime import cpu_tuning
    seen = {{}}
    original = cpu_tuning.configure_environment
    def spy(p, environ=None):
        seen['tensorflow_loaded'] = 'tensorflow' in sys.modules
        return original(p, environ)
    cpu_tuning.configure_environment = spy
    cli._run = lambda resolution, *rest: 2  # stop where the run would import TensorFlow
    status = cli.main(['tf_cnn_benchmarks', '--model=trivial', '--kmp_blocktime=3',
                                     '--kmp_affinity=compact', '--kmp_settings', '--xla'])
    print('STATUS', status, seen['tensorflow_loaded'],
          *[os.environ.get(k) for k in ('KMP_BLOCKTIME', 'KMP_AFFINITY', 'KMP_SETTINGS',
                                        'OMP_NUM_THREADS', 'TF_XLA_FLAGS')])
''')


def test_entry_script_sets_the_environment_before_importing_tensorflow():
    env = {k: v for k, v in os.environ.items()
           if k not in ('OMP_NUM_THREADS', 'TF_XLA_FLAGS') and not k.startswith('KMP_')}
    proc = subprocess.run([sys.executable, '-c', _ENTRY_SCRIPT.format(repo=REPO)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=REPO)
    line = [x for x in proc.stdout.splitlines() if x.startswith('STATUS')]
    assert line, proc.stdout[-2000:] + proc.stderr[-2000:]
    intra, _ = cpu_tuning.default_thread_counts()
    assert line[0].split() == ['STATUS', '2', 'False', '3', 'compact', '1', str(intra),
                               '--tf_xla_cpu_global_jit']


def test_header_shows_threads_and_kmp_settings(monkeypatch):
    monkeypatch.setenv('KMP_BLOCKTIME', '0')
    monkeypatch.setattr(cpu_tuning, 'openmp_runtime_loaded', lambda maps_path=None: False)
    line = next(x for x in benchmark_cnn.BenchmarkCNN(
        make_params(num_intra_threads=1, num_inter_threads=2), gpus=0).info_lines()
        if x.startswith('Threads:'))
    assert line.startswith('Threads:     intra-op 1, inter-op 2 (')
    assert line.endswith('KMP_BLOCKTIME=0 (no OpenMP runtime loaded: no effect)')


def test_kmp_flags_warn_once_each_where_no_openmp_runtime_is_loaded(monkeypatch, capsys):
    loaded = [False]
    monkeypatch.setattr(cpu_tuning, 'openmp_runtime_loaded', lambda maps_path=None: loaded[0])
    p = make_params(model='trivial', kmp_blocktime=0, kmp_affinity='compact', kmp_settings=True)
    benchmark_cnn.BenchmarkCNN(p, gpus=0)
    warnings = [x for x in capsys.readouterr().err.splitlines() if 'OpenMP' in x]
    assert warnings == [
        'warning: --%s has no effect: no OpenMP runtime is loaded (this TensorFlow runs oneDNN on '
        'its own thread pool), so nothing reads %s; use --num_intra_threads and '
        '--num_inter_threads for the CPU threads' % pair
        for pair in (('kmp_blocktime', 'KMP_BLOCKTIME'), ('kmp_affinity', 'KMP_AFFINITY'))] + [
        # It asks for the settings printed, which do not print: no thread advice (the
        # original's default 1 set nothing without --mkl).
        'warning: --kmp_settings has no effect: no OpenMP runtime is loaded (this TensorFlow '
        'runs oneDNN on its own thread pool), so nothing reads KMP_SETTINGS and no OpenMP '
        "settings are printed (the original's default 1 set it with --mkl only); the header's "
        "Threads: line shows the run's thread pools"]
    # With a runtime loaded (an Intel build), or where /proc cannot tell, they act: no line.
    for loaded[0] in (True, None):
        benchmark_cnn.BenchmarkCNN(p, gpus=0)
        assert 'OpenMP' not in capsys.readouterr().err


def test_kmp_flags_not_typed_say_nothing_and_do_not_read_proc(monkeypatch, capsys):
    from tf_cnn_benchmarks.preflight import ineffective_flags
    asked = []
    p = make_params(model='trivial', kmp_settings=False)  # at its default: asks for nothing
    assert not [m for m in ineffective_flags.messages(
        p, 0, openmp_loaded=lambda: asked.append(1) or False) if 'OpenMP' in m]
    assert asked == []


def test_openmp_runtime_detection(tmp_path):
    maps = tmp_path / 'maps'
    maps.write_text('7f00-7f01 r-xp 0 0:0 0 /usr/lib/libiomp5.so\n')
    assert cpu_tuning.openmp_runtime_loaded(str(maps)) is True
    maps.write_text('7f00-7f01 r-xp 0 0:0 0 /usr/lib/libc.so.6\n')
    assert cpu_tuning.openmp_runtime_loaded(str(maps)) is False
    assert cpu_tuning.openmp_runtime_loaded(str(tmp_path / 'absent')) is None


def test_numa_affinity_warns_on_one_node_and_applies_on_two(monkeypatch, capsys, tmp_path):
    for node in ('node0', 'node1'):
        (tmp_path / node).mkdir()
    assert cpu_tuning.numa_nodes(str(tmp_path)) == ['node0', 'node1']
    p = make_params(use_numa_affinity=True, device='cpu')
    monkeypatch.setattr(cpu_tuning, 'numa_nodes', lambda root=None: ['node0'])
    benchmark_cnn.BenchmarkCNN(p, gpus=0)
    assert capsys.readouterr().err.count(
        'warning: --use_numa_affinity has no effect: this host has 1 NUMA node(s)') == 1
    assert not benchmark_cnn.make_session_config(p, 1).experimental.use_numa_affinity
    monkeypatch.setattr(cpu_tuning, 'numa_nodes', lambda root=None: ['node0', 'node1'])
    assert benchmark_cnn.make_session_config(p, 1).experimental.use_numa_affinity


@pytest.mark.parametrize('flag', ['--kmp_blocktime=-1', '--num_intra_threads=-2'])
def test_negative_values_are_usage_errors(flag):
    proc = subprocess.run([sys.executable, os.path.join(REPO, 'tf_cnn_benchmarks.py'), flag],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 2 and proc.stderr.startswith('error: --')
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize('cores, said', [(1, '(1 physical core)'), (2, '(2 physical cores)')])
def test_the_threads_text_counts_cores_in_their_number(monkeypatch, cores, said):
    # A last user's trial: '(1 physical cores)' on a one-core host.
    monkeypatch.setattr(cpu_tuning, 'physical_cores', lambda: cores)
    assert cpu_tuning.describe((1, 1)).startswith('intra-op 1, inter-op 1 %s' % said)


# --- Thread counts: a hard bound on every host, a warning above this host's CPUs.

def test_more_intra_op_threads_than_allowed_cpus_warn_on_this_host_only(monkeypatch):
    from tf_cnn_benchmarks.metrics import host_load
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset({0}))  # `taskset -c 0`
    line = cpu_tuning.oversubscription_warning(make_params(), (2, 1))
    assert line.startswith('2 intra-op threads on the 1 CPU this run may use: oversubscribed')
    assert 'images/sec are those of an oversubscribed run' in line
    assert line.endswith('(--num_intra_threads=1 gives each thread a CPU)')
    assert cpu_tuning.oversubscription_warning(make_params(), (1, 4)) is None  # inter-op: no
    assert cpu_tuning.oversubscription_warning(make_params(), (0, 2)) is None  # TF sizes it
    # A dry run or a scaling plan may plan for another host and runs no step here.
    assert cpu_tuning.oversubscription_warning(make_params(dry_run=True), (2, 1)) is None
    assert cpu_tuning.oversubscription_warning(make_params(plan_scaling=True), (2, 1)) is None
    monkeypatch.setattr(host_load, 'allowed_cpus', lambda: frozenset(range(64)))
    assert cpu_tuning.oversubscription_warning(make_params(), (64, 2)) is None
    # Under a container's 0.5-CPU quota, 2 threads on 64 allowed CPUs take turns on one.
    monkeypatch.setattr(cpu_quota, 'host_quota', lambda: cpu_quota.Quota(0.5, 'test', ''))
    assert cpu_tuning.oversubscription_warning(make_params(), (2, 2)).startswith(
        '2 intra-op threads on the 1 CPU this run may use: oversubscribed')


_WARN_SCRIPT = textwrap.dedent('''
    import os, sys
    sys.path.insert(0, os.path.join({repo!r}, 'tests'))
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import cli
    from tf_cnn_benchmarks.metrics import host_load
    from tf_cnn_benchmarks.runtime import runtime_env
    host_load.allowed_cpus = lambda: frozenset({{0, 1}})
    def stop():
        raise KeyboardInterrupt  # where TensorFlow would load: the run stops there (130)
    runtime_env.import_tensorflow = stop
    print('STATUS', cli.main(['tf_cnn_benchmarks', '--model=trivial', *sys.argv[1:]]))
''')


@pytest.mark.parametrize('extra, warned', [([], True), (['--dry_run'], False),
                                           (['--num_intra_threads=2'], False)])
def test_the_command_warns_once_of_an_oversubscribed_run(extra, warned):
    args = ['--num_intra_threads=3'] + extra
    proc = subprocess.run([sys.executable, '-c', _WARN_SCRIPT.format(repo=REPO), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert 'STATUS 130' in proc.stdout, proc.stdout + proc.stderr
    said = proc.stderr.count('warning: 3 intra-op threads on the 2 CPUs this run may use: '
                             'oversubscribed')
    assert said == int(warned), proc.stderr


@pytest.mark.parametrize('flag', ['num_intra_threads', 'num_inter_threads',
                                  'datasets_num_private_threads', 'per_gpu_thread_count'])
def test_absurd_thread_counts_are_refused_before_tensorflow_loads(flag):
    # A new user's --num_intra_threads=100000 made 15,786 threads and 19 GB before its first
    # step (load average 129): now one error line, exit 2, nothing loaded. (Through
    # _WARN_SCRIPT: were the bound lost, the run stops where TensorFlow would load, 130.)
    proc = subprocess.run([sys.executable, '-c', _WARN_SCRIPT.format(repo=REPO),
                           '--%s=100000' % flag],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert 'STATUS 2' in proc.stdout, proc.stdout + proc.stderr
    assert proc.stderr.startswith('error: --%s must be at most 1024: ' % flag)
    assert proc.stderr.rstrip().endswith('Received: %s=100000' % flag)
    assert len(proc.stderr.strip().splitlines()) == 1
    assert 'Loading TensorFlow' not in proc.stdout
    from tf_cnn_benchmarks import params
    params.check_ranges(make_params(**{flag: 1024}))  # the bound itself runs
