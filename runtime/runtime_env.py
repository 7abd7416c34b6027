"""Environment defaults that TensorFlow reads once, when it loads: import before TensorFlow.

* TF_ENABLE_ONEDNN_OPTS=1: oneDNN's CPU kernels. They give the CPU NCHW convolutions and pooling
  (the stock kernels are NHWC only) and train resnet50 about 1.5x faster on an AVX2-only CPU
  (docs/performance-notes.md, "Measurements once in the code"; TensorFlow turns them on by
  default only on CPUs with AVX512-VNNI/BF16/AMX).
* TF_CPU_ALLOCATOR_USE_BFC=true: TensorFlow's best-fit-with-coalescing allocator for CPU memory,
  which keeps freed buffers for reuse. The default allocator hands large buffers back to the
  operating system, so every step page-faults its big tensors in again: concatenations of
  gradient packs run several times slower, and training steps up to a seventh slower
  (bench/bench_core.py; docs/performance-notes.md, "Measurements once in the code").
* TF_CPP_MIN_LOG_LEVEL=2: TensorFlow's C++ log shows errors only (the command sets 3).

A value the user already set is kept. Where the home folder does not exist, or the folders
TensorFlow's Keras and matplotlib write their settings into under it cannot be written (a
read-only home), `apply()` also points KERAS_HOME and MPLCONFIGDIR at a temporary folder of
the process (`spare_home`: the libraries would make the home folder as they load, or warn on
stderr that they cannot; the plots' modules call it before matplotlib loads). Call `apply()`
before the first TensorFlow import, or `import_tensorflow()`, which also keeps TensorFlow's
start-up lines off stderr: TensorFlow 2.21 writes "oneDNN custom operations are on", "Could
not find cuda drivers" and absl's "All log messages before absl::InitializeLog() ..." straight
to file descriptor 2 while it loads, whatever TF_CPP_MIN_LOG_LEVEL says (no environment
variable turns them off), and its first device probe an ERROR line "failed call to cuInit"
on hosts without a GPU driver.
`import_tensorflow` leaves out the Keras TensorFlow loads with it (`keras_deferred`), and
`exit_process` ends a command that loaded TensorFlow without the interpreter's last garbage
collections. `import_tensorflow` (and session_config.num_visible_gpus, with `quiet_stderr`) capture
descriptor 2 meanwhile and write back every line that TF_CPP_MIN_LOG_LEVEL lets through (1
drops INFO lines, 2 also WARNING, 3 also ERROR; `shown_lines`); anything else (a Python
warning, an import error) is written back unchanged.
"""

import contextlib
import gc
import os
import re
import sys

from ..hardware import user_dirs

DEFAULTS = {'TF_ENABLE_ONEDNN_OPTS': '1', 'TF_CPU_ALLOCATOR_USE_BFC': 'true',
            'TF_CPP_MIN_LOG_LEVEL': '2'}

# absl/TensorFlow C++ log lines: 'I0000 00:00:1796093307.742795    8660 port.cc:153] ...'.
_LOG_LINE = re.compile(r'^([IWEF])\d{4} \d\d:\d\d:[\d.]+\s+\d+ [^ \]]+:\d+\] ')
_ABSL_PREAMBLE = 'WARNING: All log messages before absl::InitializeLog() is called'
_SEVERITY = {'I': 0, 'W': 1, 'E': 2, 'F': 3}
_CUDA_PROBE = 'failed call to cuInit'


def apply() -> None:
    """Sets every variable of DEFAULTS that is not set yet, and `spare_home`'s
    (idempotent)."""
    for name, value in DEFAULTS.items():
        os.environ.setdefault(name, value)
    spare_home()


#: Settings folders that libraries this program loads make under `~` unless told otherwise:
#: TensorFlow's own Keras writes ~/.keras/keras.json while TensorFlow loads, matplotlib its
#: settings and font cache under ~/.config/matplotlib (and ~/.cache/matplotlib).
HOME_WRITERS = ('KERAS_HOME', 'MPLCONFIGDIR')
_SPARED = False


def settings_folders(environ=None) -> dict[str, list[str]]:
    """{HOME_WRITERS name: the folders its library writes when the variable is unset}:
    Keras ~/.keras; matplotlib its config and cache folders ($XDG_CONFIG_HOME/matplotlib, else
    ~/.config/matplotlib; $XDG_CACHE_HOME/matplotlib, else ~/.cache/matplotlib)."""
    return {'KERAS_HOME': [os.path.join(user_dirs.home(environ), '.keras')],
            'MPLCONFIGDIR': [
                os.path.join(user_dirs.base_folder('XDG_CONFIG_HOME', ('.config',), environ),
                             'matplotlib'),
                os.path.join(user_dirs.base_folder('XDG_CACHE_HOME', ('.cache',), environ),
                             'matplotlib')]}


def _unwritable(folder: str) -> bool:
    """Whether `folder` cannot be written, or made: its nearest existing folder is no folder,
    or this user cannot write it (a read-only file system stops root too: access(2) says
    EROFS)."""
    while folder and not os.path.lexists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return not (os.path.isdir(folder) and os.access(folder, os.W_OK))


