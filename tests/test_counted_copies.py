"""The plan's 'Counted copies' lines (preflight/scaling_plan._counted_words): the count beside the
traffic pattern, why there is no pattern where there is none, and a remark where they differ."""

from __future__ import annotations

from tf_cnn_benchmarks.preflight import scaling_plan
from tf_cnn_benchmarks.speed_model import traffic_patterns as patterns

MIB = 1 << 20
SHAPE = '1 host x 2 GPUs'


def test_a_count_that_differs_from_its_pattern_says_so():
    # pscpu/pscpu was counted through the host while its pattern said GPU->GPU, without a word.
    topo = patterns.Topology('replicated', 2, all_reduce='psgpu')
    lines = scaling_plan._counted_words(
        SHAPE, topo, {'GPU->host': 195 * MIB, 'host->GPU': 195 * MIB}, {'GPU->GPU': 195 * MIB})
    assert lines[0] == ('Counted copies:   1 host x 2 GPUs (replicated, dry run): GPU->GPU 0 B, '
                        'GPU->host 195.0 MiB, host->GPU 195.0 MiB per step')
    assert lines[1].strip() == ('the pattern for that shape: GPU->GPU 195.0 MiB, GPU->host 0 B, '
                                'host->GPU 0 B')
    assert lines[2].strip() == ("the count and the pattern differ (GPU->GPU, GPU->host, "
                                "host->GPU): the plan's bytes for this configuration are not the "
                                "graph's")


def test_a_count_within_the_agreement_of_its_pattern_has_no_remark():
    topo = patterns.Topology('parameter_server', 2)
    lines = scaling_plan._counted_words(
        SHAPE, topo, {'host->GPU': 195.0 * MIB}, {'host->GPU': 195.4 * MIB})
    assert len(lines) == 2 and lines[1].strip() == 'the pattern for that shape: host->GPU 195.4 MiB'


def test_no_pattern_says_why_in_words_true_of_that_configuration():
    # It said 'the pattern's transfers happen inside NCCL or collective ops, or a two-level
    # spec' of a forward-only parameter_server step, which has none of them.
    four = patterns.Topology('replicated', 4, all_reduce='pscpu/pscpu')
    assert patterns.expected_counts(four, MIB, MIB) is None
    lines = scaling_plan._counted_words('1 host x 4 GPUs', four, {}, None)
    assert lines[1].strip() == ('(no pattern to compare it with: the two-level '
                                '--all_reduce_spec=pscpu/pscpu over 4 GPUs per host is not '
                                'modelled copy by copy)')
    mixed = patterns.Topology('replicated', 2, all_reduce='pscpu:32k:xring')
    assert patterns.expected_counts(mixed, MIB, MIB) is None
    assert 'sends tensors of different sizes different ways' in patterns.uncounted_reason(mixed)
    forward = patterns.Topology('parameter_server', 2, forward_only=True)
    assert patterns.expected_counts(forward, MIB, MIB) == {'host->GPU': 2 * MIB}
