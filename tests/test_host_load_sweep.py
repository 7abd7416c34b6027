"""The host load in sweeps (metrics/host_load.py through tools/sweep/): records keep it, the
report lists it per run and marks busy runs, compare shows each side's, the gate leaves out
runs whose host load was not measured."""

from __future__ import annotations

from tf_cnn_benchmarks.metrics import host_load


def _sweep_record(batch, rate, repeat, others, steal=0.0):
    from tf_cnn_benchmarks.tools.sweep import results as sweep_results
    config = {'model': 'trivial', 'batch_size': batch, 'num_gpus': 1, 'precision': 'fp32',
              'variable_update': 'parameter_server', 'repeat': repeat}
    load = None
    if others is not None:
        load = host_load.measure(host_load.Sample(0.0, 3.1, 0, 0, 0),
                                 host_load.Sample(10.0, 3.42, int(others * 2000),
                                                  int(steal * 2000), 0), 2, 2, 100)
    from tf_cnn_benchmarks.tools.sweep import host_load as sweep_host_load
    return {'key': sweep_results.config_key(config), 'config': config, 'status': 'ok',
            'images_per_sec': rate, 'extra_flags': [], 'exit_status': 0, 'error': None,
            'host_load': sweep_host_load.record_host_load({'host_load': load}) if load
            else None}


def test_sweep_report_lists_each_runs_host_load_and_marks_busy_runs(tmp_path):
    from tf_cnn_benchmarks.tools.sweep import host_load as sweep_host_load
    from tf_cnn_benchmarks.tools.sweep import report as sweep_report
    assert sweep_host_load.record_host_load({'images_per_sec': 1.0}) is None
    records = [_sweep_record(8, 100.0, 0, 0.05), _sweep_record(8, 30.0, 1, 0.71),
               _sweep_record(16, 90.0, 0, 0.0, steal=0.075), _sweep_record(16, 95.0, 1, None)]
    assert set(records[0]['host_load']) == set(sweep_host_load.FIELDS)
    text = sweep_report.write_report(str(tmp_path), records)
    section = text[text.index('## Host load'):]
    assert ('| run | images/sec | others\' CPU | load average | steal | host |\n'
            '| --- | ---: | ---: | ---: | ---: | --- |\n'
            '| trivial bs=8 gpus=1 fp32 parameter_server repeat 1 | 100.0 | 0.10 of 2 (5%) '
            '| 3.1 → 3.4 | 0.0% | quiet |\n'
            '| trivial bs=8 gpus=1 fp32 parameter_server repeat 2 | 30.0 | 1.42 of 2 (71%) '
            '| 3.1 → 3.4 | 0.0% | busy |\n'
            '| trivial bs=16 gpus=1 fp32 parameter_server repeat 1 | 90.0 | 0.00 of 2 (0%) '
            '| 3.1 → 3.4 | 7.5% | busy |\n'
            '| trivial bs=16 gpus=1 fp32 parameter_server repeat 2 | 95.0 | - | - | - | - |\n'
            '\n2 of 4 runs on a busy host.\n') in section
    assert 'busy: others above 25% of the run\'s cores or steal above 5%' in section
    # A sweep recorded before runs measured their host load has no such section.
    old = [dict(r, host_load=None) for r in records]
    assert '## Host load' not in sweep_report.write_report(str(tmp_path), old)


def test_sweep_report_says_when_no_runs_host_load_could_be_measured(tmp_path):
    # The README's quick sweep: every run's timed part too short to measure the load; the
    # report had no Host load section at all.
    from tf_cnn_benchmarks.tools.sweep import host_load as sweep_host_load
    from tf_cnn_benchmarks.tools.sweep import report as sweep_report
    short = host_load.measure(host_load.Sample(0.0, 3.1, 0, 0, 0),
                              host_load.Sample(0.004, 3.2, 0, 0, 0), 2, 2, 100)
    unmeasured = sweep_host_load.record_host_load({'host_load': short})
    records = [dict(_sweep_record(8, r, i, None), host_load=unmeasured)
               for i, r in enumerate([100.0, 101.0])]
    text = sweep_report.write_report(str(tmp_path), records)
    assert ('## Host load\n\nNot measured for any of the 2 successful runs (%s): whether the '
            'host was quiet during them is not known. Lengthen their timed part (a larger '
            '--num_batches in the sweep\'s flags) until it is measured.\n' % short['error']
            in text)
    # Beside measured runs, such a run's row says 'not measured', and the count line why.
    text = sweep_report.write_report(str(tmp_path), records + [_sweep_record(16, 90.0, 0, 0.05)])
    section = text[text.index('## Host load'):]
    assert ('| trivial bs=8 gpus=1 fp32 parameter_server repeat 2 | 101.0 | - | - | - | not '
            'measured |') in section
    assert '\n0 of 3 runs on a busy host. Not measured for 2 (%s).\n' % short['error'] in section


