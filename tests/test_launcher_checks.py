"""tools/cluster_checks.py: the local cluster launcher's checks before any task starts, in
process (no task, no TensorFlow): a --data_dir the tasks cannot read, a --host that is not this
machine's, a --log_dir that cannot be made. Each is one `error:` line, no traceback, and the
exit status the command gives."""

from __future__ import annotations

import errno
import os

import pytest

from tf_cnn_benchmarks.tools import cluster_checks, launch_cluster

import helpers

pytestmark = pytest.mark.cli

TASK_FLAGS = ['--model=trivial', '--batch_size=4', '--num_batches=5']


@pytest.fixture
def started(monkeypatch):
    """The launchers whose tasks were started (none, when a check refused the launch)."""
    launched = []
    monkeypatch.setattr(launch_cluster.Launcher, 'start', lambda self: launched.append(self))
    monkeypatch.setattr(launch_cluster.Launcher, 'wait', lambda self: 0)
    return launched


def _refused(capsys, started, *launcher_flags, task_flags=()) -> tuple[int, str]:
    """main()'s status and its one stderr line; asserts no task started, nothing on stdout."""
    status = launch_cluster.main(list(launcher_flags) + ['--num_workers=2', '--'] + TASK_FLAGS
                                 + list(task_flags))
    captured = capsys.readouterr()
    assert started == [] and captured.out == ''
    lines = captured.err.splitlines()
    assert len(lines) == 1 and 'Traceback' not in captured.err, captured.err
    return status, lines[0]


def _data_dir(tmp_path, kind: str) -> str:
    path = tmp_path / 'data'
    if kind == 'empty folder':
        path.mkdir()
    elif kind == 'a shard file':
        path = tmp_path / 'train-00000-of-00001'
        path.write_bytes(b'\0' * 16)
    elif kind in ('validation shards only', 'train shards 0 and 2 of 3'):
        path.mkdir()
        names = (['validation-0000%d-of-00002' % i for i in range(2)]
                 if kind == 'validation shards only'
                 else ['train-0000%d-of-00003' % i for i in (0, 2)])
        for name in names:  # listed, never read, before the error
            (path / name).write_bytes(b'\0' * 16)
    elif kind == 'JPEG class folders':
        for name in ('cat', 'dog'):
            (path / name).mkdir(parents=True)
            (path / name / 'a.jpg').write_bytes(b'\xff\xd8\xff')
    return str(path)


@pytest.mark.parametrize('kind', ['missing folder', 'empty folder', 'a shard file',
                                  'JPEG class folders', 'validation shards only'])
def test_an_unusable_data_dir_is_the_commands_one_line_before_any_task_starts(
        tmp_path, capsys, started, kind):
    """It was a traceback ending in cnn_util.DataError (exit 1): now the line the command
    prints for the same --data_dir, and its exit status 1. A folder without the shards of the
    subset the workers read (validation shards only, for a training run) passed the checks:
    every task started, then each failed with that line."""
    data_dir = '--data_dir=%s' % _data_dir(tmp_path, kind)
    status, line = _refused(capsys, started, task_flags=[data_dir])
    command = helpers.run_command(*TASK_FLAGS, data_dir)
    assert command.returncode == status == 1
    assert command.stderr == line + '\n'
    assert line.startswith('error: ') and '--data_dir %s' % data_dir.split('=')[1] in line


def test_shards_that_do_not_number_0_to_n_are_the_commands_line_before_any_task_starts(
        tmp_path, capsys, started):
    data_dir = '--data_dir=%s' % _data_dir(tmp_path, 'train shards 0 and 2 of 3')
    status, line = _refused(capsys, started, task_flags=[data_dir])
    command = helpers.run_command(*TASK_FLAGS, data_dir)
    assert command.returncode == status == 1
    assert command.stderr == line + '\n'
    assert 'has 2 train shard(s)' in line and '--allow_shard_subset' in line


def test_a_named_dataset_in_a_missing_folder_is_one_line_too(tmp_path, capsys, started):
    status, line = _refused(capsys, started, task_flags=[
        '--data_name=imagenet', '--data_dir=%s' % (tmp_path / 'nothing')])
    assert status == 1 and line.startswith('error: --data_dir %s does not exist' % (
        tmp_path / 'nothing'))


@pytest.mark.parametrize('host, problem', [
    ('nosuchhost.invalid', 'does not resolve'),  # RFC 6761: .invalid never resolves
    ('192.0.2.1', 'is not an address of this machine'),  # RFC 5737 TEST-NET-1: no host's
    ('', 'is empty'),
])
def test_a_host_that_is_not_this_machines_is_a_usage_error(capsys, started, host, problem):
    """--host=nosuchhost.invalid was a socket.gaierror traceback, a foreign address an
    OSError one (Cannot assign requested address)."""
    status, line = _refused(capsys, started, '--host=%s' % host)
    assert status == 2
    assert line.startswith('error: --host %s%s' % (host + ' ' if host else '', problem)), line
    assert 'give an address of this machine: 127.0.0.1 (loopback, the default)' in line


def test_hosts_of_this_machine_get_free_ports():
    assert cluster_checks.local_addresses()[0] == '127.0.0.1'
    for host in ('127.0.0.1', 'localhost', '127.0.0.2'):
        cluster_checks.check_host(host)
        assert 0 < cluster_checks.free_port(host) < 65536
    with pytest.raises(cluster_checks.LaunchError, match='not an address of this machine'):
        cluster_checks.free_port('192.0.2.1')


