"""Writing a benchmark's results: `<name>.json` and a markdown table `<name>.md`."""

import json
import os


def markdown_table(header: list[str], align: str, rows: list[list[str]]) -> str:
    """A markdown table; `align` has one letter per column: 'l' left, 'r' right."""
    lines = ['| %s |' % ' | '.join(header),
             '| %s |' % ' | '.join('---:' if a == 'r' else '---' for a in align)]
    lines += ['| %s |' % ' | '.join(cells) for cells in rows]
    return '\n'.join(lines)


def write_results(out_dir: str, name: str, data, markdown: str) -> None:
    """Writes out_dir/name.json (data) and out_dir/name.md (markdown), and prints the table."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name + '.json'), 'w') as f:
        json.dump(data, f, indent=2)
    with open(os.path.join(out_dir, name + '.md'), 'w') as f:
        f.write(markdown + '\n')
    print(markdown)