def test_sweep_compare_shows_each_sides_host_load_and_names_a_busy_side():
    from tf_cnn_benchmarks.tools.sweep import compare as sweep_compare
    a = [_sweep_record(8, r, i, 0.05) for i, r in enumerate([100.0, 101.0, 99.0])]
    b = [_sweep_record(8, r, i, o) for i, (r, o) in enumerate(
        [(50.0, 0.71), (52.0, 0.6), (51.0, 0.1)])]
    # With --include_unclean_runs the busy runs count (issue 39.4 leaves them out by default).
    text, status, _ = sweep_compare.format_comparison('a', 'b', a, b, include_unclean=True)
    assert status == 0
    lines = text.splitlines()
    head = [line for line in lines if line.startswith('| model')][0]
    assert head.endswith('| verdict | A host load | B host load | notes |')
    row = [line for line in lines if line.startswith('| trivial')][0]
    assert row.endswith('| 0.510 | 0.05 | slower | 5% | 71% (2/3 busy) | busy host in B |')
    assert ('B: kept 2 unclean runs of 3 (--include_unclean_runs): 2 shared the host (others '
            'used > 25% of the cores)') in lines
    # By default they are left out: B keeps one run, too few for a verdict.
    text, _, _ = sweep_compare.format_comparison('a', 'b', a, b)
    row = [line for line in text.splitlines() if line.startswith('| trivial')][0]
    assert row.endswith('| 51.0 (1 run) | 0.510 | - | ? | 5% | 71% (2/3 busy) | n=3+1: the '
                        'Mann-Whitney test cannot reach p<=0.05 with fewer than 3 repeats per '
                        'side; B: 2 of 3 runs left out (busy) |')
    assert ('B: left out 2 of 3 runs: 2 shared the host (others used > 25% of the cores); '
            '--include_unclean_runs keeps them') in text.splitlines()
    assert 'host load: the highest share of a run\'s cores' in text
    # Without host loads on either side, the table is what it was.
    plain, _, _ = sweep_compare.format_comparison(
        'a', 'b', [dict(r, host_load=None) for r in a], [dict(r, host_load=None) for r in b])
    assert '| verdict | notes |' in plain and 'host load' not in plain


def test_sweep_gate_leaves_out_runs_whose_host_load_was_not_measured():
    """Runs whose timed part was too short to measure the host's load (issue: a CI gate on
    --model=trivial passed on a busy host) are not clean: the gate leaves them out and says
    why and how to get the load measured (metrics/clean_runs.py); kept with
    --include_unclean_runs, a passed gate does not claim a quiet host."""
    from tf_cnn_benchmarks.tools.sweep import compare as sweep_compare
    short = host_load.measure(host_load.Sample(0.0, 3.1, 0, 0, 0),
                              host_load.Sample(0.004, 3.2, 0, 0, 0), 2, 2, 100)
    assert short['others_fraction'] is None and 'too short' in short['error']

    def unmeasured(record):
        from tf_cnn_benchmarks.tools.sweep import host_load as sweep_host_load
        return dict(record, host_load=sweep_host_load.record_host_load({'host_load': short}))

    a = [_sweep_record(8, r, i, 0.05) for i, r in enumerate([100.0, 101.0, 99.0])]
    b = [unmeasured(_sweep_record(8, r, i, None)) for i, r in enumerate([99.0, 100.5, 99.5])]
    text, status, _ = sweep_compare.format_comparison('a', 'b', a, b, fail_pct=5)
    lines = text.splitlines()
    why = ('3 had no measured host load (run too short: a longer timed part (a larger '
           '--num_batches) measures it)')
    assert status == 3 and 'B: left out 3 of 3 runs: %s; --include_unclean_runs keeps them' % why \
        in lines
    assert lines[-1].startswith('gate: NOT JUDGED: nothing was compared: every one of the 3 '
                                'matching runs of B (%s) was left out as unclean' % why)
    text, status, _ = sweep_compare.format_comparison('a', 'b', a, b, fail_pct=5,
                                                      include_unclean=True)
    assert status == 0
    lines = text.splitlines()
    note = [line for line in lines if line.startswith('host load: not measured')]
    assert note == ['host load: not measured for 3 of 6 runs compared (%s): whether the host '
                    'was quiet during them is not known; lengthen their timed part (a larger '
                    '--num_batches in the sweep\'s flags) until the load is measured'
                    % short['error']]
    assert lines[-1] == ('gate: passed: no configuration of 1 slower than A by more than 5% '
                         'beyond the noise; the host load of 3 runs was not measured: a quiet '
                         'host is not established')
    # Measured on both sides: no such line, and the gate's line is what it was.
    text, _, _ = sweep_compare.format_comparison('a', 'b', a, a, fail_pct=5)
    assert 'not measured' not in text
    assert text.splitlines()[-1].endswith('beyond the noise')
