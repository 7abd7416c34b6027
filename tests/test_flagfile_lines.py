"""Flagfile lines absl would misread are one usage error naming the file, the line and the fix
(params/flagfile_lines.py): quoted values, two flags a line, `--name value`, a nested flagfile
looked for in the working directory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import test_cli_edges

from tf_cnn_benchmarks import flag_parsing, params

TESTS = os.path.dirname(os.path.abspath(__file__))


def _error(tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(params.ParamsError) as e:
        flag_parsing.parse_flags(['prog'] + argv)
    return str(e.value)


@pytest.mark.parametrize('text, message', [
    ('--model=trivial\n--data_dir="/data/x"\n',
     'flags.txt line 2 reads --data_dir="/data/x": a flagfile holds one flag a line, unquoted '
     '(absl keeps the quotes in the value); write --data_dir=/data/x'),
    ("# two flags\n--model='trivial --batch_size=4'\n",
     "flags.txt line 2 reads --model='trivial --batch_size=4': a flagfile holds one flag a line, "
     'unquoted (absl takes the whole line as one argument); put --batch_size=4 on a line of its '
     'own'),
    ('--model=trivial --batch_size=4 --use_fp16\n',
     'flags.txt line 1 reads --model=trivial --batch_size=4 --use_fp16: a flagfile holds one '
     'flag a line, unquoted (absl takes the whole line as one argument); put --batch_size=4 and '
     '--use_fp16 on a line of its own'),
    ('--data_dir /data/x\n',
     "flags.txt line 1 reads --data_dir /data/x: a flagfile holds one flag a line, as "
     "--name=value (absl takes '--data_dir /data/x' as the name of a flag); write "
     '--data_dir=/data/x'),
    ('model=trivial\n',
     "flags.txt line 1 reads 'model=trivial': a flagfile holds one flag a line, unquoted, each "
     'line starting with --name (absl would take this line as a positional argument)'),
])
def test_a_misread_line_is_one_error_naming_file_and_line(tmp_path, monkeypatch, text, message):
    (tmp_path / 'flags.txt').write_text(text)
    assert _error(tmp_path, monkeypatch, ['--flagfile=flags.txt']) == message


def test_good_lines_still_parse(tmp_path, monkeypatch):
    (tmp_path / 'flags.txt').write_text(
        '// a comment\n\n--model=trivial\n  --batch_size=4  \n--label=two words\n--use_fp16\n')
    monkeypatch.chdir(tmp_path)
    p = flag_parsing.parse_flags(['prog', '--flagfile', 'flags.txt'])
    assert (p.model, p.batch_size, p.label, p.use_fp16) == ('trivial', 4, 'two words', True)


def test_a_nested_flagfile_not_found_names_the_folder_it_was_looked_for_in(tmp_path, monkeypatch):
    sub = tmp_path / 'sub'
    sub.mkdir()
    (sub / 'outer.txt').write_text('--model=trivial\n--flagfile=common.txt\n')
    (sub / 'common.txt').write_text('--batch_size=2\n')
    assert _error(tmp_path, monkeypatch, ['--flagfile=sub/outer.txt']) == (
        'sub/outer.txt line 2 reads --flagfile=common.txt: no such file in %s (absl opens a '
        'nested flagfile from the working directory, not from the folder of the file naming it); '
        "it is beside outer.txt: make the line --flagfile=%s (unquoted: absl reads a flagfile's "
        'lines as they are, no shell)' % (tmp_path, sub / 'common.txt'))


def test_a_nested_flagfile_is_checked_too(tmp_path, monkeypatch):
    (tmp_path / 'outer.txt').write_text('--flagfile=inner.txt\n')
    (tmp_path / 'inner.txt').write_text('--model=trivial\n--train_dir="/tmp/x"\n')
    assert _error(tmp_path, monkeypatch, ['--flagfile=outer.txt']).startswith(
        'inner.txt line 2 reads --train_dir="/tmp/x": a flagfile holds one flag a line')


def test_the_command_says_it_in_one_line_with_status_2(tmp_path):
    flagfile = tmp_path / 'flags.txt'
    flagfile.write_text('--data_dir="/data/x"\n')
    status, out, err, loaded = test_cli_edges.run_main('--flagfile=%s' % flagfile)
    assert (status, loaded, out.strip()) == (2, False, '')
    assert err == ('error: %s line 1 reads --data_dir="/data/x": a flagfile holds one flag a '
                   'line, unquoted (absl keeps the quotes in the value); write '
                   '--data_dir=/data/x\n' % flagfile), err


def test_an_empty_flagfile_flag_is_a_usage_error():
    """`--flagfile=$UNSET` ran the default run and exited 0."""
    status, out, err, loaded = test_cli_edges.run_main('--flagfile=')
    assert (status, loaded, out.strip()) == (2, False, '')
    assert err == ("error: --flagfile= names no file (an unset variable in a script?): give "
                   "the flag file's path, or drop --flagfile\n"), err


@pytest.mark.parametrize('indent', ['', '  '])  # absl strips the blanks: the same line
def test_an_empty_flagfile_line_is_the_same_usage_error_naming_file_and_line(tmp_path, indent):
    """A flagfile's `--flagfile=` (a template's unset $VAR) was skipped without a word, the
    file then warned about as holding no flag, and the default run went on, exit 0."""
    flagfile = tmp_path / 'em2.flags'
    flagfile.write_text('--model=trivial\n--num_batches=2\n--noresults_db\n%s--flagfile=\n'
                        % indent)
    status, out, err, loaded = test_cli_edges.run_main('--flagfile=%s' % flagfile)
    assert (status, loaded, out.strip()) == (2, False, '')
    assert err == ("error: %s line 4: --flagfile= names no file (an unset variable in a "
                   "script?): give the flag file's path, or drop --flagfile\n" % flagfile), err


@pytest.mark.parametrize('text, bad', [('--model=trivial\n--flagfile\n', 2),
                                       ('--flagfile\n--model=trivial\n', 1)])
def test_a_flagfile_line_of_a_bare_flagfile_names_its_line(tmp_path, monkeypatch, text, bad):
    """A last line `--flagfile` took the next command-line flag as its file ("Unable to open
    flagfile: No such file '--num_batches=2'"), a first one the next line."""
    (tmp_path / 'flags.txt').write_text(text)
    message = _error(tmp_path, monkeypatch, ['--flagfile=flags.txt', '--num_batches=2'])
    assert message == ('flags.txt line %d reads --flagfile without a file: write '
                       '--flagfile=PATH on one line (absl would open the argument after it as '
                       'the file)' % bad)


@pytest.mark.parametrize('line, message', [
    ('--config=', "flags.txt line 2: --config= names no configuration (an unset variable in a "
                  "script?): give a configuration's name, or drop --config; known: "),
    ('--config=nosuch', 'flags.txt line 2: --config=nosuch: unknown configuration; known: '),
])
def test_a_bad_config_line_names_the_flagfile_and_line(tmp_path, monkeypatch, line, message):
    (tmp_path / 'flags.txt').write_text('--model=trivial\n%s\n' % line)
    assert _error(tmp_path, monkeypatch, ['--flagfile=flags.txt']).startswith(message)


def test_a_flagfile_naming_itself_is_one_error_naming_the_loop(tmp_path):
    """absl skips a circular flagfile with a warning and ran the default run, exit 0."""
    flagfile = tmp_path / 'self.txt'
    flagfile.write_text('--model=trivial\n--flagfile=%s\n' % flagfile)
    status, out, err, loaded = test_cli_edges.run_main('--flagfile=%s' % flagfile)
    assert (status, loaded, out.strip()) == (2, False, '')
    assert err == ('error: {0} line 2 reads --flagfile={0}: a circular flagfile ({0} -> {0}); '
                   'absl would skip it with a warning and run without its flags; remove this '
                   'line\n'.format(flagfile)), err


def test_a_loop_through_two_flagfiles_names_both(tmp_path, monkeypatch):
    (tmp_path / 'a.txt').write_text('--flagfile=b.txt\n')
    (tmp_path / 'b.txt').write_text('--batch_size=2\n--flagfile=./a.txt\n')
    assert _error(tmp_path, monkeypatch, ['--flagfile=a.txt']) == (
        'b.txt line 2 reads --flagfile=./a.txt: a circular flagfile (a.txt -> b.txt -> ./a.txt); '
        'absl would skip it with a warning and run without its flags; remove this line')


def test_one_flagfile_named_twice_without_a_loop_parses(tmp_path, monkeypatch):
    (tmp_path / 'common.txt').write_text('--batch_size=2\n')
    (tmp_path / 'a.txt').write_text('--flagfile=common.txt\n')
    (tmp_path / 'b.txt').write_text('--flagfile=common.txt\n--model=trivial\n')
    monkeypatch.chdir(tmp_path)
    p = flag_parsing.parse_flags(['prog', '--flagfile=a.txt', '--flagfile=b.txt'])
    assert (p.model, p.batch_size) == ('trivial', 2)


@pytest.mark.parametrize('path, message', [
    ('/proc/self/mem', '--flagfile=/proc/self/mem cannot be read: Input/output error; give the '
                       'path of a text file of --name=value lines this user can read'),
    ('/', '--flagfile=/ cannot be read: Is a directory; give the path of a text file of '
          '--name=value lines this user can read'),
])
def test_a_flagfile_that_is_no_text_file_is_one_error_naming_it(tmp_path, monkeypatch, path,
                                                                 message):
    # Before: an OSError traceback (/proc/self/mem: Errno 5) or a MemoryError (/dev/zero).
    assert _error(tmp_path, monkeypatch, ['--flagfile=%s' % path]) == message


# /dev/zero as a flagfile, parsed in a process whose address space is capped at 2 GiB: read
# whole, it was a MemoryError traceback (here: the cap), and on a host without a cap it takes
# the memory of the whole host first.
_ZERO = textwrap.dedent("""
    import resource, sys
    sys.path.insert(0, {tests!r})
    import checkout
    checkout.load()
    from tf_cnn_benchmarks import flag_parsing, params
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    try:
        flag_parsing.parse_flags(['prog', '--flagfile=/dev/zero'])
    except params.ParamsError as e:
        print(e)
""")


def test_dev_zero_as_a_flagfile_is_one_error_naming_it():
    proc = subprocess.run([sys.executable, '-c', _ZERO.format(tests=TESTS)],
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout) == (0, (
        '--flagfile=/dev/zero is not a flag file: more than 1 MiB (a device such as /dev/zero, '
        'or another kind of file?); give a text file of --name=value lines\n')), proc.stderr


def test_a_nested_flagfile_that_is_not_utf8_is_named(tmp_path, monkeypatch):
    # Before: 'a --flagfile is not UTF-8 text (byte 0xff at position 0)', naming no file.
    (tmp_path / 'outer.txt').write_text('--model=trivial\n--flagfile=inner.txt\n')
    (tmp_path / 'inner.txt').write_bytes(b'\xff--batch_size=2\n')
    assert _error(tmp_path, monkeypatch, ['--flagfile=outer.txt']) == (
        '--flagfile=inner.txt (outer.txt line 2) is not UTF-8 text (byte 0xff at position 0); '
        'save it as UTF-8')


@pytest.mark.parametrize('line, message', [
    ('--batch_size=x', 'inner.txt line 2: --batch_size=x: takes an integer (see --help)'),
    ('--distortions=maybe', 'inner.txt line 2: --distortions=maybe: a boolean flag takes true '
                            'or false (also --distortions, --nodistortions) (see --help)'),
    ('--nodistortions=true', 'inner.txt line 2: --nodistortions=true: --nodistortions takes no '
                             'value; write --nodistortions or --distortions=false'),
    ('--bogus_flag=1', "inner.txt line 2: Unknown command line flag 'bogus_flag' (see --help)"),
])
def test_a_bad_value_in_a_flagfile_names_the_file_and_line(tmp_path, monkeypatch, line,
                                                             message):
    # Before: '--batch_size=x: takes an integer', which of the files and lines left unsaid.
    (tmp_path / 'outer.txt').write_text('--flagfile=inner.txt\n')
    (tmp_path / 'inner.txt').write_text('--model=trivial\n%s\n' % line)
    assert _error(tmp_path, monkeypatch, ['--batch_size=2', '--flagfile=outer.txt']) == message
    # The same flag on the command line names no file.
    assert _error(tmp_path, monkeypatch, [line]) == message.split(': ', 1)[1]


@pytest.mark.parametrize('argv, message', [
    (['--flagfile=g.txt', '--nogradient_clip'],
     "Unknown command line flag 'nogradient_clip'. Did you mean: gradient_clip ? (see --help)"),
    (['--batch_size=xyz', '--flagfile=g.txt'], '--batch_size=xyz: takes an integer (see --help)'),
])
def test_a_bad_flag_on_the_command_line_names_no_flagfile(tmp_path, monkeypatch, argv, message):
    # Before: 'g.txt line 2: ...', the flagfile's valid line of the same flag named instead.
    (tmp_path / 'g.txt').write_text('--batch_size=4\n--gradient_clip=1\n')
    assert _error(tmp_path, monkeypatch, argv) == message


def test_an_empty_flagfile_is_warned_about(tmp_path, monkeypatch, capsys):
    # Before: --flagfile=/dev/null (or a file of comments) ran the default run without a word.
    (tmp_path / 'comments.txt').write_text('# nothing yet\n\n')
    monkeypatch.chdir(tmp_path)
    p = flag_parsing.parse_flags(['prog', '--flagfile=/dev/null', '--flagfile=comments.txt',
                                  '--model=trivial'])
    assert p.model == 'trivial'
    assert capsys.readouterr().err.splitlines() == [
        'warning: --flagfile=%s holds no flag (an empty file, or only comments): nothing of the '
        'run is set by it' % name for name in ('/dev/null', 'comments.txt')]
    flag_parsing.parse_flags(['prog', '--flagfile=/dev/null'], quiet=True)
    assert capsys.readouterr().err == ''


def test_a_flagfile_that_can_be_read_once_keeps_its_flags(tmp_path):
    # A pipe (bash's --flagfile=<(...)): read by the line check, it was empty for absl, whose
    # run then ignored its flags.
    read, write = os.pipe()
    os.write(write, b'--model=lenet\n--batch_size=3\n')
    os.close(write)
    try:
        p = flag_parsing.parse_flags(['prog', '--flagfile=/dev/fd/%d' % read])
    finally:
        os.close(read)
    assert (p.model, p.batch_size) == ('lenet', 3)


_EXCLUDE = '--use_fp16 and --use_bf16 exclude each other; pick one.'


@pytest.mark.cli
def test_a_rule_broken_by_flags_of_a_flagfile_names_its_lines(tmp_path):
    # Before: 'error: --use_fp16 and --use_bf16 exclude each other; pick one.' with no word of
    # the flagfile, while a parse error in it named its line.
    flagfile = tmp_path / 'flags.txt'
    flagfile.write_text('--model=trivial\n--use_fp16\n# and bfloat16 too\n--use_bf16\n')
    status, out, err, loaded = test_cli_edges.run_main('--flagfile=%s' % flagfile)
    assert (status, loaded, out.strip()) == (2, False, '')
    assert err == 'error: %s lines 2 and 4: %s\n' % (flagfile, _EXCLUDE), err
    # A value out of its range, on one line of the file.
    flagfile.write_text('--model=trivial\n--gradient_clip=0\n')
    status, _, err, loaded = test_cli_edges.run_main('--flagfile=%s' % flagfile)
    assert (status, loaded) == (2, False)
    assert err.startswith('error: %s line 2: --gradient_clip must be > 0: ' % flagfile), err


@pytest.mark.cli
def test_a_rule_broken_on_the_command_line_keeps_its_text():
    status, out, err, loaded = test_cli_edges.run_main('--use_fp16', '--use_bf16')
    assert (status, loaded, out.strip(), err) == (2, False, '', 'error: %s\n' % _EXCLUDE)


def _origins(tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    return flag_parsing.parse_flags_located(['prog'] + argv)[1]


def test_a_rule_error_names_one_flagfile_only_when_its_flags_all_came_from_it(tmp_path,
                                                                            monkeypatch):
    (tmp_path / 'a.txt').write_text('--use_fp16\n--flagfile=b.txt\n--use_bf16\n')
    (tmp_path / 'b.txt').write_text('--staged_vars\n--nouse_bf16\n')
    origins = _origins(tmp_path, monkeypatch, ['--flagfile=a.txt'])
    assert origins.locate(_EXCLUDE) == 'a.txt lines 1 and 3: ' + _EXCLUDE  # a.txt's bf16 last
    staged = ('--staged_vars works only with --variable_update=parameter_server. Received: '
              'variable_update=\'replicated\'')
    # Flags it names that were not given (a default, a fix it advises) do not count.
    assert origins.locate(staged) == 'b.txt line 1: ' + staged
    # A flag given later on the command line wins: it is the command line's, and each flag
    # says where it came from (before: the message alone named neither place).
    later = _origins(tmp_path, monkeypatch, ['--flagfile=a.txt', '--nouse_bf16', '--use_bf16'])
    assert later.locate(_EXCLUDE) == (
        '--use_fp16 from a.txt line 1, --use_bf16 from the command line: ' + _EXCLUDE)
    # Flags of two files: each flag's file and line.
    (tmp_path / 'c.txt').write_text('--use_fp16\n')
    (tmp_path / 'd.txt').write_text('--use_bf16\n')
    two = _origins(tmp_path, monkeypatch, ['--flagfile=c.txt', '--flagfile=d.txt'])
    assert two.locate(_EXCLUDE) == (
        '--use_fp16 from c.txt line 1, --use_bf16 from d.txt line 1: ' + _EXCLUDE)
    # Every flag from the command line: the message as it is.
    assert _origins(tmp_path, monkeypatch, ['--use_fp16', '--use_bf16']).locate(
        _EXCLUDE) == _EXCLUDE
    # A message naming no flag given stays as it is.
    assert origins.locate('--eval needs a checkpoint') == '--eval needs a checkpoint'


def test_a_flagfile_saved_with_a_byte_order_mark_parses(tmp_path, monkeypatch):
    # Notepad's "UTF-8 with BOM": before, `flags.txt line 1 reads '\ufeff--model=trivial': a
    # flagfile holds one flag a line, ...`, which did not name the invisible mark. absl itself
    # opens a flagfile as plain UTF-8 and would take that line for a positional argument; the
    # command reads its flagfiles and drops the mark, nested ones too.
    (tmp_path / 'flags.txt').write_bytes(b'\xef\xbb\xbf--model=trivial\n--flagfile=inner.txt\n')
    (tmp_path / 'inner.txt').write_bytes(b'\xef\xbb\xbf--batch_size=3\n')
    monkeypatch.chdir(tmp_path)
    p = flag_parsing.parse_flags(['prog', '--flagfile=flags.txt'])
    assert (p.model, p.batch_size) == ('trivial', 3)


@pytest.mark.parametrize('data, message', [
    (b'--batch_size=2\n\xef\xbb\xbf--model=trivial\n',
     'flags.txt line 2 starts with a UTF-8 byte-order mark (U+FEFF, invisible in most editors: '
     'files joined by cat?); delete it (absl would take this line as a positional argument)'),
    (b'\xff\xfe-\x00-\x00m\x00', '--flagfile=flags.txt is UTF-16 text (it starts with a UTF-16 '
     'byte-order mark: Notepad\'s "Unicode"); save it as UTF-8'),
    (b'\xef\xbb\xbf--model=trivial\n--label=caf\xe9\n', '--flagfile=flags.txt is not UTF-8 text '
     '(byte 0xe9 at position 30); save it as UTF-8'),  # the file's offset, its mark counted
])
def test_a_byte_order_mark_elsewhere_is_named(tmp_path, monkeypatch, data, message):
    (tmp_path / 'flags.txt').write_bytes(data)
    assert _error(tmp_path, monkeypatch, ['--flagfile=flags.txt']) == message
