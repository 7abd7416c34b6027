"""Installs the `tf_cnn_benchmarks` command and the `tf_cnn_benchmarks` package.

All modules are installed inside the `tf_cnn_benchmarks` package (nothing generic such as
`models`, `params` or `datasets` goes to the top of site-packages).
"""

import re

import setuptools

# The version is written once, in package_info.py (the package's __version__).
with open('package_info.py', encoding='utf-8') as _f:
    VERSION = re.search(r"^VERSION = '([^']+)'$", _f.read(), re.M).group(1)

setuptools.setup(
    name='tf_cnn_benchmarks',
    version=VERSION,
    description='Fast, trustworthy CNN training benchmarks for TensorFlow (TF1-style graphs)',
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    python_requires='>=3.10',
    package_dir={'tf_cnn_benchmarks': '.'},
    packages=['tf_cnn_benchmarks'] + ['tf_cnn_benchmarks.' + sub for sub in (
        'cluster', 'graph', 'hardware', 'history', 'input_data', 'lifecycle', 'metrics', 'models',
        'params', 'preflight', 'runtime', 'speed_model', 'tools', 'tools.sweep',
        'variable_managers')],
    # docs/: the manual that messages and --help name (docs/real-data.md ...), installed in the
    # package's folder so that an installed package has it too (--help says where).
    package_data={'tf_cnn_benchmarks': ['configs/*.flags', 'docs/*.md', 'docs/*.png',
                                        'docs/img/*']},
    # Pillow: tf_cnn_build_tfrecords reads and converts the images with it.
    install_requires=['tensorflow>=2.16', 'absl-py', 'numpy', 'Pillow', 'PyYAML', 'scipy'],
    extras_require={
        'test': ['pytest', 'pytest-timeout', 'pytest-xdist', 'portpicker', 'scikit-learn',
                 'matplotlib', 'mlperf-logging', 'mkdocs>=1.6',  # mkdocs: tests/test_docs.py
                 'gcp-storage-emulator'],  # a local GCS for gs:// (tests/gcs_emulator.py)
        'plot': ['matplotlib'],
        # A GPU host: TensorFlow with its CUDA and cuDNN libraries as pip wheels (TensorFlow's
        # install guide, "pip install tensorflow[and-cuda]"); the NVIDIA driver comes apart.
        'gpu': ['tensorflow[and-cuda]>=2.16'],
        'docs': ['mkdocs>=1.6'],  # mkdocs build --strict: the manual in docs/ as a site
        'mlperf': ['mlperf-logging'],  # --ml_perf: MLPerf-format log lines
    },
    entry_points={'console_scripts': [
        # console.py: Ctrl-C ends quietly (exit 130) while the command is still importing.
        'tf_cnn_benchmarks = tf_cnn_benchmarks.console:tf_cnn_benchmarks',
        'tf_cnn_build_tfrecords = tf_cnn_benchmarks.console:tf_cnn_build_tfrecords',
        'tf_cnn_cluster = tf_cnn_benchmarks.console:tf_cnn_cluster',
        'tf_cnn_sweep = tf_cnn_benchmarks.console:tf_cnn_sweep',
        'tf_cnn_results = tf_cnn_benchmarks.console:tf_cnn_results',
    ]},
)
