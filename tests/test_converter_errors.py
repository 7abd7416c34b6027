"""tf_cnn_build_tfrecords' refusals: bad flag values (exit 2, one line) and unreadable images
(every one counted in one run, the first five named, no shard written, each image read once)."""

import ast
import collections
import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from tests import input_helpers as h
from tf_cnn_benchmarks.tools import build_imagenet_tfrecords as convert_tool

import checkout


@pytest.mark.parametrize('setup, message', [
    ('no_classes', '--input_dir={src} has no class sub-folders; give the folder that holds them '
                   '(input_dir/<class>/<image>)'),
    ('inside', '--output_dir={src}/cls/out is inside --input_dir; its shards would become a '
               'class next time: choose a folder outside it'),
    ('same', '--output_dir={src} is --input_dir; its shards would lie among the class '
             'folders: choose a folder outside it'),
    ('too_many_shards', '--num_train_shards=9 is more than the 2 train images; use fewer '
                        'shards'),
    ('uncreatable', '--output_dir=/dev/null/out cannot be created: Not a directory; choose '
                    'another folder'),
    # Before: exit 1, though --overwrite or another folder fixes it, as for a read-only one.
    ('existing', '--output_dir {out} already holds shards (train-00000-of-00001); pass '
                 '--overwrite to replace them, or choose another folder'),
])
def test_bad_flag_values_exit_2_with_one_line(tmp_path, capsys, setup, message):
    src = tmp_path / 'in'
    src.mkdir()
    if setup != 'no_classes':
        (src / 'cls').mkdir()
        for name in ('a.png', 'b.png'):
            Image.new('RGB', (4, 4)).save(src / 'cls' / name)
    out = {'inside': str(src / 'cls' / 'out'), 'uncreatable': '/dev/null/out',
           'same': str(src)}.get(setup, str(tmp_path / 'out'))
    if setup == 'existing':
        os.makedirs(out)
        with open(os.path.join(out, 'train-00000-of-00001'), 'wb'):
            pass
    message = message.replace('{out}', out)
    status = convert_tool.main(['tf_cnn_build_tfrecords', '--input_dir=%s' % src,
                                '--output_dir=%s' % out, '--noprogress', '--validation_fraction=0',
                                '--num_train_shards=%d' % (9 if setup == 'too_many_shards' else 1)])
    out, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if not line.startswith('warning: ')]
    assert (status, out, errors) == (2, '', ['error: %s' % message.format(src=src)])


def test_a_read_only_output_dir_exits_2_before_any_image_is_read(tmp_path, capsys):
    """An existing --output_dir this user cannot write: exit 2 (another folder fixes it), as
    for one that cannot be created, not 1 after every image was read."""
    src = tmp_path / 'in'
    (src / 'cls').mkdir(parents=True)
    Image.new('RGB', (4, 4)).save(src / 'cls' / 'a.png')
    if os.geteuid() == 0:  # root writes through a folder's mode: sysfs refuses any new file
        out = '/sys'
    else:
        out = str(tmp_path / 'read_only')
        os.makedirs(out)
        os.chmod(out, 0o555)
    status = convert_tool.main(['tf_cnn_build_tfrecords', '--input_dir=%s' % src,
                                '--output_dir=%s' % out, '--noprogress', '--validation_fraction=0',
                                '--num_train_shards=1'])
    errors = [x for x in capsys.readouterr().err.splitlines() if not x.startswith('warning: ')]
    assert status == 2, errors
    assert len(errors) == 1 and re.fullmatch(
        r'error: --output_dir=%s cannot be written: (Permission denied|Operation not permitted|'
        r'Read-only file system); choose another folder' % re.escape(out), errors[0]), errors


