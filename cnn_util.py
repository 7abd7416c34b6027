"""Small shared helpers: the error types, log output, image-rate statistics, and the rewrite of
a generated table inside a module (`update_generated`, and a generator's --check and --write
said in one line: `check_or_write_table`), and a step's time as the output's lines give it
(`format_step_secs`)."""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
import shlex
import sys
import tempfile

import numpy as np


def shown_name(text: str) -> str:
    """`text` (a path, or a message naming one) as a message shows it: each byte a name could
    not decode as a '\\xNN' escape (the bytes the user typed: '/tmp/n\\xc3\\xb6' for
    'nö' under an ASCII locale without UTF-8 mode, 'td\\xff' for a name that is not UTF-8),
    never Python's surrogate escapes ('\\udcc3\\udcb6', PEP 383), which a terminal shows
    as noise. Other text, non-ASCII included, stays as it is, so applying it twice changes
    nothing."""
    return _SURROGATE.sub(lambda m: '\\x%02x' % (ord(m.group()) - 0xdc00)
                          if 0xdc80 <= ord(m.group()) <= 0xdcff
                          else '\\u%04x' % ord(m.group()), text)


#: A lone surrogate: an undecodable byte's escape (U+DC80..U+DCFF) or any other.
_SURROGATE = re.compile('[\ud800-\udfff]')


def shell_arg(arg: str) -> str:
    """`arg` as a shell reads it back, for a command a message suggests: '--label=a b' ->
    "--label='a b'" (the value quoted, as `tf_cnn_results show` prints flags), an assignment
    'TF_CNN_RESULTS_DB=a b' -> "TF_CNN_RESULTS_DB='a b'", any other word a shell would split
    or expand quoted ('a b' -> "'a b'"); a word that needs no quotes is returned as it is."""
    name, has_value, value = arg.partition('=')
    if has_value and (arg.startswith('-') or re.fullmatch(r'[A-Z_][A-Z0-9_]*', name)):
        return '%s=%s' % (name, shlex.quote(value))
    return shlex.quote(arg)


class ShownMessage:
    """A mixin for error classes: a message argument is kept as `shown_name` shows it, so
    that a path's undecodable bytes read as '\\xff' in the error line, never '\\udcff'."""

    def __init__(self, *args):
        super().__init__(*(shown_name(a) if isinstance(a, str) else a for a in args))


class BenchmarkError(ShownMessage, Exception):
    """A runtime problem the user can fix (missing data, unreachable peer, bad checkpoint).

    The entry script prints it as one line `error: <message>` and exits with status 1 (a
    path's undecodable bytes shown as `shown_name` shows them).
    """


class DataError(BenchmarkError):
    """The input data is missing, empty, corrupt or inconsistent with the model."""


class ClusterError(BenchmarkError):
    """A peer task of a cluster cannot be reached, died, or did not answer in time."""


class StopRequested(Exception):
    """A step ended because the run was told to stop (a cluster's chief stopped its run and
    marked the stop: cluster/coordination.py); not an error. The timed loop ends as when a hook's
    `should_stop` says stop (lifecycle/training_loop.py), without counting the step.

    Attributes:
      reason: what the chief did, for the stop line: 'was interrupted (SIGINT)'.
    """

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# tf.data's words before the error of a function it maps (one line, no spaces in its names).
_TF_DATA_PREFIX = re.compile(r'^Error in user-defined function passed to \S+ transformation '
                             r'with iterator: \S+: ')


def error_summary(error: BaseException) -> str:
    """The informative line of an error, for a one-line message.

    TensorFlow's run-time errors (tf.errors.OpError) carry a multi-line `message`: 'Graph
    execution error:', 'From /job:...:', the Python stack of the op's creation ending in
    "Node: 'name'", separator rows, '[[{{node ...}}]]'. This returns the first line that says
    what went wrong (after the "Node:" line when there is one), e.g. 'Socket closed', without
    tf.data's 'Error in user-defined function passed to ParallelMapDatasetV2:12 transformation
    with iterator: Iterator::Root::Prefetch::ParallelMapV2: ' before it; other exceptions give
    their first line.
    """
    lines = [x.strip() for x in str(getattr(error, 'message', None) or error).splitlines()]
    nodes = [i for i, x in enumerate(lines) if x.startswith('Node:')]
    if nodes:
        lines = lines[nodes[-1] + 1:]
    for line in lines:
        if re.search(r'[A-Za-z0-9]', line) and not line.startswith((
                'Graph execution error', 'From /job:', 'Detected at', 'File "', '[[',
                'Traceback')):
            line = _TF_DATA_PREFIX.sub('', line)
            return re.sub(r'\s*\[\[\{\{node .*$', '', line)
    return type(error).__name__


