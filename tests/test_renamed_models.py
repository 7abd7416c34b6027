"""A model name whose network changed ('mobilenet': this project's MobileNet v1 until it took the
original's meaning, MobileNet v2): a stored record of the old network is never one
configuration with a run of today's (metrics/configuration.py stored_model; the results
database's migration to schema 5, history/store.py; ingest, history/records.py; --baseline,
metrics/baseline.py)."""

from __future__ import annotations

import json

import pytest

from tf_cnn_benchmarks import params
from tf_cnn_benchmarks.history import ingest, records, store
from tf_cnn_benchmarks.metrics import baseline, configuration
from tf_cnn_benchmarks.models import model_catalog

import results_helpers as rh

V1_FLOPS = model_catalog.row('mobilenet_v1', 'imagenet').gflops * 1e9  # 1,137,482,752
V2_FLOPS = model_catalog.row('mobilenet', 'imagenet').gflops * 1e9  # 601,551,104


def _mobilenet(rate, flops, hours=0, image_size=224, **extra):
    """A training result of 'mobilenet' whose utilisation recorded `flops` forward FLOPs an
    image (None: nothing recorded)."""
    r = rh.result(rate, model='mobilenet', image_size=image_size,
                  finished=rh.T0.replace(hour=hours), **extra)
    if flops is not None:
        r['utilisation'] = dict(r['utilisation'], forward_flops_per_image=int(flops),
                                model_flops_per_sec=3 * flops * rate)
    return r


def test_the_flops_a_record_kept_say_which_network_it_ran():
    assert configuration.stored_model('mobilenet', V1_FLOPS, 224) == 'mobilenet_v1'
    assert configuration.stored_model('mobilenet', V2_FLOPS, 224) == 'mobilenet'
    assert configuration.stored_model('mobilenet', V2_FLOPS, None) == 'mobilenet'  # 224
    assert configuration.stored_model('mobilenet', None, 224) == 'mobilenet?'
    assert configuration.stored_model('mobilenet_v2', V1_FLOPS, 224) == 'mobilenet_v2'
    assert configuration.stored_model('resnet50', None, None) == 'resnet50'


@pytest.mark.parametrize('image_size', [32, 33, 65, 100, 160, 299, 331])
def test_the_rule_holds_at_other_image_sizes(image_size):
    """The FLOPs counted (models/flops.py) of each network at the size, read back by the rule."""
    from tf_cnn_benchmarks.models import flops, model_config
    for name, meant in (('mobilenet_v1', 'mobilenet_v1'), ('mobilenet', 'mobilenet')):
        counted = flops.forward_flops_per_image(model_config.get_model(name), image_size)
        assert configuration.stored_model('mobilenet', counted, image_size) == meant, name


def test_an_ingested_result_of_the_old_mobilenet_is_mobilenet_v1(tmp_path):
    old, new = _mobilenet(500.0, V1_FLOPS), _mobilenet(900.0, V2_FLOPS, 1)
    unknown = _mobilenet(700.0, None, 2)
    rows = [records.from_result(r, source='json x') for r in (old, new, unknown)]
    assert [r['model'] for r in rows] == ['mobilenet_v1', 'mobilenet', 'mobilenet?']
    assert [r['config_key'].split('|')[0] for r in rows] == [
        'model=mobilenet_v1', 'model=mobilenet', 'model=mobilenet?']
    # The content key is the name recorded: ingesting the run again adds nothing.
    assert rows[0]['content_key'] == records.from_result(old)['content_key']
    # A run recording itself is today's network, whatever it recorded.
    assert records.from_result(unknown)['model'] == 'mobilenet'
    # Through the ingest command's reader, a results JSON.
    path = tmp_path / 'tf_cnn_benchmarks_mobilenet_20260105T000000.000000Z.json'
    path.write_text(json.dumps(old))
    summary = ingest.Summary()
    assert ingest.json_row(str(path), summary)['model'] == 'mobilenet_v1'
    assert summary.problems == []


