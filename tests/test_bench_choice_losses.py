"""bench/bench_choice_losses.py: bfloat16 ulps of a loss and the per-choice comparison."""

import checkout

losses = checkout.load_bench('bench_choice_losses')


def test_one_ulp_is_bfloat16s_at_the_loss():
    assert losses.ulp(6.749) == 2.0 ** -5  # [4, 8): 8 significant bits
    assert losses.ulp(1.0) == 2.0 ** -7 and losses.ulp(0.99) == 2.0 ** -8


def test_compare_counts_steps_within_one_ulp():
    base = [6.75, 6.5, 3.0]
    row = losses.compare(base, [6.75, 6.5 + 2 * 2.0 ** -5, 3.0 + 2.0 ** -7])
    assert row == {'first_ulps': 0.0, 'max_ulps': 2.0, 'within_one_ulp': 2}
