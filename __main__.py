"""`python -m tf_cnn_benchmarks`: the `tf_cnn_benchmarks` command (cli.py)."""

if __name__ == '__main__':
    from . import console

    console.tf_cnn_benchmarks()