def test_a_sweep_record_of_the_old_mobilenet_is_mobilenet_v1():
    for flops, meant in ((V1_FLOPS, 'mobilenet_v1'), (V2_FLOPS, 'mobilenet'),
                         (None, 'mobilenet?')):
        record = {'status': 'ok', 'params': dict(rh.PARAMS, model='mobilenet', image_size=224),
                  'images_per_sec': 40.0, 'environment': dict(rh.ENVIRONMENT),
                  'started_utc': '2026-01-05T00:00:00+00:00', 'wall_secs': 5.0,
                  'step_time_secs': {'min': 0.2, 'max': 0.2, 'count': 3},
                  'figures': {'model_flops_per_sec': None if flops is None
                              else 3 * flops * 40.0}}
        row = records.from_sweep_record(record, 'sweep x')
        assert (row['model'], row['config_key'].split('|')[0]) == (meant, 'model=' + meant)


def _write_old_rows(db, results):
    """Rows as the code of before the rename wrote them, in a schema-4 file."""
    with store.opened(db, schema_version=4) as conn:
        for row in (records.from_result(r) for r in results):
            names = list(records.ROW_FIELDS)
            conn.execute('INSERT INTO runs (recorded_utc, %s) VALUES (?, %s)' % (
                ', '.join(names), ', '.join('?' * len(names))),
                ['2026-01-01T00:00:00.000000Z'] + [row[n] for n in names])


def test_a_database_of_before_reads_its_mobilenet_runs_as_mobilenet_v1(tmp_path, capsys):
    db = str(tmp_path / 'old.sqlite')
    pinned = _mobilenet(510.0, None, 1)
    pinned['host_load'] = {'cores': 2, 'cpus_allowed': 2, 'representative': True,
                           'others_fraction': 0.0, 'outside_fraction': 0.0,
                           'steal_fraction': 0.0, 'reasons': []}
    # No FLOPs needed: a schema-4 file was written by the code of before only.
    _write_old_rows(db, [_mobilenet(500.0, None), pinned, rh.result(100.0)])
    with store.opened(db, read_only=True) as conn:  # migrated in memory, the file as it was
        assert {r['model'] for r in store.select_runs(conn)} == {'mobilenet_v1', 'trivial'}
    rh.fill(db, [_mobilenet(900.0, V2_FLOPS, 2)])  # migrates the file, then records today's
    with store.opened(db) as conn:
        assert conn.execute('PRAGMA user_version').fetchone()[0] == store.SCHEMA_VERSION == 5
        rows = store.select_runs(conn)
    keys = {r['config_key'] for r in rows}
    old_key = [k for k in keys if k.startswith('model=mobilenet_v1|')]
    assert len(old_key) == 2 and any(k.endswith('|cpus_allowed=2') for k in old_key)
    assert sorted(r['model'] for r in rows) == ['mobilenet', 'mobilenet_v1', 'mobilenet_v1',
                                                'trivial']
    assert {json.loads(r['params_json'])['model'] for r in rows  # as it ran
            if r['model'] == 'mobilenet_v1'} == {'mobilenet'}
    # The regression finder's series are its configurations: v1's runs are not v2's.
    status, out, _ = rh.results_command(capsys, 'list', '--results_db=' + db)
    assert status == 0 and '4 runs, 4 configurations' in out


def test_a_baseline_of_the_old_mobilenet_is_refused(tmp_path):
    path = tmp_path / 'baseline.json'
    stored = _mobilenet(500.0, V1_FLOPS, batch_size=32)
    stored['steps'] = [{'step': 1, 'images_per_sec': 500.0}]
    path.write_text(json.dumps(stored))
    here = params.make_params(model='mobilenet', batch_size=32, image_size=224, device='cpu')
    mine = dict(configuration.of_params(here._asdict()), data='synthetic', num_workers=1)
    with pytest.raises(params.ParamsError, match="model: 'mobilenet_v1' in the baseline, "
                       "'mobilenet' here"):
        baseline.check_config(baseline.load(str(path)), str(path), here, mine)
    stored['utilisation']['forward_flops_per_image'] = int(V2_FLOPS)  # today's: the same
    path.write_text(json.dumps(stored))
    assert baseline.check_config(baseline.load(str(path)), str(path), here, mine)
