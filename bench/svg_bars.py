"""Horizontal bar charts as plain SVG text, for the generated performance page.

Written by hand rather than with matplotlib so that the same data always gives the same bytes
(tests/test_docs.py compares the committed files with what the generator writes, on any
machine and any plotting library's version) and the page's images need no extra package.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

_ROW = 22          # px per bar
_LABEL = 300       # px for the labels on the left
_PLOT = 360        # px for the bars
_VALUE = 70        # px for the value on the right of a bar
_TOP, _BOTTOM = 34, 30


def bar_chart(title: str, rows: list[tuple[str, float]], *, unit: str = 'x',
              reference: float | None = 1.0, reference_label: str = '') -> str:
    """An SVG document: one horizontal bar per row, its value printed beside it.

    Args:
      title: the chart's title (first line).
      rows: (label, value) pairs, drawn top to bottom; values >= 0.
      unit: appended to each printed value ('x' for ratios, '' for plain numbers).
      reference: a value marked with a dashed vertical line (1.0: parity), or None.
      reference_label: the text under that line.

    Returns:
      The SVG text (UTF-8, ending with a newline).

    Raises:
      ValueError: no rows, or a negative value.
    """
    if not rows:
        raise ValueError('a bar chart needs at least one row')
    if any(value < 0 for _, value in rows):
        raise ValueError('bar values must be >= 0: %r' % (rows,))
    top = max([value for _, value in rows] + ([reference] if reference else []))
    scale = _PLOT / (top * 1.05 if top > 0 else 1.0)
    width = _LABEL + _PLOT + _VALUE
    height = _TOP + _ROW * len(rows) + _BOTTOM
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">' % (
               width, height, width, height),
           '<title>%s</title>' % escape(title),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="8" y="20" font-size="14" font-weight="bold">%s</text>' % escape(title)]
    for i, (label, value) in enumerate(rows):
        y = _TOP + i * _ROW
        bar = value * scale
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (
            _LABEL - 8, y + 15, escape(label)))
        out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="#4878a8"/>' % (
            _LABEL, y + 4, bar, _ROW - 8))
        out.append('<text x="%.1f" y="%d">%.2f%s</text>' % (_LABEL + bar + 4, y + 15, value,
                                                            escape(unit)))
    if reference:
        x = _LABEL + reference * scale
        bottom = _TOP + _ROW * len(rows)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c04040" '
                   'stroke-dasharray="4,3"/>' % (x, _TOP - 4, x, bottom + 4))
        if reference_label:
            out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#c04040">%s</text>'
                       % (x, bottom + 20, escape(reference_label)))
    out.append('</svg>')
    return '\n'.join(out) + '\n'