#: The errors of making a file in an existing folder of a special file system (/proc: ENOENT).
SPECIAL_FOLDER_ERRNOS = (errno.ENOENT, errno.EINVAL, errno.EOPNOTSUPP)


def cannot_hold_text(folder: str, reason: str) -> str:
    """The words for an existing `folder` where making a file failed with `reason`, one of
    SPECIAL_FOLDER_ERRNOS' texts: 'the folder /proc exists but cannot hold files (a special
    file system: making a file there fails: No such file or directory)'."""
    return ('the folder %s exists but cannot hold files (a special file system: making a file '
            'there fails: %s)' % (folder, reason))


def write_problem(folder: str) -> str | None:
    """Why no file can be made in the existing `folder` ('cannot write in /x: Read-only file
    system'; a folder such as /proc, where making a file fails with 'No such file or
    directory': 'cannot write in /proc: not a normal folder (...)'), or None: tried for real
    (a temporary file made and removed), because os.access lets root pass on a read-only
    mount."""
    try:
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as e:
        reason = e.strerror or str(e)
        if e.errno in SPECIAL_FOLDER_ERRNOS and os.path.isdir(folder):
            return 'cannot write in %s: not a normal folder (making a file there fails: %s)' % (
                folder, reason)
        return 'cannot write in %s: %s' % (folder, reason)
    return None


def working_folder_problem(paths) -> str | None:
    """Why relative paths cannot be used, or None: the working folder was removed (or moved)
    after the shell entered it, so a relative path has no folder to be looked up in (every
    open, every `os.path.abspath` fails with 'No such file or directory').

    Args:
      paths: (how the user gave it, path) pairs: a flag or an environment variable, shown as
        '--train_dir=td', 'TF_CNN_RESULTS_DB=r.sqlite', or words for a positional argument
        ('the page folder', 'site'), shown as 'the page folder site'. A path that is
        None, empty, not a string, absolute or remote (`gs://...`) needs no working folder.

    Returns:
      None when no path is relative or the working folder exists; else one line naming the
      first relative path and the fix ('the working folder no longer exists (...), so
      --train_dir=td, a relative path, cannot be found or made; give absolute paths, or cd
      to an existing folder').
    """
    relative = [(name, path) for name, path in paths
                if isinstance(path, str) and path and not os.path.isabs(path)
                and '://' not in path]
    if not relative:
        return None
    try:
        os.getcwd()
        return None
    except FileNotFoundError:
        pass
    name, path = relative[0]
    shown = ('%s=%s' if name.startswith('-') or name.isupper() else '%s %s') % (name, path)
    return ('the working folder no longer exists (it was removed or moved after the shell '
            'entered it), so %s, a relative path, cannot be found or made; give absolute '
            'paths, or cd to an existing folder' % shown)


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """'1 shard', '2 shards', '0 shards': `count` and the noun in its number (`plural`, default
    noun + 's', for every count but 1)."""
    return '%d %s' % (count, noun if count == 1 else plural or noun + 's')


def number_text(value: float) -> str:
    """`value` exactly as a user would type it, for a message that sets it against a limit:
    '16777216' and '16777217' (where '%g' gives 1.67772e+07 for both), '0.5', '1e-10' (Python's
    shortest repr that reads back as the same float), 'nan', 'inf'."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e16:
        return '%d' % value
    return repr(value)


def log_fn(text: str) -> None:
    """Prints one line of the benchmark's output to stdout and flushes it."""
    print(text, flush=True)


def warn(text: str) -> None:
    """Prints one warning line `warning: <text>` to stderr (a path's undecodable bytes as
    `shown_name` shows them)."""
    print('warning: %s' % shown_name(text), file=sys.stderr, flush=True)


def note(text: str) -> None:
    """Prints one line `note: <text>` to stderr: a fact the user should know that asks for no
    change of the flags (a warning's does)."""
    print('note: %s' % shown_name(text), file=sys.stderr, flush=True)


