"""tf_cnn_benchmarks as an installed package.

The modules of this project import each other by their plain names (`import params`), exactly as
when `python tf_cnn_benchmarks.py` runs from a checkout. When the project is installed, its modules
live inside this package (nothing generic such as `models` or `params` is placed at the top of
site-packages); importing the package puts the package folder on sys.path so those plain imports
resolve to the project's own modules.
"""

import os as _os
import sys as _sys

_HERE = _os.path.dirname(_os.path.abspath(__file__))
if _HERE not in _sys.path:
    _sys.path.insert(0, _HERE)