def spare_home() -> str | None:
    """Where the home folder does not exist (user_dirs.py), or HOME is empty, points each of
    HOME_WRITERS that is not set at one temporary folder of this process, removed when it
    exits, so that loading TensorFlow or matplotlib does not make the home folder (or
    /.keras); where it exists, so points each whose folders (`settings_folders`) cannot be
    written or made (a read-only home: matplotlib printed 'mkdir -p failed ...' and
    'Matplotlib created a temporary cache directory ...' on stderr of every command that
    plots); nothing where they can.

    Returns:
      The temporary folder, or None (nothing to spare, or this was done already).
    """
    global _SPARED
    unset = [name for name in HOME_WRITERS if not os.environ.get(name)]
    if _SPARED or not unset:
        return None
    # An empty HOME: the libraries read `~` as the root folder (os.path.expanduser), not as
    # user_dirs.home() does, and would make /.keras: spared too.
    if not user_dirs.absent_home(user_dirs.home()) and os.environ.get('HOME') != '':
        places = settings_folders()
        unset = [name for name in unset if any(_unwritable(f) for f in places[name])]
        if not unset:
            return None
    import atexit
    import shutil
    import tempfile
    folder = tempfile.mkdtemp(prefix='tf_cnn_benchmarks-settings-')
    atexit.register(shutil.rmtree, folder, True)
    _SPARED = True
    for name in unset:  # a child process inherits them (and keeps its parent's folder)
        os.environ[name] = folder
    return folder


def min_log_level() -> int:
    """TF_CPP_MIN_LOG_LEVEL as an int (0 when unset or not a number)."""
    value = os.environ.get('TF_CPP_MIN_LOG_LEVEL', '0').strip()
    return int(value) if value.isdigit() else 0


def shown_lines(text: str, level: int) -> str:
    """The lines of TensorFlow's import-time stderr `text` that log level `level` shows.

    C++ log lines below `level` (0 INFO, 1 WARNING, 2 ERROR, 3 FATAL) are dropped, and with
    any level >= 1 also absl's preamble line and the CUDA driver probe's "failed call to
    cuInit" (an ERROR line on every host without a GPU driver, where running on the CPU is
    what is meant); every other line is kept, in order.
    """
    kept = []
    for line in text.splitlines(keepends=True):
        match = _LOG_LINE.match(line)
        if match and (_SEVERITY[match.group(1)] < level or (level and _CUDA_PROBE in line)):
            continue
        if level >= 1 and line.startswith(_ABSL_PREAMBLE):
            continue
        kept.append(line)
    return ''.join(kept)


def import_tensorflow():
    """Applies DEFAULTS and imports TensorFlow without its start-up chatter (module docstring).

    Returns:
      The tensorflow module (the one already loaded, if any: then nothing is captured).

    Raises:
      ImportError: TensorFlow is not installed (its own message).
    """
    if 'tensorflow' in sys.modules:
        return sys.modules['tensorflow']
    apply()
    with quiet_stderr(), keras_deferred():
        import tensorflow
    return tensorflow


@contextlib.contextmanager
def keras_deferred():
    """Inside the block, `import keras` fails (unless Keras is loaded already); afterwards it
    works again.

    TensorFlow 2.21 imports Keras 3 while it loads ("an eager load ... for the registration of
    optimizers in the SavedModel registry"), in a `try` that passes over an ImportError. This
    project builds its graphs with tf.compat.v1 and never uses Keras, whose import (with
    scikit-learn's, when that is installed) is about a third of the CPU time a command spends
    loading TensorFlow (docs/performance-notes.md, "Measurements once in the code").
    `tf.keras` and `import keras` still load it on first use.
    """
    if 'keras' in sys.modules:
        yield
        return
    sys.modules['keras'] = None  # an import of keras or a submodule raises ModuleNotFoundError
    try:
        yield
    finally:
        if 'keras' in sys.modules and sys.modules['keras'] is None:
            del sys.modules['keras']


def exit_process(status) -> None:
    """Ends the process with `status` (sys.exit), leaving out the garbage collections the
    interpreter runs while it shuts down: with TensorFlow loaded (hundreds of thousands of
    objects) they take seconds after the work was done, which the serving tasks of a cluster
    then wait for (docs/performance-notes.md, "Measurements once in the code"). gc.freeze() moves
    every object out of their reach; atexit handlers still run, modules are still torn down
    and open files flushed (only reference cycles are left to the end of the process).

    Raises:
      SystemExit: always, with `status`.
    """
    gc.freeze()
    sys.exit(status)


@contextlib.contextmanager
def quiet_stderr():
    """Inside the block, file descriptor 2 goes to a temporary file; at its end the lines that
    TF_CPP_MIN_LOG_LEVEL shows (`shown_lines`) are written to stderr. For TensorFlow's import
    and its first device probe (session_config.num_visible_gpus). Does nothing when
    TF_CPP_MIN_LOG_LEVEL is 0."""
    level = min_log_level()
    if level < 1:
        yield
        return
    from .. import cnn_util  # numpy: loaded only when TensorFlow is about to be
    text = ''
    try:
        with cnn_util.captured_fd_stderr() as captured:
            try:
                yield
            finally:
                text = captured()
    finally:
        rest = shown_lines(text, level)
        if rest:
            sys.stderr.write(rest)
            sys.stderr.flush()


def op_determinism() -> bool:
    """Whether TensorFlow's op determinism is asked (TF_DETERMINISTIC_OPS=1, or
    tf.config.experimental.enable_op_determinism() in a library caller): a training run's
    tf.data preprocessing then takes one batch at a time, so that its random draws repeat
    (preprocessing.py; docs/real-data.md, What repeats: it costs up to 40% of the pipeline's
    images/sec with --distort_color on 2 cores), and TensorFlow keeps every tf.data order,
    --datasets_sloppy_parallel_interleave's too. Reads TensorFlow's state when it is loaded,
    else the variable."""
    if 'tensorflow' in sys.modules:
        try:
            from tensorflow.python.framework import config as tf_config
            return bool(tf_config.is_op_determinism_enabled())
        except (ImportError, AttributeError):  # a TensorFlow without it: its variable
            pass
    return os.environ.get('TF_DETERMINISTIC_OPS', '').lower() in ('1', 'true')
