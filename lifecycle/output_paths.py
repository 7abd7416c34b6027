"""Up-front checks that a run's output paths can be written (before TensorFlow loads).

A --train_dir that cannot be created used to fail after the graph was built, minutes into a run;
the command calls `check_output_paths` right after `params.validate_params`.
"""

from __future__ import annotations

import os
import tempfile

from ..params import Params, ParamsError

_OUTPUT_DIRS = ('train_dir', 'benchmark_log_dir', 'eval_dir')
_OUTPUT_FILES = ('trace_file', 'graph_file', 'tfprof_file', 'plot_file',
                 'partitioned_graph_file_prefix')


def _creatable_dir_problem(path: str) -> str | None:
    """Why directory `path` cannot exist or be made by this process, or None if it can.

    Tried for real: the missing directories are made and a file is created in `path`, then
    everything made is removed again (permissions, read-only or special file systems such as
    /proc, over-long names: what would stop the run is met here, not after the graph is built).
    """
    missing = [os.path.abspath(path)]
    while not os.path.exists(missing[-1]):
        missing.append(os.path.dirname(missing[-1]))
    parent, missing = missing[-1], missing[-2::-1]  # outermost missing directory first
    if not os.path.isdir(parent):
        return '%s is a file, not a directory' % parent
    made = []
    try:
        for folder in missing:
            step = 'cannot create %s' % folder
            try:
                os.mkdir(folder)
            except FileExistsError:  # another task of the cluster made it meanwhile
                if os.path.isdir(folder):
                    continue
                raise
            made.append(folder)
        step = 'cannot create a file in %s' % os.path.abspath(path)
        tempfile.TemporaryFile(dir=path).close()
    except OSError as e:
        return '%s: %s' % (step, e.strerror or e)
    finally:
        for folder in reversed(made):
            try:
                os.rmdir(folder)
            except OSError:  # another process put files there meanwhile: theirs
                pass
    return None


def check_output_paths(p: Params) -> None:
    """Checks up front that every output directory and file of the run can be written.

    Directories (--train_dir, --benchmark_log_dir) may not exist yet: their nearest existing
    ancestor must be a writable directory. Files (--trace_file, --graph_file, --tfprof_file,
    --plot_file) must not be directories and their directory must be creatable. Each directory
    is tried for real (made, a file created in it, then removed again): nothing is left behind.

    Raises:
      ParamsError: naming the flag, the path and what is wrong with it.
    """
    checks = [(name, getattr(p, name), False) for name in _OUTPUT_DIRS]
    checks += [(name, getattr(p, name), True) for name in _OUTPUT_FILES]
    for name, path, is_file in checks:
        if not path:
            continue
        if is_file and os.path.isdir(path):
            problem = 'it is a directory; give a file name'
        elif name == 'plot_file' and not path.lower().endswith('.png'):
            problem = 'the plot is a PNG image; give a name ending in .png'
        else:
            problem = _creatable_dir_problem((os.path.dirname(path) or '.') if is_file else path)
        if problem:
            raise ParamsError('--%s=%s cannot be written: %s. Choose another path.'
                              % (name, path, problem))
