"""The original's library calls: benchmark_cnn.make_params / make_params_from_flags / setup,
model_config.register_model, and the original's keys in the dict BenchmarkCNN.run() returns
(lifecycle/results_log.original_stats)."""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from absl import flags as absl_flags

from tf_cnn_benchmarks import benchmark_cnn, params
from tf_cnn_benchmarks.lifecycle import results_log
from tf_cnn_benchmarks.models import model_catalog, model_config, trivial_model

import helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, 'tests')
ORIGINAL_KEYS = ('num_workers', 'num_steps', 'average_wall_time', 'images_per_sec',
                 'last_average_loss', 'top_1_accuracy', 'top_5_accuracy')

# A script as the original's users wrote them: its module names, a model registered at run
# time, make_params -> setup -> BenchmarkCNN(params).run(), then an --eval run of the
# checkpoint; it prints the original's keys of both results as JSON on its last line.
_SCRIPT = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import benchmark_cnn
    from tf_cnn_benchmarks.models import model_config, trivial_model

    class SmallNet(trivial_model.TrivialModel):
        pass

    model_config.register_model('small_net', 'imagenet', SmallNet)
    import tf_cnn_benchmarks as tfcnn
    assert 'small_net' in tfcnn.list_models(), tfcnn.list_models()
    flags = dict(model='small_net', batch_size=2, num_batches=2, num_warmup_batches=0,
                 image_size=16, num_classes=10, results_db=False, train_dir={train_dir!r})
    params = benchmark_cnn.make_params(**flags)
    params = benchmark_cnn.setup(params)
    stats = benchmark_cnn.BenchmarkCNN(params).run()
    params = benchmark_cnn.setup(benchmark_cnn.make_params(eval=True, **flags))
    eval_stats = benchmark_cnn.BenchmarkCNN(params).run()
    keys = {keys!r}
    print(json.dumps({{'train': {{k: stats[k] for k in keys}},
                      'eval': {{k: eval_stats[k] for k in keys}},
                      'losses': stats['losses'], 'elapsed': stats['elapsed_secs'],
                      'model': stats['model'], 'top_1': eval_stats['eval']['top_1']}}))
