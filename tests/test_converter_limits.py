"""tf_cnn_build_tfrecords and the images Pillow guards against or cannot read: an image over
Pillow's decompression-bomb limit (one error line naming it, its pixels, the limit and the fix;
no folder left behind), one over its warning size (one warning of ours, not Pillow's), a class
folder without images (the fix), and files in photo formats Pillow reads only with a plugin
(named, with the plugin; counted in the summary).

Large images are made cheaply: PIL.Image.MAX_IMAGE_PIXELS is lowered instead (Pillow warns above
it and refuses above twice it), so a 20x20 image is "too large"."""

import os
import sys
import types
import warnings

import pytest
from PIL import Image

from tests import input_helpers as h
from tf_cnn_benchmarks.tools import class_folders


def _folder(root, sizes):
    """root/in/cls/<i>.png of the given (width, height) sizes; returns the input folder."""
    src = root / 'in'
    (src / 'cls').mkdir(parents=True)
    for i, size in enumerate(sizes):
        Image.new('RGB', size, (9 * i, 40, 90)).save(src / 'cls' / ('%d.png' % i))
    return src


def _run(capfd, src, out, *flags):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        run = h.converter_main(capfd, '--input_dir=%s' % src, '--output_dir=%s' % out,
                               '--noprogress', '--num_train_shards=1', '--validation_fraction=0',
                               *flags)
    return run, [str(w.message) for w in caught]


def test_an_image_over_pillows_limit_is_one_error_line_and_no_folder_is_left(
        tmp_path, capfd, monkeypatch):
    """A new user's 14000x14000 JPEG (196000000 pixels): a 40-line DecompressionBombError
    traceback, exit 1, and an empty --output_dir left behind."""
    monkeypatch.setattr(Image, 'MAX_IMAGE_PIXELS', 100)  # Pillow refuses over 200
    src = _folder(tmp_path, [(4, 4), (20, 20), (5, 3)])
    out = tmp_path / 'made' / 'out'
    run, caught = _run(capfd, src, out)
    assert (run.returncode, run.stdout) == (1, '')
    assert 'Traceback' not in run.stderr and caught == []
    assert run.stderr.splitlines()[-1] == (
        "error: 1 of 3 images cannot be read, so --output_dir holds no shards: %s (20x20 = 400 "
        "pixels, over Pillow's limit against decompression bombs of 200 pixels); resize it or "
        'leave it out, or pass --max_image_pixels=400 to read it if you trust it (2 KB as '
        'RGB), then run again' % (src / 'cls' / '1.png'))
    assert not (tmp_path / 'made').exists()  # both folders it created, left empty, removed
    assert Image.MAX_IMAGE_PIXELS == 100  # Pillow's own check is back as it was
    out.mkdir(parents=True)  # a folder the user made stays
    assert _run(capfd, src, out)[0].returncode == 1 and os.listdir(out) == []


