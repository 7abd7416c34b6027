"""Result files as committed data (history/result_files.py), written by the bench scripts
(bench/bench_report.py) and by `tf_cnn_sweep --publish` (tools/sweep/publish.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tf_cnn_benchmarks.history import result_files
from tf_cnn_benchmarks.tools.sweep import cli as sweep
from tf_cnn_benchmarks.tools.sweep import publish as sweep_publish

import checkout
import results_helpers as rh

REPO = checkout.REPO
bench_report = checkout.load_bench('bench_report')
bench_quick_runs = checkout.load_bench('bench_quick_runs')


def _prov(**changes):
    prov = {'date': '2026-12-02T15:40:00Z', 'command': 'python -m bench.bench_x --a=1',
            'device': 'cpu', 'tensorflow': '2.21.0', 'tf_cnn_benchmarks': '0.2.0',
            'commit': 'a' * 40,
            'cpu_model': 'AMD EPYC', 'cpu_flags': ['avx2', 'avx512_bf16'], 'cpu_cores': 2,
            'load_average_before': 1.5, 'load_average_after': 2.25, 'onednn': 'on'}
    prov.update(changes)
    return prov


def test_the_name_says_date_device_tensorflow_and_what():
    assert result_files.result_stem('roofline_resnet50_b8_bf16', _prov()) == \
        '2026-12-02-cpu-tf2.21-roofline-resnet50-b8-bf16'
    assert result_files.result_stem('quick runs', _prov(device='gpu', tensorflow='2.16.1')) == \
        '2026-12-02-gpu-tf2.16-quick-runs'


def test_a_written_file_holds_the_data_and_its_provenance(tmp_path):
    stem = result_files.write(str(tmp_path / 'new' / 'results'), 'precision', {'rows': [1]},
                              '| a |\n| --- |\n| 1 |\n', _prov())
    assert stem.endswith('/new/results/2026-12-02-cpu-tf2.21-precision')
    doc = result_files.load(stem + '.json')
    assert doc == {'what': 'precision', 'provenance': _prov(), 'data': {'rows': [1]}}
    assert open(stem + '.md').read() == (
        '# precision\n\n'
        '* command: `python -m bench.bench_x --a=1`\n'
        '* date: 2026-12-02T15:40:00Z; TensorFlow 2.21.0; tf_cnn_benchmarks 0.2.0; commit '
        '`aaaaaaaaaaaa`\n'
        '* host: AMD EPYC, 2 cores, CPU flags avx2 avx512_bf16; oneDNN on\n'
        '* load average (1 min): 1.50 before, 2.25 after\n\n'
        '| a |\n| --- |\n| 1 |\n')


def test_a_file_that_is_not_a_result_is_one_error(tmp_path):
    (tmp_path / 'x.json').write_text('{"what": "x"}')
    with pytest.raises(ValueError, match=r'x.json is not a result file: no provenance, data$'):
        result_files.load(str(tmp_path / 'x.json'))
    (tmp_path / 'y.json').write_text('{')
    with pytest.raises(ValueError, match=r'y.json is not a result file: '):
        result_files.load(str(tmp_path / 'y.json'))


def test_provenance_names_the_machine_the_load_and_the_commit():
    prov = result_files.provenance('cmd', 'cpu', REPO, 0.5)
    assert prov['command'] == 'cmd' and prov['load_average_before'] == 0.5
    assert set(prov) == set(_prov())
    assert prov['date'].endswith('Z') and len(prov['date']) == 20
    assert isinstance(prov['cpu_flags'], list) and prov['load_average_after'] >= 0


def test_the_commit_is_marked_dirty_when_tracked_files_changed(tmp_path):
    git = ['git', '-C', str(tmp_path), '-c', 'user.email=a@b', '-c', 'user.name=a']
    subprocess.run(git[:3] + ['init', '-q'], check=True)
    (tmp_path / 'f').write_text('1')
    subprocess.run(git + ['add', 'f'], check=True)
    subprocess.run(git + ['commit', '-qm', 'x'], check=True)
    clean = result_files.git_commit(str(tmp_path))
    assert len(clean) == 40 and all(c in '0123456789abcdef' for c in clean)
    (tmp_path / 'untracked').write_text('u')
    assert result_files.git_commit(str(tmp_path)) == clean
    (tmp_path / 'f').write_text('2')
    assert result_files.git_commit(str(tmp_path)) == clean + '-dirty'
    assert result_files.git_commit(str(tmp_path / 'nowhere')) is None


def test_a_commit_is_recorded_only_for_the_top_folder_of_a_work_tree(tmp_path):
    """pkg56 finding 5: the package's folder of a venv inside some other repository
    (`./venv/lib/python3.11/site-packages/tf_cnn_benchmarks`) recorded that repository's
    commit; an installed package has none, whatever repository its venv is in."""
    git = ['git', '-C', str(tmp_path), '-c', 'user.email=a@b', '-c', 'user.name=a']
    subprocess.run(git[:3] + ['init', '-q'], check=True)
    subprocess.run(git + ['commit', '-q', '--allow-empty', '-m', 'x'], check=True)
    package = tmp_path / 'venv' / 'lib' / 'site-packages' / 'tf_cnn_benchmarks'
    package.mkdir(parents=True)
    assert result_files.git_commit(str(package)) is None
    assert len(result_files.git_commit(str(tmp_path))) == 40  # a checkout's own top folder
    assert result_files.git_commit(REPO)  # the checkout under test is one


def test_provenance_without_a_commit_says_so_and_keeps_the_version(tmp_path, monkeypatch):
    from tf_cnn_benchmarks import __version__
    monkeypatch.chdir(tmp_path)
    prov = result_files.provenance('cmd', 'cpu', str(tmp_path), 0.5)
    assert prov['commit'] is None and prov['tf_cnn_benchmarks'] == __version__
    lines = result_files.provenance_lines(prov)
    assert lines[1].endswith('; TensorFlow %s; tf_cnn_benchmarks %s; commit none (not run from '
                             'a git checkout: an installed package)' % (prov['tensorflow'],
                                                                      __version__))
    assert result_files.commit_text(prov) == 'none'
    # A file written before the version was kept reads as it was written.
    old = _prov()
    del old['tf_cnn_benchmarks']
    assert result_files.provenance_lines(old)[1] == (
        '* date: 2026-12-02T15:40:00Z; TensorFlow 2.21.0; commit `aaaaaaaaaaaa`')


def test_a_bench_script_records_the_command_that_runs_it_again():
    script = os.path.join(REPO, 'bench', 'bench_precision.py')
    assert bench_report.command_line([script, '--models=alexnet', '--batch_size=8']) == \
        'python -m bench.bench_precision --models=alexnet --batch_size=8'
    assert bench_report.command_line(['/usr/bin/other', 'a b']) == "/usr/bin/other 'a b'"


def test_the_quick_runs_run_from_the_checkout_without_recording(tmp_path):
    argv = bench_quick_runs.checkout_argv(
        'tf_cnn_sweep --output_dir=runs/quick --models=trivial -- --device=cpu', str(tmp_path))
    assert argv == [sys.executable, '-m', 'tools.sweep',
                    '--output_dir=%s' % (tmp_path / 'runs' / 'quick'), '--models=trivial', '--',
                    '--noresults_db', '--device=cpu']
    assert bench_quick_runs.checkout_argv('tf_cnn_benchmarks --model=trivial', 'w') == [
        sys.executable, 'tf_cnn_benchmarks.py', '--model=trivial', '--noresults_db']
    out = ('total images/sec: 3.50\n[worker0] total images/sec: 2.00\n'
           '[launcher] cluster images/sec: 9.25 (sum of the workers)\n')
    assert bench_quick_runs.images_per_sec(out) == 9.25
    assert bench_quick_runs.images_per_sec('a\ntotal images/sec: 3.50\n') == 3.5
    assert bench_quick_runs.images_per_sec('nothing') is None


def _sweep_folder(out, device='cpu'):
    records = [{'key': 'k%d' % i, 'config': {'model': 'trivial', 'repeat': i}, 'status': 'ok',
                'params': {'device': device}, 'environment': {'tf_version': '2.21.0'}}
               for i in range(2)]
    rh.sweep_folder(out, records)
    with open(os.path.join(out, 'report.md'), 'w') as f:
        f.write('# report\n')
    return records


def test_a_published_sweep_holds_its_records_report_and_command(tmp_path):
    records = _sweep_folder(str(tmp_path / 'a'))
    argv = ['/x/bin/tf_cnn_sweep', '--output_dir=a', '--publish=demo', '--', '--device=cpu']
    stem = sweep_publish.publish(str(tmp_path / 'a'), 'demo', str(tmp_path / 'results'), argv,
                                 1.25)
    assert os.path.basename(stem).endswith('-cpu-tf2.21-demo')
    doc = result_files.load(stem + '.json')
    assert doc['data'] == {'records': records}
    assert doc['provenance']['command'] == \
        'tf_cnn_sweep --output_dir=a --publish=demo -- --device=cpu'
    assert doc['provenance']['load_average_before'] == 1.25
    assert open(stem + '.md').read().endswith('\n# report\n')
    assert sweep_publish.device_of(_sweep_folder(str(tmp_path / 'g'), 'gpu')) == 'gpu'


def test_a_publish_name_that_cannot_be_a_file_name_is_a_usage_error(capsys, tmp_path):
    status = sweep.main(['tf_cnn_sweep', '--output_dir=%s' % tmp_path, '--models=trivial',
                         '--batch_sizes=2', '--publish=a/b'])
    assert status == 2
    assert capsys.readouterr().err == (
        'error: --publish=a/b: takes a name of letters, digits, dots, dashes and underscores, '
        'e.g. --publish=precision-training\n')
    assert list(tmp_path.iterdir()) == []


def test_a_published_sweep_publishes_its_plots_beside_the_md(tmp_path):
    """pkg56 finding 6: the .md linked plots/<model>_images_per_sec.png beside itself, and the
    PNG stayed in the sweep folder. It is copied beside the .md under the result's own stem;
    a plot the sweep folder no longer holds is named, not linked."""
    out = tmp_path / 'a'
    _sweep_folder(str(out))
    (out / 'plots').mkdir()
    (out / 'plots' / 'trivial_images_per_sec.png').write_bytes(b'\x89PNG one')
    (out / 'report.md').write_text('# report\n\n## Plots\n\n'
                                   '![trivial_images_per_sec.png](plots/trivial_images_per_sec.png)\n'
                                   '![trivial_scaling.png](plots/trivial_scaling.png)\n')
    publish_dir = tmp_path / 'results'
    stem = sweep_publish.publish(str(out), 'demo', str(publish_dir), ['tf_cnn_sweep'], 0.5)
    name = os.path.basename(stem) + '-trivial_images_per_sec.png'
    assert (publish_dir / name).read_bytes() == b'\x89PNG one'
    md = open(stem + '.md').read()
    assert md.endswith('\n![trivial_images_per_sec.png](%s)\n'
                       'trivial_scaling.png: not published (the sweep folder no longer holds '
                       'the plot).\n' % name)
    assert _broken_links(str(publish_dir)) == []


def _broken_links(folder: str) -> list[str]:
    """'file.md: target' for each relative link or image of the folder's .md files whose
    file is not there."""
    import re
    broken = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith('.md'):
            continue
        text = open(os.path.join(folder, name), encoding='utf-8').read()
        for target in re.findall(r'\]\(([^)\s]+)\)', text):
            path = target.split('#')[0]
            if path and '://' not in path and not os.path.exists(os.path.join(folder, path)):
                broken.append('%s: %s' % (name, target))
    return broken


def test_every_link_of_the_committed_result_files_resolves():
    """results/2026-12-02-cpu-tf2.21-sweep-alexnet-precision.md linked a plot that was never
    committed (the sweep's publish did not copy plots then)."""
    assert _broken_links(os.path.join(REPO, 'results')) == []