def _truncated_jpeg() -> bytes:
    whole = io.BytesIO()
    Image.fromarray(np.arange(64 * 64 * 3, dtype=np.uint8).reshape(64, 64, 3)).save(
        whole, 'JPEG')
    return whole.getvalue()[:len(whole.getvalue()) // 2]


@pytest.mark.cli
def test_every_unreadable_image_is_named_in_one_run_and_no_shard_is_written(tmp_path, capfd):
    """A new user's trial: a class folder holding a truncated JPEG and a text file named x.jpg
    needed one run per bad file (the first one stopped the conversion)."""
    src, out = tmp_path / 'in', tmp_path / 'out'
    for name in ('cats', 'dogs'):
        (src / name).mkdir(parents=True)
        for i in range(3):
            Image.new('RGB', (6, 5), (40 * i, 9, 9)).save(src / name / ('%d.png' % i))
    (src / 'dogs' / 'cut.jpg').write_bytes(_truncated_jpeg())
    (src / 'dogs' / 'x.jpg').write_text('not an image')
    run = h.converter_main(capfd, '--input_dir=%s' % src, '--output_dir=%s' % out,
                           '--num_train_shards=2', '--num_validation_shards=1',
                           '--validation_fraction=0.25', '--seed=3')
    assert (run.returncode, run.stdout) == (1, '')
    errors = [x for x in run.stderr.splitlines() if 'error' in x.lower() or 'Trace' in x]
    assert len(errors) == 1, run.stderr
    # Pillow's count of bytes not processed depends on its JPEG library.
    assert re.fullmatch(
        r'error: 2 of 8 images cannot be read, so --output_dir holds no shards: %s \(image file is '
        r'truncated \(\d+ bytes not processed\)\), %s \(not an image format Pillow knows\); '
        r'remove or convert them, then run again' % (
            re.escape(str(src / 'dogs' / 'cut.jpg')), re.escape(str(src / 'dogs' / 'x.jpg'))),
        errors[0]), errors[0]
    assert '8/8 images' in run.stderr  # every image was checked
    assert not out.exists()  # it created the folder: a failed run removes it


def test_every_image_is_read_once_whether_some_are_unreadable_or_not(tmp_path, monkeypatch):
    src = tmp_path / 'in'
    (src / 'cls').mkdir(parents=True)
    for i in range(6):
        Image.new('RGB', (4, 4), (i, 0, 0)).save(src / 'cls' / ('%d.png' % i))
    reads = collections.Counter()
    real = convert_tool.image_encoding.encode_image

    def counted(path, limits=None):
        reads[os.path.basename(path)] += 1
        return real(path, limits)
    monkeypatch.setattr(convert_tool.image_encoding, 'encode_image', counted)
    flags = dict(num_train_shards=3, num_validation_shards=1, validation_fraction=0.0, seed=0,
                 num_threads=2, progress=False)
    convert_tool.convert(str(src), str(tmp_path / 'ok'), **flags)
    assert reads == {'%d.png' % i: 1 for i in range(6)}
    reads.clear()
    for name in ('7.jpg', '8.jpg'):
        (src / 'cls' / name).write_text('text')
    with pytest.raises(convert_tool.ConvertError, match='^2 of 8 images cannot be read'):
        convert_tool.convert(str(src), str(tmp_path / 'bad'), **flags)
    assert reads == {name: 1 for name in ['%d.png' % i for i in range(6)] + ['7.jpg', '8.jpg']}
    assert not (tmp_path / 'bad').exists()


def test_the_unreadable_images_line_names_the_first_five_by_path():
    unreadable = [convert_tool.image_encoding.Unreadable('in/c/%02d.jpg' % i, 'truncated')
                  for i in range(12, 0, -1)]
    assert convert_tool.unreadable_message(unreadable, 40) == (
        '12 of 40 images cannot be read, so --output_dir holds no shards: in/c/01.jpg (truncated), '
        'in/c/02.jpg (truncated), in/c/03.jpg (truncated), in/c/04.jpg (truncated), '
        'in/c/05.jpg (truncated) and 7 more; remove or convert them, then run again')
    assert convert_tool.unreadable_message(unreadable[:1], 3).endswith(
        ': in/c/12.jpg (truncated); remove or convert it, then run again')


def test_setup_installs_pillow_for_the_converter():
    """The README's `pip install -e .` then `tf_cnn_build_tfrecords ...`: Pillow was in the
    `test` extra only, so the converter ended in a traceback (No module named 'PIL')."""
    tree = ast.parse(open(os.path.join(checkout.REPO, 'setup.py'), encoding='utf-8').read())
    requires = next(ast.literal_eval(node.value) for node in ast.walk(tree)
                    if isinstance(node, ast.keyword) and node.arg == 'install_requires')
    assert 'Pillow' in requires


@pytest.mark.cli
def test_a_python_without_pillow_gets_one_error_line_and_exit_2(tmp_path):
    """Pillow hidden (`sys.modules['PIL'] = None`: `import PIL` raises ImportError, as where it
    is not installed): one `error:` line naming the fix before any image is read, no
    traceback (before: ModuleNotFoundError from tools/class_folders.py, exit 1)."""
    src = tmp_path / 'in'
    (src / 'cls').mkdir(parents=True)
    Image.new('RGB', (4, 4)).save(src / 'cls' / 'a.png')
    script = ("import runpy, sys; sys.modules['PIL'] = None; "
              "runpy.run_module('tools.build_imagenet_tfrecords', run_name='__main__', "
              "alter_sys=True)")
    run = subprocess.run([sys.executable, '-c', script, '--input_dir=%s' % src,
                          '--output_dir=%s' % (tmp_path / 'out')], cwd=checkout.REPO,
                         capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout) == (2, '')
    assert run.stderr == 'error: %s\n' % convert_tool.NO_PILLOW
    assert convert_tool.NO_PILLOW.startswith(
        'tf_cnn_build_tfrecords needs Pillow to read the images, which is not installed: '
        'pip install Pillow')
    assert not (tmp_path / 'out').exists()


def test_a_leading_tilde_is_the_home_folder(tmp_path, monkeypatch, capsys):
    # Before: --output_dir='~/pt' wrote into a folder named '~' of the working folder, and
    # --input_dir='~/photos' was 'not a directory' (the shell leaves '~' after '=' as typed).
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'home' / 'photos' / 'cls').mkdir(parents=True)
    for name in ('a.png', 'b.png'):
        Image.new('RGB', (4, 4)).save(tmp_path / 'home' / 'photos' / 'cls' / name)
    status = convert_tool.main(['tf_cnn_build_tfrecords', '--input_dir=~/photos',
                                '--output_dir=~/pt', '--noprogress', '--validation_fraction=0',
                                '--num_train_shards=1'])
    assert status == 0, capsys.readouterr().err
    assert 'train-00000-of-00001' in os.listdir(tmp_path / 'home' / 'pt')
    assert not os.path.exists(tmp_path / '~')