def test_max_image_pixels_raises_or_lowers_the_limit(tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(Image, 'MAX_IMAGE_PIXELS', 100)
    src = _folder(tmp_path, [(4, 4), (20, 20)])
    run, caught = _run(capfd, src, tmp_path / 'out', '--max_image_pixels=400')
    assert run.returncode == 0, run.stderr
    assert 'pixels' not in run.stderr and caught == []  # the user chose the limit
    assert 'wrote 2 train images in 1 shard' in run.stdout
    run, _ = _run(capfd, src, tmp_path / 'out2', '--max_image_pixels=16')
    assert run.returncode == 1
    assert '(20x20 = 400 pixels, over --max_image_pixels of 16 pixels)' in run.stderr
    assert _run(capfd, src, tmp_path / 'out3', '--max_image_pixels=0')[0].returncode == 0
    run = h.converter_main(capfd, '--help')
    assert '--max_image_pixels: Largest image to read, in pixels' in run.stdout


def test_a_large_image_gets_one_warning_of_ours_not_pillows(tmp_path, capfd, monkeypatch):
    """A 10000x10000 image converted with Pillow's raw two-line DecompressionBombWarning, which
    names no file."""
    monkeypatch.setattr(Image, 'MAX_IMAGE_PIXELS', 100)
    src = _folder(tmp_path, [(4, 4), (12, 12)])
    run, caught = _run(capfd, src, tmp_path / 'out')
    assert run.returncode == 0, run.stderr
    assert caught == [] and 'DecompressionBomb' not in run.stderr
    assert [line for line in run.stderr.splitlines() if 'pixels' in line] == [
        'warning: 1 image is over 100 pixels, where Pillow warns of a possible decompression '
        'bomb: %s (12x12 = 144 pixels); converted at full size, which a run decodes whole each '
        'time it reads it (1 KB as RGB): resize it if it need not be that large'
        % (src / 'cls' / '1.png')]


def test_an_empty_class_folder_error_says_what_to_do(tmp_path, capfd):
    src = _folder(tmp_path, [(4, 4)])
    (src / 'emptyclass').mkdir()
    run, _ = _run(capfd, src, tmp_path / 'out')
    assert (run.returncode, run.stderr.splitlines()) == (1, [
        'error: class folder %s has no images; add images to it, or leave it out of '
        '--input_dir (move or delete it)' % (src / 'emptyclass')])


def _heic_stub(path):
    """The first bytes of a HEIC file (an ftyp box, brand heic): Pillow cannot read it."""
    path.write_bytes(b'\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic' + b'\x00' * 64)


def test_a_heic_photo_names_the_plugin_and_the_summary_counts_skipped_files(tmp_path, capfd):
    """A .heic photo (an iPhone's default) was 'a file that is not an image', and the summary
    said nothing of the files skipped."""
    src = _folder(tmp_path, [(4, 4), (5, 5)])
    _heic_stub(src / 'cls' / 'fake.heic')
    (src / 'cls' / 'notes.txt').write_text('hello')
    run, _ = _run(capfd, src, tmp_path / 'out')
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines()[0] == (
        'warning: skipped 2 files that are not images Pillow can read: %s, %s; HEIC/HEIF '
        '(fake.heic): install the pillow-heif plugin (pip install pillow-heif; the converter '
        'loads it) or convert them to JPEG' % (src / 'cls' / 'fake.heic',
                                                src / 'cls' / 'notes.txt'))
    assert run.stdout.splitlines()[-2] == (
        'files skipped: 2 (named in the warnings above): 2 not an image Pillow can read')
    os.remove(src / 'cls' / 'fake.heic')
    os.remove(src / 'cls' / 'notes.txt')
    run, _ = _run(capfd, src, tmp_path / 'out2')
    assert run.stdout.splitlines()[-2] == 'files skipped: none'


def test_a_class_folder_of_heic_photos_names_the_plugin_in_its_error(tmp_path, capfd):
    src = _folder(tmp_path, [(4, 4)])
    (src / 'phone').mkdir()
    _heic_stub(src / 'phone' / 'IMG_0001.HEIC')
    run, _ = _run(capfd, src, tmp_path / 'out')
    assert (run.returncode, run.stderr.splitlines()) == (1, [
        'error: class folder %s has no images (only files that are not images Pillow can '
        'read: IMG_0001.HEIC); HEIC/HEIF (IMG_0001.HEIC): install the pillow-heif plugin (pip '
        'install pillow-heif; the converter loads it) or convert them to JPEG; add images to '
        'it, or leave it out of --input_dir (move or delete it)' % (src / 'phone')])


def test_avif_without_pillow_support_names_its_fix(monkeypatch):
    known = {e: f for e, f in Image.registered_extensions().items() if e != '.avif'}
    monkeypatch.setattr(Image, 'registered_extensions', lambda: known)
    assert class_folders.plugin_hint(['in/a/x.avif', 'in/a/y.txt']) == (
        '; AVIF (x.avif): install a Pillow that reads AVIF (pip install -U Pillow) or the '
        'pillow-avif-plugin plugin (the converter loads it), or convert them to JPEG')
    assert class_folders.plugin_hint(['in/a/y.txt']) == ''


def test_installed_plugins_are_loaded(monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, 'pillow_heif', types.SimpleNamespace(
        register_heif_opener=lambda: calls.append('heif')))
    monkeypatch.setitem(sys.modules, 'pillow_avif', None)  # not installed: import fails
    assert class_folders.load_image_plugins() == ['pillow_heif'] and calls == ['heif']


@pytest.mark.parametrize('pixels, text', [(196000000, '561 MB'), (100, '1 KB')])
def test_decoded_size(pixels, text):
    from tf_cnn_benchmarks.tools import convert_report
    assert convert_report.decoded_size(pixels) == text
