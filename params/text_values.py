"""Flag values are text in UTF-8: a value that is not is refused before the run starts.

On POSIX, Python reads a command-line argument that is not valid UTF-8 (`--label="x$(printf
'\\xff')y"`) as text holding a lone surrogate for each undecodable byte (PEP 383: 'x\\udcffy').
Such a value cannot be written as UTF-8: the results database's text columns (SQLite binds
text as UTF-8), TensorFlow's file names (`compat.as_bytes`) and the printed header all fail
on it, the database at the end of a finished run (issue: the run's result was lost). So every
text value of a flag (a string, a path, a list's items) must encode to UTF-8; the check runs
with the other per-flag checks (params.check_ranges), before TensorFlow loads, and its usage
error names the flag, the bytes and the fix.
"""

from __future__ import annotations

import os


def _texts(value) -> list[str]:
    """The text parts of a flag's value: a string, or a list's strings."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def not_utf8(text: str) -> bool:
    """True when the bytes `text` was read from are not UTF-8: it holds a lone surrogate that
    the file system encoding does not turn back into bytes forming UTF-8. Under an ASCII
    locale without Python's UTF-8 mode, a UTF-8 argument ('données') is read with a surrogate
    per non-ASCII byte; its bytes are UTF-8, so it is not refused here (the paths' own checks
    say what such a locale cannot do: preflight/output_paths.py)."""
    try:
        text.encode('utf-8')
        return False
    except UnicodeEncodeError:
        pass
    try:
        os.fsencode(text).decode('utf-8')
    except (UnicodeEncodeError, UnicodeDecodeError):
        return True
    return False


def as_text(text: str) -> str:
    """`text` as the text its bytes mean in UTF-8: an argument read under an ASCII locale
    without Python's UTF-8 mode ('caf\\udcc3\\udca9', the bytes of 'café' each read as a lone
    surrogate, PEP 383) becomes 'café', which a query can bind (SQLite binds text as UTF-8)
    and which matches what a run stored (history/store.py bindable reads its flag values so).
    Text that is UTF-8 already, or whose bytes are not UTF-8 (`not_utf8`: refused before
    this), is returned as it is."""
    try:
        text.encode('utf-8')
        return text
    except UnicodeEncodeError:
        pass
    try:
        return os.fsencode(text).decode('utf-8')
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def as_bytes_shown(text: str) -> str:
    """`text` as the bytes it came from, for a message: "b'x\\xffy'" (an undecodable byte
    of an argument, PEP 383), or with other lone surrogates escaped ('x\\ud800y')."""
    try:
        return repr(text.encode('utf-8', 'surrogateescape'))
    except UnicodeEncodeError:
        return repr(text.encode('utf-8', 'backslashreplace').decode('ascii', 'replace'))


def problem(values: dict) -> str | None:
    """The usage error of the first flag whose value is not UTF-8 text, or None.

    Args:
      values: {flag name: value} (a Params' fields, in table order).

    Returns:
      "--label is not UTF-8 text (received: b'x\\xffy'); ..." naming the fix, or None.
    """
    for name, value in values.items():
        for text in _texts(value):
            if not_utf8(text):
                return ('--%s is not UTF-8 text (received: %s): the results database, the '
                        'results JSON and TensorFlow keep text as UTF-8; give the value in '
                        'UTF-8 (convert it, e.g. with iconv -t UTF-8) or in ASCII'
                        % (name, as_bytes_shown(text)))
    return None
