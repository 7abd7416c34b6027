"""Learning-rate schedule values at given steps, for each schedule flag."""

import pytest
import tensorflow as tf

from tf_cnn_benchmarks import learning_rate
from tf_cnn_benchmarks.models import model_config
from tf_cnn_benchmarks.params import make_params

tf1 = tf.compat.v1


def _rates(steps, *, examples_per_epoch=1000, global_batch_size=100, **kwargs):
    """The learning rate at each of `steps` (10 steps per epoch by default)."""
    graph = tf.Graph()
    with graph.as_default():
        step = tf1.placeholder(tf.int64, [])
        lr = learning_rate.get_learning_rate(
            make_params(**kwargs), step, model=model_config.get_model('trivial'),
            examples_per_epoch=examples_per_epoch, global_batch_size=global_batch_size)
        with tf1.Session() as sess:
            return [float(sess.run(lr, {step: s})) for s in steps]


def test_piecewise_schedule_switches_at_epoch_boundaries():
    rates = _rates([0, 9, 10, 29, 30, 100],
                   piecewise_learning_rate_schedule='0.1;1;0.01;3;0.001')
    assert rates == pytest.approx([0.1, 0.1, 0.1, 0.01, 0.01, 0.001])


def test_exponential_decay_is_a_staircase():
    rates = _rates([0, 19, 20, 45], init_learning_rate=0.4, num_epochs_per_decay=2,
                   learning_rate_decay_factor=0.5)
    assert rates == pytest.approx([0.4, 0.4, 0.2, 0.1])


def test_warmup_ramps_linearly_then_minimum_bounds():
    rates = _rates([0, 5, 10, 20], init_learning_rate=0.2, num_learning_rate_warmup_epochs=1)
    assert rates == pytest.approx([0.0, 0.1, 0.2, 0.2])
    floor = _rates([0, 20], init_learning_rate=0.4, num_epochs_per_decay=1,
                   learning_rate_decay_factor=0.1, minimum_learning_rate=0.01)
    assert floor == pytest.approx([0.4, 0.01])


def test_model_default_scales_with_global_batch():
    trivial = model_config.get_model('trivial')
    rate = _rates([0], global_batch_size=2 * trivial.default_batch_size)[0]
    assert rate == pytest.approx(2 * trivial.default_learning_rate)


@pytest.mark.parametrize('name, slot', [('sgd', None), ('momentum', 'momentum'),
                                        ('rmsprop', 'rms'), ('adam', 'm')])
def test_optimizer_factory(name, slot):
    graph = tf.Graph()
    with graph.as_default():
        opt = learning_rate.make_optimizer(make_params(optimizer=name), 0.1)
        var = tf1.get_variable('w', [2], initializer=tf1.ones_initializer())
        opt.minimize(tf.reduce_sum(var * var), var_list=[var])
        assert (slot in opt.get_slot_names()) if slot else opt.get_slot_names() == []


def test_single_rate_schedule_is_a_constant():
    assert _rates([0, 50], piecewise_learning_rate_schedule='0.3') == pytest.approx([0.3, 0.3])