# Scales a median absolute deviation to the standard deviation of a normal distribution
# (1 / the 75th percentile of the standard normal); the original prints jitter with it.
MAD_TO_STD = 1.4826


class ImageRateStats:
    """Statistics of per-step image rates over the timed steps (warm-up steps excluded).

    The definitions are those of the original tf_cnn_benchmarks, so step lines compare with
    published runs. With n timed steps so far, step times t_i (seconds) and per-step rates
    r_i = images_per_step / t_i (images/sec, global over all devices and workers):
      mean: n x images_per_step / sum(t_i), i.e. images_per_step / mean(t_i): the rate of the
        whole timed period.
      uncertainty (`+/-`): standard error of the per-step rates, std(r) / sqrt(n), with the
        population standard deviation (divide by n, numpy's default ddof=0).
      jitter: 1.4826 x median(|r_i - median(r)|), the median absolute deviation scaled to
        estimate a standard deviation while ignoring a few slow steps.
    With `ewma_alpha` (--display_perf_ewma, 0..1), the mean uses an exponentially weighted
    mean step time instead, the newest step weighing 1 and each older one (1 - alpha) times the
    next newer: images_per_step / (sum(w_i t_i) / sum(w_i)), w_i = (1 - alpha)^(n - i).
    """

    def __init__(self, images_per_step: int, ewma_alpha: float | None = None):
        self.images_per_step = images_per_step
        self.ewma_alpha = ewma_alpha
        self.step_times: list[float] = []

    def add(self, seconds: float) -> None:
        """Records the wall time of one timed step, in seconds."""
        self.step_times.append(seconds)

    def rates(self) -> np.ndarray:
        """Per-step images/sec."""
        return self.images_per_step / np.maximum(np.asarray(self.step_times), 1e-12)

    def summary(self) -> tuple[float, float, float]:
        """Returns (mean, uncertainty, jitter) in images/sec; zeros before the first step."""
        if not self.step_times:
            return 0.0, 0.0, 0.0
        rates = self.rates()
        mean = self.images_per_step * len(self.step_times) / max(sum(self.step_times), 1e-12)
        if self.ewma_alpha:
            weights = (1.0 - self.ewma_alpha) ** np.arange(len(rates) - 1, -1, -1)
            mean_time = float(np.average(self.step_times, weights=weights))
            mean = self.images_per_step / max(mean_time, 1e-12)
        uncertainty = float(np.std(rates)) / math.sqrt(len(rates))
        jitter = MAD_TO_STD * float(np.median(np.abs(rates - np.median(rates))))
        return mean, uncertainty, jitter


def running_means(step_times, images_per_step: int,
                  ewma_alpha: float | None = None) -> list[float]:
    """The mean images/sec a step line prints after each timed step: element i is
    ImageRateStats(images_per_step, ewma_alpha) after steps 1..i+1 have been added, its
    summary()'s mean (images/sec, global), for every step, displayed or not. O(n): the
    weighted sums of --display_perf_ewma are kept from step to step.

    Args:
      step_times: seconds of each timed step, in order.
      images_per_step: images one step processes over all devices and workers.
      ewma_alpha: --display_perf_ewma (None or 0: the plain mean).
    """
    means, total, weighted, weights = [], 0.0, 0.0, 0.0
    decay = 1.0 - ewma_alpha if ewma_alpha else None
    for count, seconds in enumerate(step_times, 1):
        if decay is None:
            total += seconds
            means.append(images_per_step * count / max(total, 1e-12))
        else:
            weighted, weights = decay * weighted + seconds, decay * weights + 1.0
            means.append(images_per_step / max(weighted / weights, 1e-12))
    return means


def format_rate(stats: ImageRateStats) -> str:
    """The original's rate column: `images/sec: X +/- Y (jitter = Z)`, one decimal each."""
    return 'images/sec: %.1f +/- %.1f (jitter = %.1f)' % stats.summary()


def format_step_line(step: int, stats: ImageRateStats, loss: float | None,
                     extra: str = '') -> str:
    """The original's step line: `N\\timages/sec: X +/- Y (jitter = Z)[\\tLOSS][\\textra]`.

    A loss of None leaves out the loss column (a step function that gives no loss).
    """
    line = '%i\t%s' % (step, format_rate(stats))
    if loss is not None:
        line += '\t%.3f' % loss
    return line + ('\t' + extra if extra else '')


