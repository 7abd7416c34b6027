"""Layer builder for the CNN models: every layer honours the data format and the compute dtype.

Models describe their layers through one `ConvNetBuilder` (`cnn.conv(64, 3, 3)`, `cnn.mpool(2, 2)`,
`cnn.affine(4096)`); the builder keeps the running top layer and its channel count, names the
variables, creates them through `tf.compat.v1.get_variable` (so the variable manager's scopes and
custom getters decide where they live), and casts them to the compute dtype.

Variable naming rule: a layer's kernel is named ``weights``, a depthwise kernel
``depthwise_weights``, biases ``biases``; batch norm uses ``gamma``, ``beta``, ``moving_mean`` and
``moving_variance`` under a ``batchnorm`` scope. Weight decay, as in the original (its
``filter_l2_loss_vars``), covers every trainable variable outside batch norm: kernels, depthwise
kernels and biases, the variables this builder's `get_variable` creates.
"""

from __future__ import annotations

import contextlib
import copy
import re
import types
import zlib

import numpy as np
import tensorflow as tf

from . import fast_paths, memory_forms

tf1 = tf.compat.v1

# Collection of (checkpoint name, (height, width, channels)) of each dense kernel after a flatten.
FLATTENED_ROWS = 'tf_cnn_benchmarks_flattened_rows'

_TOWER_PREFIX = re.compile(r'^v\d*/')

#: The batch norm of a network that sets none of its own (`ConvNetBuilder.batch_norm_config`,
#: models/model.py CNNModel.batch_norm_config), and `batch_norm`'s defaults: the original
#: benchmark's (its builder sets no configuration, and its batch_norm's defaults are these):
#: moving averages with decay 0.999, epsilon 0.001, no trainable scale (gamma fixed at 1).
DEFAULT_BATCH_NORM = types.MappingProxyType({'decay': 0.999, 'epsilon': 0.001, 'scale': False})


def without_tower_prefix(name: str) -> str:
    """'v0/cg/conv0/weights' -> 'cg/conv0/weights': a variable's name without the variable
    manager's tower scope ('v/' or 'v<i>/'), the same whatever the mode and the towers."""
    return _TOWER_PREFIX.sub('', name)


def _seeded(initializer, scoped_name):
    """A copy of `initializer` whose op seed comes from the variable's name without the tower
    prefix, so initial values do not depend on how many ops the graph built before (towers,
    input pipeline) or on the variable manager: with the same --tf_random_seed, one tower, N
    towers and every mode start from identical weights."""
    if getattr(initializer, 'seed', 0) is not None:
        return initializer
    seeded = copy.copy(initializer)
    seeded.seed = zlib.crc32(without_tower_prefix(scoped_name).encode()) & 0x7fffffff
    return seeded
# Standard deviation of a unit normal truncated to [-2, 2].
_TRUNCATED_NORMAL_STDDEV = 0.87962566103423978