''')


def test_a_script_in_the_originals_style_registers_a_model_and_gets_the_originals_keys(
        tmp_path):
    script = _SCRIPT.format(tests=TESTS, train_dir=str(tmp_path / 'train'), keys=ORIGINAL_KEYS)
    proc = subprocess.run([sys.executable, '-c', script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    train, evaluation = out['train'], out['eval']
    assert out['model'] == 'small_net'
    assert train['num_workers'] == 1 and train['num_steps'] == 2
    assert train['average_wall_time'] == pytest.approx(out['elapsed'] / 2)
    assert train['last_average_loss'] == pytest.approx(out['losses'][-1])
    assert train['top_1_accuracy'] is None and train['top_5_accuracy'] is None
    assert evaluation['num_steps'] == 2 and evaluation['last_average_loss'] is None
    assert evaluation['top_1_accuracy'] == out['top_1']
    assert 0.0 <= evaluation['top_1_accuracy'] <= evaluation['top_5_accuracy'] <= 1.0
    assert evaluation['average_wall_time'] > 0


def _documented_words() -> set[str]:
    return set(re.findall(r'\w+', results_log.__doc__))


def _written(directory) -> dict:
    (path,) = glob.glob(os.path.join(directory, '*.json'))
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def test_every_key_a_training_and_an_eval_run_write_is_documented(tmp_path):
    train_dir = str(tmp_path / 'train')
    result = helpers.tiny_run(num_batches=2, train_dir=train_dir,
                              benchmark_log_dir=str(tmp_path / 'train_json'))
    assert set(ORIGINAL_KEYS) <= set(result)
    assert result['last_average_loss'] == pytest.approx(result['losses'][-1])
    assert result['average_wall_time'] == pytest.approx(result['elapsed_secs'] / 2)
    helpers.tiny_run(num_batches=2, train_dir=train_dir, eval=True,
                     benchmark_log_dir=str(tmp_path / 'eval_json'))
    training, evaluation = _written(tmp_path / 'train_json'), _written(tmp_path / 'eval_json')
    assert (training['mode'], evaluation['mode']) == ('training', 'evaluation')
    assert "'evaluation'" in results_log.__doc__
    words = _documented_words()
    for written in (training, evaluation):
        assert [k for k in written if k not in words] == []
        for part in ('host_load', 'utilisation'):
            assert [k for k in written[part] or {} if k not in words] == [], part
        assert [k for k in written['host_load'].get('warmup') or {} if k not in words] == []
    assert [k for k in evaluation['eval'] if k not in words] == []
    assert set(ORIGINAL_KEYS) <= set(evaluation)


def test_original_stats_of_a_run_with_an_evaluation_and_of_one_that_timed_nothing():
    evaluated = {'num_workers': 2, 'num_steps': 4, 'images_per_sec': 8.0, 'elapsed_secs': 2.0,
                 'losses': [3.0, None], 'eval': {'top_1': 0.25, 'top_5': 0.75}}
    assert results_log.original_stats(evaluated) == {
        'num_workers': 2, 'num_steps': 4, 'images_per_sec': 8.0, 'average_wall_time': 0.5,
        'last_average_loss': 3.0, 'top_1_accuracy': 0.25, 'top_5_accuracy': 0.75}
    nothing = {'num_workers': 1, 'num_steps': 0, 'images_per_sec': None, 'elapsed_secs': 0.0,
               'losses': [], 'eval': None, 'stopped_in_warmup': True}
    stats = results_log.original_stats(nothing)
    assert stats['average_wall_time'] is None and stats['last_average_loss'] is None
    assert stats['top_1_accuracy'] is None


def test_make_params_and_setup_are_the_originals_calls():
    p = benchmark_cnn.make_params(model='trivial', batch_size=2)
    assert p == params.make_params(model='trivial', batch_size=2)
    assert benchmark_cnn.setup(p) is p
    with pytest.raises(params.ParamsError, match='batch_size'):
        benchmark_cnn.setup(benchmark_cnn.make_params(model='trivial', batch_size='x'))
    with pytest.raises(model_catalog.UnknownModelError, match='resnet5'):
        benchmark_cnn.setup(benchmark_cnn.make_params(model='resnet5'))


def test_make_params_from_flags_reads_parsed_flags_and_says_what_is_missing():
    values = absl_flags.FlagValues()
    with pytest.raises(params.ParamsError, match='define_flags'):
        benchmark_cnn.make_params_from_flags(values)
    params.define_flags(values)
    with pytest.raises(params.ParamsError, match='not parsed'):
        benchmark_cnn.make_params_from_flags(values)
    values(['prog', '--model=resnet20', '--batch_size=3'])
    p = benchmark_cnn.make_params_from_flags(values)
    assert (p.model, p.batch_size) == ('resnet20', 3)


def test_register_model_refuses_a_taken_name_another_dataset_and_a_non_model():
    before = model_config.list_models()
    with pytest.raises(ValueError, match="'trivial' is already registered for dataset 'cifar10'"):
        model_config.register_model('trivial', 'cifar10', trivial_model.TrivialCifar10Model)
    with pytest.raises(ValueError, match="dataset 'coco'"):
        model_config.register_model('new_net', 'coco', trivial_model.TrivialModel)
    with pytest.raises(TypeError, match='CNNModel; it returned object'):
        model_config.register_model('new_net', 'imagenet', object)
    assert model_config.list_models() == before
    assert 'new_net' not in model_catalog.names('imagenet')


def test_the_package_docstrings_list_models_example_is_what_it_returns():
    import tf_cnn_benchmarks as tfcnn
    shown = re.search(r"tfcnn\.list_models\(\)\s+# \[([^\]]*)\]", tfcnn.__doc__).group(1)
    names = [n.strip(" '") for n in shown.split(',') if n.strip() != '...']
    assert names == tfcnn.list_models()[:len(names)] and len(names) >= 2


def test_import_benchmark_cnn_inside_the_checkout_says_which_import_to_write():
    """It failed with 'attempted relative import with no known parent package'."""
    proc = subprocess.run([sys.executable, '-c', 'import benchmark_cnn'], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1].startswith(
        'ImportError: benchmark_cnn is a module of the package tf_cnn_benchmarks')
    assert '`from tf_cnn_benchmarks import benchmark_cnn`' in proc.stderr


def test_the_python_api_page_names_the_variables_a_call_sets():
    from tf_cnn_benchmarks.runtime import runtime_env
    with open(os.path.join(REPO, 'docs', 'python-api.md'), encoding='utf-8') as f:
        page = f.read()
    for name, value in runtime_env.DEFAULTS.items():
        assert '`%s=%s`' % (name, value) in page
    for name in runtime_env.HOME_WRITERS:
        assert '`%s`' % name in page
    for name in ORIGINAL_KEYS:
        assert '`%s`' % name in page