@contextlib.contextmanager
def captured_fd_stderr(enabled: bool = True):
    """Sends file descriptor 2 to a temporary file inside the block.

    TensorFlow's C++ start-up chatter (CUDA probes, oneDNN notices) bypasses Python's sys.stderr;
    this keeps it off the user's terminal. Yields a function that returns what was captured.
    """
    if not enabled:
        yield lambda: ''
        return
    import tempfile
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode='w+b') as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lambda: (sink.seek(0), sink.read().decode('utf-8', 'replace'))[1]
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def update_generated(path: str, opening: str, closing: str, body: str, write: bool) -> bool:
    """Compares, and with `write` replaces, the generated lines of a table in a source file.

    The table is the lines between the line `opening` (e.g. 'ROWS = (') and the next line
    `closing` (e.g. ')'): the generators' `--check` and `--write` (models/model_table.py,
    tools/cluster_memory.py), as `python -m bench.make_performance_page` has them.

    Args:
      path: the source file (UTF-8).
      opening, closing: the whole lines around the table, without their newlines.
      body: the table's lines as generated now, without a final newline.
      write: rewrite the file when the table differs.

    Returns:
      Whether the file's table was `body` already.

    Raises:
      ValueError: the file has no line `opening` followed by a line `closing`.
      OSError: reading or writing the file.
    """
    with open(path, encoding='utf-8') as f:
        text = f.read()
    start = text.find('\n%s\n' % opening)
    end = text.find('\n%s\n' % closing, start + 1) if start >= 0 else -1
    if end < 0:
        raise ValueError('%s has no table between a line %r and a line %r' % (
            path, opening, closing))
    start += len(opening) + 2
    if text[start:end] == body:
        return True
    if write:
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text[:start] + body + text[end:])
    return False


def add_check_and_write(parser, table: str) -> None:
    """Adds a generator's `--check` and `--write` (one or the other) to argparse `parser`;
    `table` names the generated table as the help says it ('ROWS in models/model_catalog.py'),
    `check_or_write_table` acts on them."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument('--check', action='store_true', help='exit 1 when %s is stale' % table)
    mode.add_argument('--write', action='store_true', help='rewrite %s' % table)


def check_or_write_table(path: str, table: str, opening: str, closing: str, body: str, *,
                         write: bool, what: str, count: int, command: str) -> int:
    """A generator's `--check` or `--write` (`update_generated`), said in one line; returns
    the exit status.

    Args:
      path, opening, closing, body: as `update_generated`'s.
      table: the table as the line names it ('models/model_catalog.py ROWS').
      write: `--write` (else `--check`).
      what: what differs ('missing: tinynet/cifar10'), for the line.
      count: how many models the table holds, for the line of a current one.
      command: the generator's command, named by a stale table's error line.

    Returns:
      0: the table is current (`... is current (38 models)`) or was written (`wrote ...`);
      1: `--check` found it stale (`error: ... is stale (...); run COMMAND --write` on stderr).
    """
    if update_generated(path, opening, closing, body, write=write):
        print('%s is current (%d models)' % (table, count))
        return 0
    if write:
        print('wrote %s (%s)' % (table, what))
        return 0
    print('error: %s is stale (%s); run %s --write' % (table, what, command), file=sys.stderr)
    return 1


def format_step_secs(seconds: float) -> str:
    """A step's or batch's time as the estimate lines give it: from 1 s on in seconds to two
    decimals (1.5 -> '1.50 s'), below it in milliseconds to 3 significant digits (0.123 ->
    '123 ms', 0.0123 -> '12.3 ms', 0.00173 -> '1.73 ms', 0.0004 -> '0.400 ms'), below
    0.01 ms 'under 0.01 ms'. (From 0.01 s it used to say '0.01 s' for a 10.4-ms step: one
    significant digit.)"""
    if seconds >= 0.9995:  # what rounds to 1000 ms reads '1.00 s'
        return '%.2f s' % seconds
    ms = seconds * 1e3
    if ms < 0.01:
        return 'under 0.01 ms'
    if ms < 0.1:  # 3 significant digits would claim microsecond-hundredths: 0.0100 ms
        return '%.2f ms' % ms
    return '%s ms' % ('%#.3g' % ms).rstrip('.')