class ConvNetBuilder:
    """Builds a network layer by layer on top of an input tensor.

    Args:
      input_op: images, [batch, height, width, channels] for NHWC or [batch, channels, height,
        width] for NCHW, in `dtype`.
      input_nchan: number of input channels.
      phase_train: True builds the training graph (dropout on, batch norm uses batch statistics and
        updates its moving averages), False the inference graph.
      data_format: 'NHWC' or 'NCHW'.
      dtype: compute dtype of activations (tf.float32, tf.float16 or tf.bfloat16).
      variable_dtype: dtype the variables are stored in; cast to `dtype` when read.
      options: the fast_paths.BuildOptions of this network (default: none of them, today's
        graph); passed by the caller, never read from a global.

    Attributes:
      top_layer: the output tensor of the last layer added.
      top_size: number of channels (or features) of `top_layer`.
      update_ops: batch-norm moving-average update ops created so far (training only).
      batch_norm_config: {'decay', 'epsilon', 'scale'} of the batch norm after a convolution
        (`conv`, `depthwise_conv`, also when folded): DEFAULT_BATCH_NORM unless the model
        sets its own (models/model.py build_network).
      fold_batch_norm: inference only: a convolution followed by batch norm is built as one
        convolution with the normalisation folded into its kernel and a bias (`conv`); from
        `options`.
      float32_norm_and_pool: batch norm (and the activation after it) and pooling run in
        float32, cast from and back to `dtype`; from `options` when `dtype` is not float32.
      decay_tensors: the trainable variables read so far through `get_variable` (kernels,
        depthwise kernels, biases; never batch norm's), in variable_dtype: what weight decay
        penalises.
      choose: training only: fast_paths.Conv1x1 -> how to build that 1x1 convolution ('matmul',
        'filter_matmul' or None), memory_forms.Site -> how to build that ReLU ('xla',
        'float32' or None): `options.choose`; None: never.
    """

    def __init__(self, input_op, input_nchan, phase_train, data_format='NHWC', dtype=tf.float32,
                 variable_dtype=tf.float32, options: fast_paths.BuildOptions | None = None):
        if data_format not in ('NHWC', 'NCHW'):
            raise ValueError('data_format must be NHWC or NCHW. Received: %r' % data_format)
        self.top_layer = input_op
        self.top_size = input_nchan
        self.phase_train = phase_train
        self.data_format = data_format
        self.channel_axis = 3 if data_format == 'NHWC' else 1
        self.dtype = dtype
        self.variable_dtype = variable_dtype
        self.update_ops: list = []
        self.decay_tensors: list = []
        self.use_batch_norm = False
        options = options or fast_paths.BuildOptions()
        self._fold_once = options.fold_once
        self.fold_batch_norm = options.fold_batch_norm and not phase_train
        self.float32_norm_and_pool = options.float32_norm_and_pool and dtype != tf.float32
        self.choose = options.choose if phase_train else None
        self.batch_norm_config = dict(DEFAULT_BATCH_NORM)
        self.counts: dict[str, int] = {}
        self.aux_top_layer = None
        self.aux_top_size = 0
        self._flat = None  # (the flatten's output, its input's [height, width, channels])

    # --- Helpers.
    def _name(self, kind: str) -> str:
        index = self.counts.get(kind, 0)
        self.counts[kind] = index + 1
        return '%s%d' % (kind, index)

    def get_variable(self, name, shape, initializer, trainable=True):
        """Creates (or reuses) a variable in `variable_dtype` and returns it cast to `dtype`;
        a trainable one is added to `decay_tensors` (`read_variable`)."""
        return self.read_variable(name, shape, initializer, trainable)[1]

    def read_variable(self, name, shape, initializer, trainable=True):
        """Creates (or reuses) a variable in `variable_dtype`; returns (what the tower read,
        in `variable_dtype`; that read cast to `dtype`). A trainable variable's read is added
        to `decay_tensors`: weight decay covers every variable made here (batch norm's are
        made by `_batch_norm_variables`, outside it)."""
        initializer = _seeded(initializer, tf1.get_variable_scope().name + '/' + name)
        var = tf1.get_variable(name, shape, dtype=self.variable_dtype, initializer=initializer,
                               trainable=trainable)
        if trainable and isinstance(var, tf.Variable):
            # One read per step, shared by the layer and the weight-decay term: each read of
            # a variable on another device (parameter_server) is a copy.
            var = var.value()
        if trainable:
            # What the tower reads: the variable, or its staged copy (--staged_vars).
            self.decay_tensors.append(var)
        if self.variable_dtype != self.dtype:
            return var, tf.cast(var, self.dtype)
        return var, var

    def _strides(self, d_height, d_width):
        if self.data_format == 'NHWC':
            return [1, d_height, d_width, 1]
        return [1, 1, d_height, d_width]

    def _pad_spatial(self, x, pad_beg, pad_end):
        if self.data_format == 'NHWC':
            paddings = [[0, 0], [pad_beg, pad_end], [pad_beg, pad_end], [0, 0]]
        else:
            paddings = [[0, 0], [0, 0], [pad_beg, pad_end], [pad_beg, pad_end]]
        return tf.pad(x, paddings)

    @contextlib.contextmanager
    def switch_to_aux_top_layer(self):
        """Builds the following layers on the auxiliary head (Inception's aux logits)."""
        if self.aux_top_layer is None:
            raise RuntimeError('switch_to_aux_top_layer() called before an aux top layer was set')
        saved = (self.top_layer, self.top_size)
        self.top_layer, self.top_size = self.aux_top_layer, self.aux_top_size
        yield
        self.aux_top_layer, self.aux_top_size = self.top_layer, self.top_size
        self.top_layer, self.top_size = saved

    def _activate(self, x, activation):
        """`activation` of x; a training ReLU of a batch norm's output in the form the graph
        choices decide (memory_forms.relu)."""
        if activation == 'relu':
            if self.choose is not None and x.op.type == 'FusedBatchNormV3' and \
                    x.dtype == self.dtype:
                return memory_forms.relu(x, self._form_of('relu', x))
            return tf.nn.relu(x)
        if activation == 'relu6':
            return tf.nn.relu6(x)
        if activation == 'tanh':
            return tf.tanh(x)
        if activation in (None, 'linear'):
            return x
        raise ValueError('unknown activation %r' % activation)

    # --- Layers.
    def conv(self, num_out_channels, k_height, k_width, d_height=1, d_width=1, mode='SAME',
             input_layer=None, num_channels_in=None, use_batch_norm=None, stddev=None,
             activation='relu', bias=0.0, kernel_initializer=None):
        """Adds a 2-D convolution, then batch norm or a bias, then the activation.

        Args:
          num_out_channels: output channels.
          k_height, k_width: kernel size.
          d_height, d_width: strides.
          mode: 'SAME', 'VALID', or 'SAME_RESNET' (explicit symmetric padding of k-1 when the
            stride is > 1, as in the ResNet reference implementations).
          use_batch_norm: None follows `self.use_batch_norm`.
          stddev: truncated-normal stddev of the kernel; None uses variance scaling
            (fan-in, scale 1, He et al. 2015 without the factor 2).
          bias: initial bias (ignored when batch norm is used; None means no bias).

        Returns:
          The output tensor, also stored in `top_layer`.
        """
        x = self.top_layer if input_layer is None else input_layer
        c_in = self.top_size if num_channels_in is None else num_channels_in
        if use_batch_norm is None:
            use_batch_norm = self.use_batch_norm
        if kernel_initializer is None:
            kernel_initializer = (tf1.variance_scaling_initializer(distribution='truncated_normal')
                                  if stddev is None else
                                  tf1.truncated_normal_initializer(stddev=stddev))
        name = self._name('conv')
        with tf1.variable_scope(name):
            stored, kernel = self.read_variable(
                'weights', [k_height, k_width, c_in, num_out_channels], kernel_initializer)
            strides = self._strides(d_height, d_width)
            if mode == 'SAME_RESNET':
                if d_height == 1 and d_width == 1:
                    padding = 'SAME'
                else:
                    total = k_height - 1
                    x = self._pad_spatial(x, total // 2, total - total // 2)
                    padding = 'VALID'
            else:
                padding = mode
            if use_batch_norm and self.fold_batch_norm:
                # The stored kernel (not its cast): the folded one is rounded only once.
                y = self._conv_folded(x, stored, strides, padding, num_out_channels)
            else:
                y = self._conv2d(x, kernel, (k_height, k_width, d_height, d_width), padding)
            if use_batch_norm and not self.fold_batch_norm:
                y = self._normalise_and_activate(y, activation)
            else:
                if not use_batch_norm and bias is not None:
                    biases = self.get_variable('biases', [num_out_channels],
                                               tf1.constant_initializer(bias))
                    y = tf.nn.bias_add(y, biases, data_format=self.data_format)
                y = self._activate(y, activation)
        self.top_layer, self.top_size = y, num_out_channels
        return y

    def _conv2d(self, x, kernel, size, padding):
        """tf.nn.conv2d, or for a 1x1 kernel of stride 1 or 2 (size: k_height, k_width,
        d_height, d_width) one MatMul, or a convolution whose filter gradient is a MatMul,
        where the enclosing graph choices decide so (fast_paths.conv1x1_matmul,
        conv1x1_filter_matmul; the same variables)."""
        k_height, k_width, d_height, d_width = size
        strides = self._strides(d_height, d_width)
        if (self.choose is not None and k_height == k_width == 1 and d_height == d_width
                and d_height in (1, 2) and x.shape.is_fully_defined()):
            dims = [int(d) for d in x.shape]
            n, h, w, c_in = dims if self.data_format == 'NHWC' else (
                dims[0], dims[2], dims[3], dims[1])
            shape = fast_paths.Conv1x1(n, h, w, c_in, int(kernel.shape[3]), d_height,
                                       self.data_format, self.dtype.name)
            form = self.choose(shape)
            if form == 'matmul':
                return fast_paths.conv1x1_matmul(x, kernel, d_height, self.data_format)
            if form == 'filter_matmul' and not fast_paths.conv_gradient_overridden():
                return fast_paths.conv1x1_filter_matmul(x, kernel, strides, padding,
                                                        self.data_format)
        return tf.nn.conv2d(x, kernel, strides, padding, data_format=self.data_format)

    def _pool(self, kind, pool_fn, k_height, k_width, d_height, d_width, mode, input_layer,
              num_channels_in):
        x = self.top_layer if input_layer is None else input_layer
        if num_channels_in is not None:
            self.top_size = num_channels_in
        name = self._name(kind)
        dtype = x.dtype
        if self.float32_norm_and_pool:
            x = tf.cast(x, tf.float32)
        y = pool_fn(x, ksize=self._strides(k_height, k_width),
                    strides=self._strides(d_height, d_width), padding=mode,
                    data_format=self.data_format, name=name)
        if y.dtype != dtype:
            y = tf.cast(y, dtype)
        self.top_layer = y
        return y

    def mpool(self, k_height, k_width, d_height=2, d_width=2, mode='VALID', input_layer=None,
              num_channels_in=None):
        """Adds max pooling; returns the output tensor."""
        return self._pool('mpool', tf.nn.max_pool2d, k_height, k_width, d_height, d_width, mode,
                          input_layer, num_channels_in)

    def apool(self, k_height, k_width, d_height=2, d_width=2, mode='VALID', input_layer=None,
              num_channels_in=None):
        """Adds average pooling; returns the output tensor."""
        return self._pool('apool', tf.nn.avg_pool2d, k_height, k_width, d_height, d_width, mode,
                          input_layer, num_channels_in)

    def reshape(self, shape, input_layer=None):
        """Reshapes the top layer; the last dimension of `shape` becomes `top_size`."""
        x = self.top_layer if input_layer is None else input_layer
        self.top_layer = tf.reshape(x, shape)
        self.top_size = shape[-1]
        return self.top_layer

    def flatten(self):
        """Flattens [batch, ...] to [batch, features] in NHWC order (same weights for both
        layouts: an NCHW top layer is transposed first)."""
        x = self.top_layer
        if self.data_format == 'NCHW':
            x = tf.transpose(x, [0, 2, 3, 1])
        features = int(np.prod(x.shape[1:]))
        self._flat = (self.reshape([-1, features], input_layer=x), tuple(x.shape[1:].as_list()))
        return self._flat[0]

    def affine(self, num_out_channels, input_layer=None, num_channels_in=None, bias=0.0,
               stddev=None, activation='relu'):
        """Adds a fully connected layer: [batch, in] -> [batch, num_out_channels].

        The kernel is truncated-normal with stddev sqrt(1 / in) unless `stddev` is given.
        """
        x = self.top_layer if input_layer is None else input_layer
        c_in = self.top_size if num_channels_in is None else num_channels_in
        if stddev is None:
            stddev = np.sqrt(1.0 / c_in)
        name = self._name('affine')
        with tf1.variable_scope(name):
            kernel = self.get_variable('weights', [c_in, num_out_channels],
                                       tf1.truncated_normal_initializer(stddev=stddev))
            if self._flat is not None and x is self._flat[0]:
                tf1.add_to_collection(FLATTENED_ROWS, (without_tower_prefix(
                    tf1.get_variable_scope().name + '/weights'), self._flat[1]))
            y = fast_paths.dense_matmul(x, kernel)
            if bias is not None:
                biases = self.get_variable('biases', [num_out_channels],
                                           tf1.constant_initializer(bias))
                y = tf.nn.bias_add(y, biases)
            y = self._activate(y, activation)
        self.top_layer, self.top_size = y, num_out_channels
        return y

    def dropout(self, keep_prob=0.5, input_layer=None):
        """Adds dropout in training (identity at inference)."""
        x = self.top_layer if input_layer is None else input_layer
        self._name('dropout')
        if self.phase_train:
            x = tf.nn.dropout(x, rate=1.0 - keep_prob)
        self.top_layer = x
        return x

    def spatial_mean(self, keep_dims=False):
        """Averages over height and width: [batch, top_size] (or keeps 1x1 spatial dims)."""
        axes = [1, 2] if self.data_format == 'NHWC' else [2, 3]
        self.top_layer = tf.reduce_mean(self.top_layer, axes, keepdims=keep_dims)
        return self.top_layer

    def concat(self, layers, num_channels):
        """Concatenates `layers` along the channel axis."""
        self.top_layer = tf.concat(layers, self.channel_axis)
        self.top_size = num_channels
        return self.top_layer

    def lrn(self, depth_radius, bias, alpha, beta):
        """Local response normalisation across channels (Krizhevsky et al. 2012, section 3.3)."""
        x = self.top_layer
        self._name('lrn')
        if self.data_format == 'NCHW':
            x = tf.transpose(x, [0, 2, 3, 1])
        dtype = x.dtype
        y = tf.nn.local_response_normalization(tf.cast(x, tf.float32), depth_radius, bias, alpha,
                                               beta)
        y = tf.cast(y, dtype)
        if self.data_format == 'NCHW':
            y = tf.transpose(y, [0, 3, 1, 2])
        self.top_layer = y
        return y

    def _batch_norm_variables(self, channels, scale):
        """(gamma, beta, moving_mean, moving_variance) of one batch norm, float32 [channels]
        (gamma a constant 1 without `scale`), in the current variable scope."""
        beta = tf1.get_variable('beta', [channels], tf.float32, tf1.zeros_initializer())
        if scale:
            gamma = tf1.get_variable('gamma', [channels], tf.float32, tf1.ones_initializer())
        else:
            gamma = tf.ones([channels], tf.float32)
        moving_mean = tf1.get_variable('moving_mean', [channels], tf.float32,
                                       tf1.zeros_initializer(), trainable=False)
        moving_var = tf1.get_variable('moving_variance', [channels], tf.float32,
                                      tf1.ones_initializer(), trainable=False)
        return gamma, beta, moving_mean, moving_var

    def _conv_folded(self, x, kernel, strides, padding, channels):
        """conv2d then inference batch norm, as one convolution and a bias add
        (fast_paths.conv_folded), normalising as `batch_norm_config` says; the variables and
        their names are those of `batch_norm`: checkpoints are the same."""
        config = self.batch_norm_config
        with tf1.variable_scope(self._name('batchnorm')):
            norm = self._batch_norm_variables(channels, config['scale'])
        return fast_paths.conv_folded(x, kernel, norm, config['epsilon'], (strides, padding),
                                      self.data_format, self.dtype, self._fold_once)

    def _normalise_and_activate(self, y, activation):
        """batch_norm then the activation; both in float32 with `float32_norm_and_pool` (the
        activation inside, where Grappler fuses a ReLU into oneDNN's batch norm)."""
        if not self.float32_norm_and_pool or y.dtype == tf.float32:
            return self._activate(self.batch_norm(y, **self.batch_norm_config), activation)
        y32 = self._batch_norm(tf.cast(y, tf.float32), **self.batch_norm_config)
        return tf.cast(self._activate(y32, activation), y.dtype)

    def _form_of(self, kind, x):
        """The graph choices' form of the memory_forms site `kind` at activation `x`."""
        site = memory_forms.Site.of(kind, x, self.data_format)
        return self.choose(site) if site is not None else None

    def residual(self, shortcut, branch, activation='relu'):
        """shortcut + branch, then the activation: a post-activation residual unit's join
        (ResNet v1); a training ReLU in the form the graph choices decide
        (memory_forms.residual_relu). Sets and returns `top_layer`; `top_size` is the caller's.
        """
        if activation == 'relu' and self.choose is not None:
            form = self._form_of('residual', branch)
            self.top_layer = memory_forms.residual_relu(shortcut, branch, form)
        else:
            self.top_layer = self._activate(shortcut + branch, activation)
        return self.top_layer

    def batch_norm(self, input_layer=None, decay=DEFAULT_BATCH_NORM['decay'],
                   scale=DEFAULT_BATCH_NORM['scale'], epsilon=DEFAULT_BATCH_NORM['epsilon']):
        """Adds fused batch normalisation (Ioffe & Szegedy 2015) over the channel axis: the
        moving averages' `decay` (the update is moving -= (moving - batch) x (1 - decay)),
        `scale` (a trainable gamma, else 1), `epsilon` added to the variance.

        Training normalises with the batch statistics and appends moving-average update ops to
        `update_ops`; inference uses the moving averages. Statistics and parameters are float32
        whatever the compute dtype; the output has the input's dtype (computed in float32 with
        `float32_norm_and_pool`).
        """
        x = self.top_layer if input_layer is None else input_layer
        if self.float32_norm_and_pool and x.dtype != tf.float32:
            y = tf.cast(self._batch_norm(tf.cast(x, tf.float32), decay, scale, epsilon), x.dtype)
            self.top_layer = y
            return y
        return self._batch_norm(x, decay, scale, epsilon)

    def _batch_norm(self, x, decay, scale, epsilon):
        channels = int(x.shape[self.channel_axis])
        with tf1.variable_scope(self._name('batchnorm')):
            gamma, beta, moving_mean, moving_var = self._batch_norm_variables(channels, scale)
            if self.phase_train:
                y, mean, var = tf1.nn.fused_batch_norm(
                    x, gamma, beta, epsilon=epsilon, data_format=self.data_format,
                    is_training=True)
                self.update_ops.append(tf1.assign_sub(
                    moving_mean, (moving_mean - mean) * (1.0 - decay), use_locking=False))
                self.update_ops.append(tf1.assign_sub(
                    moving_var, (moving_var - var) * (1.0 - decay), use_locking=False))
            else:
                y, _, _ = tf1.nn.fused_batch_norm(
                    x, gamma, beta, mean=tf1.convert_to_tensor(moving_mean),
                    variance=tf1.convert_to_tensor(moving_var), epsilon=epsilon,
                    data_format=self.data_format, is_training=False)
        self.top_layer = y
        self.top_size = channels
        return y

    # --- Layers added for the model zoo (MobileNet, DenseNet, pre-activation ResNet, Inception).
    def activation(self, kind='relu', input_layer=None):
        """Applies an activation ('relu', 'relu6', 'tanh' or None) to the top layer.

        Pre-activation networks (ResNet v2, DenseNet) use it after a stand-alone `batch_norm`.
        """
        x = self.top_layer if input_layer is None else input_layer
        self.top_layer = self._activate(x, kind)
        return self.top_layer

    def depthwise_conv(self, k_height, k_width, d_height=1, d_width=1, mode='SAME',
                       depth_multiplier=1, input_layer=None, num_channels_in=None,
                       use_batch_norm=None, stddev=None, activation='relu', bias=0.0):
        """Adds a depthwise 2-D convolution (one k x k filter per input channel), then batch norm
        or a bias, then the activation (Howard et al. 2017, section 3.1).

        The kernel, [k_height, k_width, channels_in, depth_multiplier], is named
        ``depthwise_weights``; weight decay covers it as every kernel (the original's rule:
        every trainable variable outside batch norm).

        Args:
          k_height, k_width: kernel size; d_height, d_width: strides.
          mode: 'SAME', 'VALID' or 'SAME_RESNET' (explicit symmetric padding when strided).
          depth_multiplier: output channels per input channel.
          use_batch_norm: None follows `self.use_batch_norm`.
          stddev: truncated-normal stddev of the kernel; None uses variance scaling with scale 1
            over the true fan-in of a depthwise filter, k_height x k_width (the generic
            initializer would wrongly count channels_in as fan-in too).
          activation: 'relu', 'relu6', 'tanh' or None.
          bias: initial bias without batch norm (None means no bias).

        Returns:
          The output tensor, channels_in x depth_multiplier channels; also `top_layer`.
        """
        x = self.top_layer if input_layer is None else input_layer
        c_in = self.top_size if num_channels_in is None else num_channels_in
        if use_batch_norm is None:
            use_batch_norm = self.use_batch_norm
        c_out = c_in * depth_multiplier
        if stddev is None:
            # Each output sees k_height x k_width inputs; divide by the stddev of a unit normal
            # truncated at +-2 so the truncated draw keeps variance 1 / fan-in.
            initializer = tf1.truncated_normal_initializer(
                stddev=np.sqrt(1.0 / (k_height * k_width)) / _TRUNCATED_NORMAL_STDDEV)
        else:
            initializer = tf1.truncated_normal_initializer(stddev=stddev)
        with tf1.variable_scope(self._name('dwconv')):
            kernel = self.get_variable('depthwise_weights',
                                       [k_height, k_width, c_in, depth_multiplier], initializer)
            if mode == 'SAME_RESNET' and (d_height > 1 or d_width > 1):
                total = k_height - 1
                x = self._pad_spatial(x, total // 2, total - total // 2)
                padding = 'VALID'
            else:
                padding = 'SAME' if mode == 'SAME_RESNET' else mode
            y = tf.nn.depthwise_conv2d(x, kernel, self._strides(d_height, d_width), padding,
                                       data_format=self.data_format)
            if use_batch_norm:
                y = self._normalise_and_activate(y, activation)
            else:
                if bias is not None:
                    biases = self.get_variable('biases', [c_out], tf1.constant_initializer(bias))
                    y = tf.nn.bias_add(y, biases, data_format=self.data_format)
                y = self._activate(y, activation)
        self.top_layer, self.top_size = y, c_out
        return y

    def pad_channels(self, x, pad_beg, pad_end):
        """Zero-pads the channel axis of `x` (ResNet's parameter-free shortcut, option A)."""
        paddings = [[0, 0]] * 4
        paddings[self.channel_axis] = [pad_beg, pad_end]
        return tf.pad(x, paddings)

    def columns(self, name, cols, input_layer=None, in_size=None):
        """Adds parallel columns of layers and concatenates their outputs on channels.

        Like `inception_module`, but ``('share',)`` at position i of a column reuses the output
        of the previous column's layer at position i (so ``[('share',), ('share',), ('conv',
        ...)]`` branches off after the previous column's second layer, as Inception-v3's and v4's
        split 1x3 / 3x1 columns need). The module gets its own variable scope ``name<index>``.

        Args:
          name: scope name prefix of the module.
          cols: list of columns; each a list of layer tuples: ('conv', channels, kh, kw[, dh,
            dw[, mode]]), ('mpool', kh, kw[, dh, dw[, mode]]), ('apool', ...), ('share',).
          input_layer, in_size: input tensor and its channels (default: the top layer).

        Returns:
          The concatenated output, also `top_layer`; `top_size` is the sum of the columns'.
        """
        x = self.top_layer if input_layer is None else input_layer
        c_in = self.top_size if in_size is None else in_size
        scope = self._name(name)
        outputs, sizes, previous = [], [], []
        with tf1.variable_scope(scope):
            for column in cols:
                self.top_layer, self.top_size = x, c_in
                current = []
                for i, layer in enumerate(column):
                    kind, args = layer[0], layer[1:]
                    if kind == 'conv':
                        self.conv(*args)
                    elif kind == 'mpool':
                        self.mpool(*args)
                    elif kind == 'apool':
                        self.apool(*args)
                    elif kind == 'share':
                        self.top_layer, self.top_size = previous[i]
                    else:
                        raise ValueError('unknown layer kind %r in %s' % (kind, scope))
                    current.append((self.top_layer, self.top_size))
                outputs.append(self.top_layer)
                sizes.append(self.top_size)
                previous = current
        return self.concat(outputs, sum(sizes))

    @contextlib.contextmanager
    def variable_initializers(self, overrides):
        """Within the block, variables whose name ends in a key of `overrides` use that
        initializer instead (e.g. ``{'/gamma': zeros}`` for the zero-initialised last batch norm
        of a residual unit, Goyal et al. 2017, section 5.1). Names and op names are unchanged."""

        def getter(getter, name, *args, **kwargs):  # TF passes these two by keyword.
            for suffix, initializer in overrides.items():
                if name.endswith(suffix):
                    kwargs['initializer'] = initializer
            return getter(name, *args, **kwargs)

        with tf1.variable_scope(tf1.get_variable_scope(), custom_getter=getter,
                                auxiliary_name_scope=False):
            yield
