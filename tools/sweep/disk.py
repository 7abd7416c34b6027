"""The disk under a sweep's output folder: whether a run failed for lack of space there, the
one error line of a file the sweep could not write (its path, why, and the fix), and whether a
run's folder under it is too deep for the files the run writes (`run_path_problem`).

A run that failed while the disk was full failed for the disk, not for its configuration: its
record says `no_space` (results.py), a resume runs it again (results.done_keys), and the sweep
stops at it instead of failing every run after it the same way (cli.run_sweep).
"""

from __future__ import annotations

import errno
import os

#: The errors of a full disk: no space left, or this user's quota used up.
NO_SPACE_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
#: How the runs' error lines say so ('No space left on device', 'Disk quota exceeded').
NO_SPACE_TEXTS = tuple(os.strerror(n) for n in NO_SPACE_ERRNOS)
#: Less free space than this (bytes this user may still write) counts as a full disk: a run's
#: log could not even hold its error line.
FULL_BELOW_BYTES = 16 * 1024

RESUME = 'then run the same command again: it resumes'


def free_bytes(folder: str) -> int | None:
    """Bytes this user may still write on the disk of `folder` (statvfs), None when unknown."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def out_of_space(folder: str, *texts: str | None) -> bool:
    """True when one of `texts` (a run's error line, its stderr) says the disk was full, or
    the disk of `folder` has less than FULL_BELOW_BYTES free (the run's stderr may be empty:
    nothing could be written)."""
    if any(text and any(words in text for words in NO_SPACE_TEXTS) for text in texts):
        return True
    free = free_bytes(folder)
    return free is not None and free < FULL_BELOW_BYTES


def write_error(e: OSError, output_dir: str) -> str:
    """The error line's text for a file of the sweep that could not be written:
    'cannot write runs/a/results.jsonl: No space left on device; free space on its disk (or
    give another --output_dir), then run the same command again: it resumes'."""
    path = e.filename or output_dir
    why = e.strerror or str(e)
    if e.errno in NO_SPACE_ERRNOS:
        fix = 'free space on its disk (or give another --output_dir)'
    else:
        fix = 'make it writable for this user (or give another --output_dir)'
    return 'cannot write %s: %s; %s, %s' % (path, why, fix, RESUME)


def full_disk_line(label: str, error: str | None) -> str:
    """The error line's text when a run failed for lack of space and the sweep stopped: which
    run, its own error (which names the file), and the fix."""
    return ('the run %s failed for lack of disk space (%s) and the sweep stopped there (every '
            'run after it would fail alike); free space on that disk (or give another '
            '--output_dir), %s, and the runs that failed for lack of space run again'
            % (label, error or 'no error line: its logs could not be written', RESUME))


def run_path_problem(output_dir: str, args: list[str]) -> str | None:
    """An error message when the results JSON of the run `args` (tf_cnn_benchmarks arguments
    with its --benchmark_log_dir under <output_dir>/runs/: runner.command_for) would be over
    the system's path limits (preflight/path_lengths.py), else None. The sweep asks for the
    run with the longest such path before any run: such a run failed with exit status 2,
    recorded failed, after the runs before it."""
    from tf_cnn_benchmarks import flag_parsing  # absolute: `python -m tools.sweep`
    from tf_cnn_benchmarks.preflight import path_lengths
    p = flag_parsing.parse_flags(['tf_cnn_benchmarks'] + list(args), quiet=True)
    for flag, path in path_lengths.written_paths(p):
        problem = path_lengths.path_problem(path) if flag == '--benchmark_log_dir' else None
        if problem:
            return ('--output_dir=%s cannot be used: the run %s would write %s there, %s; '
                    'choose a shorter --output_dir' % (output_dir, ' '.join(args[:4]),
                                                       os.path.relpath(path, output_dir),
                                                       problem))
    return None