def test_a_log_dir_that_cannot_be_made_is_a_usage_error_before_any_task_starts(
        tmp_path, capsys, started):
    """It was '[launcher] error: cannot start the tasks: ...; stopping them' (exit 1) though
    no task had started."""
    afile = tmp_path / 'afile'
    afile.write_text('')
    bad = [str(afile / 'logs')]
    if os.path.isdir('/proc'):
        bad.append('/proc/nope')
    for log_dir in bad:
        status, line = _refused(capsys, started, '--log_dir=%s' % log_dir)
        assert status == 2
        assert line.startswith('error: --log_dir %s cannot be made (' % log_dir), line
        assert line.endswith('); choose another path')
        assert not os.path.exists(log_dir)


def test_the_log_dir_is_made_only_when_every_check_passed(tmp_path, capsys, started):
    logs = tmp_path / 'logs' / 'cluster'
    status, line = _refused(capsys, started, '--log_dir=%s' % logs,
                            task_flags=['--model=resnet51'])
    assert status == 2 and line.startswith("error: unknown --model='resnet51'")
    assert not (tmp_path / 'logs').exists()
    assert launch_cluster.main(['--log_dir=%s' % logs, '--'] + TASK_FLAGS) == 0
    assert len(started) == 1 and logs.is_dir()
    (logs / 'worker1.log').mkdir()
    started.clear()
    status, line = _refused(capsys, started, '--log_dir=%s' % logs)
    assert status == 2 and line == (
        'error: --log_dir %s: %s is a folder, and task worker1 writes its log there; move it '
        'or choose another path' % (logs, logs / 'worker1.log'))


def test_a_ps_the_mode_has_none_of_names_the_launchers_own_flag(capsys):
    # A final user: `tf_cnn_cluster --num_ps=1 -- --variable_update=collective_all_reduce`
    # was refused naming --job_name=ps, a flag the user never gave.
    for mode in ('collective_all_reduce', 'distributed_all_reduce'):
        assert launch_cluster.main(['--num_ps=1', '--', '--variable_update=' + mode]) == 2
        assert capsys.readouterr().err == (
            'error: --variable_update=%s has no ps task (no task would use it and the workers '
            'would wait for it): give --num_ps=0 or leave it out\n' % mode)


def test_num_ps_after_the_separator_and_a_one_host_mode_are_named_for_what_they_are(capsys):
    # A final user: --num_ps after `--` reached the workers, which blamed a --ps_hosts never
    # given; --num_ps=1 with replicated advised --num_ps=0, which then met the one-host rule.
    assert launch_cluster.main(['--', '--num_ps=1']) == 2
    assert capsys.readouterr().err.startswith('error: --num_ps is set by the launcher; ')
    assert launch_cluster.main(['--num_ps=1', '--', '--variable_update=replicated']) == 2
    assert 'has no ps task' not in capsys.readouterr().err


def test_a_log_dir_that_exists_but_cannot_be_written_is_refused_before_any_task_starts(
        tmp_path, capsys, started, monkeypatch):
    """A new user's trial: --log_dir=/sys/kernel (there, writable for root by its mode) was
    '[launcher] error: cannot start the tasks: [Errno 13] Permission denied:
    '/sys/kernel/ps0.log'; stopping them', exit 1."""
    if os.path.isdir('/sys/kernel') and not os.access('/sys/kernel/ps0.log', os.F_OK):
        status, line = _refused(capsys, started, '--log_dir=/sys/kernel')
        assert status == 2 and line.startswith(
            'error: --log_dir /sys/kernel cannot be written ('), line
    logs = tmp_path / 'logs'
    logs.mkdir()

    real = cluster_checks.tempfile.TemporaryFile

    def refuse(*args, dir=None, **kwargs):  # a read-only folder (chattr +i) for root too
        if dir == str(logs):
            raise PermissionError(errno.EACCES, 'Permission denied')
        return real(*args, dir=dir, **kwargs)
    monkeypatch.setattr(cluster_checks.tempfile, 'TemporaryFile', refuse)
    status, line = _refused(capsys, started, '--log_dir=%s' % logs)
    assert status == 2 and line == (
        'error: --log_dir %s cannot be written (cannot create a file there: Permission '
        'denied); choose another path' % logs)
    assert os.listdir(logs) == []


def test_help_says_first_that_the_bare_command_starts_a_real_cluster(capsys, started):
    """A trial: `tf_cnn_cluster` alone started a 3-task cluster (17.7 s, 143 lines), and its
    --help did not say that the bare command does that."""
    with pytest.raises(SystemExit) as stop:
        launch_cluster.main(['--help'])
    assert stop.value.code == 0 and started == []
    head = capsys.readouterr().out.split('options:')[0]
    assert ' '.join(head.split()).endswith(
        'Without arguments it starts a real cluster at once: 1 ps and 2 worker tasks training '
        'the default model (trivial, 100 steps; about 18 s and 140 lines on a 2-core CPU); '
        '--help and --version start nothing.')


def test_a_misspelt_launcher_option_is_named_as_the_launchers(capsys, started):
    """A trial: `tf_cnn_cluster --num_wrkers=2` went to the tasks' flags, whose check answered
    `Did you mean: num_inter_threads ?`; a misspelt run flag still gets the run's own line."""
    assert launch_cluster.main(['--num_wrkers=2', '--timeout_secs=5']) == 2
    assert capsys.readouterr() == ('', (
        'error: --num_wrkers is neither a tf_cnn_cluster option nor a tf_cnn_benchmarks flag; '
        'did you mean --num_workers? (see tf_cnn_cluster --help)\n'))
    assert launch_cluster.main(['--numps=1', '--', '--model=trivial']) == 2
    assert 'did you mean --num_ps?' in capsys.readouterr().err
    assert launch_cluster.main(['--num_batchs=3']) == 2
    assert capsys.readouterr().err == (
        "error: Unknown command line flag 'num_batchs'. Did you mean: num_batches ? "
        "(see --help)\n")
    assert started == []
