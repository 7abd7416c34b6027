"""The `--list_models` table: rows measured from the built graphs, and its text format parsed."""

import pytest

import tf_cnn_benchmarks as tfcnn
from tf_cnn_benchmarks.models import model_catalog, model_config, model_table

import helpers

try:  # The sibling module holds the expected parameter counts.
    import test_model_params as params_test
except ImportError:  # pytest --import-mode=importlib
    from tests import test_model_params as params_test

HEADER = ['model', 'dataset', 'image', 'parameters', 'GFLOPs', 'batch', 'learning_rate',
          'original']


@pytest.fixture(scope='module')
def all_rows(tmp_path_factory):
    """model_table.model_rows(): every model built (the slow part), once per test session
    whichever pytest-xdist worker asks first (helpers.run_once; JSON keeps ints and floats)."""
    rows = helpers.run_once(tmp_path_factory, 'model_table_rows',
                            lambda directory: [list(row) for row in model_table.model_rows()])
    return [model_catalog.ModelRow(*row) for row in rows]


def parse(text):
    """Parses the table: {(model, dataset): {column: string}}, after checking its frame."""
    lines = text.split('\n')
    assert lines[0].split() == HEADER
    assert set(lines[1].replace(' ', '')) == {'-'}
    # Fixed width: each column starts where its run of dashes starts.
    dashes = lines[1]
    starts = [i for i, ch in enumerate(dashes) if ch == '-' and (i == 0 or dashes[i - 1] == ' ')]
    assert len(starts) == len(HEADER)
    table = {}
    for line in lines[2:]:
        cells = line.split()
        assert len(cells) == len(HEADER), line
        # The text columns (model, dataset) are left-aligned at their start.
        assert line[starts[0]:].startswith(cells[0]) and line[starts[1]:].startswith(cells[1])
        table[(cells[0], cells[1])] = dict(zip(HEADER, cells, strict=True))
    return table


def test_every_model_once_with_its_exact_parameters(all_rows):
    assert [(r.name, r.dataset) for r in all_rows] == model_config.list_models()
    for row in all_rows:
        assert row.parameters == params_test.expected_params(row.name, row.dataset), row.name
        assert row.gflops > 0


def test_the_catalog_is_the_measured_table(all_rows):
    """model_catalog.ROWS (what --list_models prints, without TensorFlow) is exactly what the
    built models measure; regenerate it with `python -m tf_cnn_benchmarks.models.model_table`
    after changing a model."""
    assert model_catalog.rows() == all_rows
    assert model_table.catalog_source(all_rows) == '\n'.join(
        '    %r,' % (row,) for row in model_catalog.ROWS)
    for dataset in ('imagenet', 'cifar10'):
        assert model_catalog.names(dataset) == sorted(
            name for name, _ in model_config.list_models(dataset))
    assert model_catalog.list_models() == model_config.list_models()
    assert tfcnn.list_models('cifar10') == model_catalog.names('cifar10')


def test_formatted_values(all_rows):
    table = parse(model_table.format_model_table(all_rows))
    assert len(table) == len(model_config.list_models())
    resnet50 = table[('resnet50', 'imagenet')]
    assert resnet50 == {'model': 'resnet50', 'dataset': 'imagenet', 'image': '224',
                        'parameters': '25,559,081', 'GFLOPs': '7.716', 'batch': '64',
                        'learning_rate': '0.032', 'original': 'same'}
    alexnet = table[('alexnet', 'imagenet')]
    assert (alexnet['image'], alexnet['parameters'], alexnet['batch']) == ('227', '61,842,345',
                                                                         '512')
    cifar = table[('alexnet', 'cifar10')]
    assert (cifar['image'], cifar['parameters'], cifar['learning_rate']) == ('32', '1,756,426',
                                                                           '0.1')
    assert table[('inception3', 'imagenet')]['image'] == '299'
    # LeNet by hand: 28,069,888 FLOPs (tests/test_flops.py).
    assert table[('lenet', 'imagenet')]['GFLOPs'] == '0.028'


def test_columns_are_aligned(all_rows):
    lines = model_table.format_model_table(all_rows).split('\n')
    dashes = lines[1]
    # Right-aligned numeric columns end at the same position on every line.
    ends = [i + 1 for i, ch in enumerate(dashes) if ch == '-' and (i + 1 == len(dashes)
                                                                    or dashes[i + 1] == ' ')]
    for line in lines[2:]:
        for end in ends[2:-1]:
            assert line[end - 1] != ' ', line


def test_subset_in_the_given_order():
    rows = model_table.model_rows([('resnet20', 'cifar10'), ('lenet', 'imagenet')])
    assert [(r.name, r.dataset, r.image_size, r.batch_size) for r in rows] == [
        ('resnet20', 'cifar10', 32, 128), ('lenet', 'imagenet', 28, 32)]
    assert rows[1].gflops == pytest.approx(28_069_888 / 1e9)


def test_unknown_model_is_an_error():
    with pytest.raises(model_config.UnknownModelError):
        model_table.model_rows([('resnet51', 'imagenet')])


def test_empty_table_has_a_header():
    text = model_table.format_model_table([])
    assert text.split('\n')[0].split() == HEADER


def test_the_generator_checks_and_rewrites_the_catalog(capsys, monkeypatch, tmp_path):
    """`python -m tf_cnn_benchmarks.models.model_table --check` exits 1 with one line naming
    the stale rows and the command; `--write` rewrites ROWS in place, after which the file's
    rows are the measured ones (the measured rows injected: no model is built)."""
    measured = model_catalog.rows()
    tinynet = model_catalog.ModelRow('tinynet', 'cifar10', 32, 94538, 0.0206464, 64, 0.01, 8,
                                     False)
    measured = sorted(measured + [tinynet], key=lambda r: (r.name, r.dataset))
    monkeypatch.setattr(model_table, 'model_rows', lambda: list(measured))
    copy = tmp_path / 'model_catalog.py'
    copy.write_text(open(model_table.CATALOG_PATH, encoding='utf-8').read())
    monkeypatch.setattr(model_table, 'CATALOG_PATH', str(copy))
    assert model_table.main(['--check']) == 1
    assert capsys.readouterr() == ('', (
        'error: models/model_catalog.py ROWS is stale (missing: tinynet/cifar10); run python -m '
        'tf_cnn_benchmarks.models.model_table --write\n'))
    assert model_table.main(['--write']) == 0
    assert capsys.readouterr().out == 'wrote models/model_catalog.py ROWS (missing: ' \
        'tinynet/cifar10)\n'
    text = copy.read_text()
    assert ("    ('tinynet', 'cifar10', 32, 94538, 20646400, 64, 0.01, 8, False),\n"
            "    ('trivial', 'cifar10', 32, 52235, 96256, 32, 0.001, 8, False),\n") in text
    namespace = {}
    exec(text.split('\nROWS = ', 1)[1].split('\n)\n', 1)[0].join(['ROWS = ', '\n)\n']),
         namespace)
    assert namespace['ROWS'] == tuple(model_table.catalog_source_rows(measured))
    monkeypatch.setattr(model_catalog, 'ROWS', namespace['ROWS'])
    assert model_table.main(['--check']) == 0
    assert capsys.readouterr().out == 'models/model_catalog.py ROWS is current (39 models)\n'
