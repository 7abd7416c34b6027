"""A run's graph choices (`Choices`: how each site of its training graph is built) and what
they read as: the header's line (`brief`), the table (`table`: --print_graph_choices,
--calibrate), the results JSON (`Choices.summary`) and why a forced choice changes nothing
(`idle_reason`). graph/graph_choices.py measures and resolves them (and re-exports these).

A site is a distinct shape (a fast_paths.Conv1x1 or a memory_forms.Site); a place is where
the run's training graph has one (resnet20's 3 residual-join shapes are at 9 places): the
header and the results JSON count places, the table lists the shapes with their places.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

from .. import cnn_util
from ..models import fast_paths, memory_forms
from ..params import graph_choice_flag

#: A shape is built as a MatMul where that form's training time is below this fraction of
#: the convolution's (a margin for the probe's noise on a shared machine).
FASTER_FACTOR = 0.90
#: The measured forms of a 1x1 convolution: the whole op as a MatMul, or only its filter
#: gradient (models/fast_paths.py conv1x1_matmul, conv1x1_filter_matmul).
FORMS = ('matmul', 'filter_matmul')
#: The header's line of the choices (`brief`) fits in this many characters after its indent.
BRIEF_WIDTH = 87
#: The `when` of a measurement on a busy host (Choices.unkept): its table's 'on' is what it
#: would build.
BUSY_WHEN = 'measured on a busy host, not stored or used'


def forms_of(site) -> tuple[str, ...]:
    """The forms a site can be built in besides today's: FORMS for a fast_paths.Conv1x1, else
    the memory_forms.Site's own."""
    return FORMS if isinstance(site, fast_paths.Conv1x1) else site.forms()


def choice_name(site, form: str) -> str:
    """The --graph_choices name of building `site` (a Conv1x1 or a memory_forms.Site) in
    `form`."""
    if isinstance(site, fast_paths.Conv1x1):
        return site.choice if form == 'matmul' else 'conv1x1_filter_matmul'
    return memory_forms.choice_name(site.kind, form)


class Choices(NamedTuple):
    """A run's graph choices.

    Attributes:
      mode: 'measured', 'off' or the frozenset of forced choice names.
      factors: measured: {(site, form of forms_of(site)): that form's time / today's, forward
        and gradients}; a site is a fast_paths.Conv1x1 or a memory_forms.Site.
      when: 'measured here', 'calibrated <date>', or '' (nothing measured).
      spreads: {(site, form): the factor's spread over the probe's passes} (absolute, in
        factor units): a form is chosen only where it is faster by more than its spread.
      note: a line for the header when nothing is measured ('' otherwise).
      forced_sites: forced: {choice name: the places of the run's graph it changes} (0: it
        changes nothing here, e.g. relu_float32 in a float32 graph, an XLA form inside
        --xla_compile's cluster); None where not counted.
      places: {site: the places of the run's training graph it is at} (graph_choices.
        site_places); a site not in it counts as one place.
      unkept: the Choices of a measurement this run made on a busy host (not stored, not
        used: its `when` says so), for the note and the table; None.
      idle: forced: {choice name: why it changes nothing here} (`idle_reason`).
    """
    mode: object
    factors: dict
    when: str
    spreads: dict = {}
    note: str = ''
    forced_sites: dict | None = None
    places: dict = {}
    unkept: object = None
    idle: dict = {}

    def decide(self, site) -> str | None:
        """How `site` is built: a form of forms_of(site) ('matmul', 'filter_matmul'; 'xla',
        'float32') or None (today's ops). Measured: the fastest form below FASTER_FACTOR
        and faster by more than its spread (1 - factor > spread); forced: the first form
        whose choice name is given."""
        if self.mode == graph_choice_flag.OFF:
            return None
        forms = forms_of(site)
        if self.mode == graph_choice_flag.MEASURED:
            got = [(self.factors[site, form], form) for form in forms
                   if (site, form) in self.factors and self.factors[site, form] < FASTER_FACTOR
                   and 1 - self.factors[site, form] > self.spreads.get((site, form), 0.0)]
            best = min(got, default=None)
            return best[1] if best is not None else None
        for form in forms:
            if choice_name(site, form) in self.mode:
                return form
        return None

    def count(self, site) -> int:
        """The places of the run's graph `site` is at (1 where not counted)."""
        return self.places.get(site, 1)

    def changed(self) -> tuple[int, int]:
        """Measured: (places built in another form, places measured)."""
        sites = list(dict.fromkeys(s for s, _ in self.factors))
        return (sum(self.count(s) for s in sites if self.decide(s)),
                sum(self.count(s) for s in sites))

    def summary(self) -> dict:
        """The choices as JSON-ready values (the results JSON's plan.graph_choices, the full
        table): mode ('measured', 'off' or the sorted forced names), when, and one row per
        measured site and form: {'choice': its --graph_choices name, 'site': e.g.
        '16x56x56x64->256', 'places': the places of the graph it is at, 'factor': that
        form's time / today's, 'built': True where the site is built in that form}; forced:
        'forced_sites', {name: the places it changes}, and 'forced_shapes', {name: the
        distinct shapes among them}."""
        mode = self.mode if isinstance(self.mode, str) else sorted(self.mode)
        rows = [{'choice': choice_name(s, form), 'site': s.describe(), 'places': self.count(s),
                 'factor': f, 'built': self.decide(s) == form}
                for (s, form), f in self.factors.items()]
        out = {'mode': mode, 'when': self.when, 'sites': rows}
        if self.forced_sites is not None:
            out['forced_sites'] = dict(sorted(self.forced_sites.items()))
            out['forced_shapes'] = {name: len(self.forced_rows(name)) if n else 0
                                    for name, n in out['forced_sites'].items()}
        return out

    def forced_rows(self, name: str) -> list:
        """Forced: the sites (of `places`) built in choice `name`, in build order."""
        return [s for s in self.places if self.decide(s)
                and choice_name(s, self.decide(s)) == name]

    def chooser(self, phase_train: bool):
        """The fast_paths.BuildOptions `choose` of a tower: `decide` for a training graph whose
        choices are not off, else None (today's graph)."""
        return self.decide if phase_train and self.mode != graph_choice_flag.OFF else None


def idle_reason(name: str, places, model: str, *, float32_norm: bool = False,
                xla_compile: bool = False, float32_conv_gradients: bool = False) -> str:
    """Why forced choice `name` changes no place of the run, e.g. 'resnet20 has no 1x1
    convolution of stride 1' (cifar resnets shortcut by pooling and padding).

    Args:
      name: a --graph_choices name; places: the run's sites (graph_choices.site_places);
      model: the model's name.
      float32_norm: batch norm and its ReLU run in float32 (graph/precision.
        float32_norm_and_pool): no ReLU site in the dtype.
      xla_compile: --xla_compile (the tower is one XLA cluster already).
      float32_conv_gradients: the run computes convolution gradients in float32 (then
        conv1x1_filter_matmul keeps the convolution).
    """
    if name in ('conv1x1_matmul', 'shortcut_matmul', 'conv1x1_filter_matmul'):
        stride = {'conv1x1_matmul': 1, 'shortcut_matmul': 2}.get(name)
        convs = [s for s in places if isinstance(s, fast_paths.Conv1x1)
                 and stride in (None, s.stride)]
        if not convs:
            return '%s has no 1x1 convolution%s' % (model, ' of stride %d' % stride if stride
                                                    else '')
        if float32_conv_gradients:
            return 'this run computes convolution gradients in float32, which keeps the filter ' \
                   'gradient a convolution'
        return 'conv1x1_matmul and shortcut_matmul, also given, build its sites whole'
    kind, form = name.split('_', 1)
    found = [s for s in places if isinstance(s, memory_forms.Site) and s.kind == kind]
    if not found:
        if kind == 'relu' and float32_norm:
            return 'its batch norms and their ReLUs run in float32 (no native float16 here)'
        return '%s has no %s' % (model, 'ReLU after a batch norm' if kind == 'relu' else
                                 'post-activation residual join (ResNet v1\'s)')
    if form == 'xla' and xla_compile:
        return 'an XLA form adds nothing inside --xla_compile\'s cluster'
    if form == 'float32' and all(s.dtype == 'float32' for s in found):
        return 'the float32 forms change only bfloat16/float16 graphs'
    return '%s_xla, also given, builds its sites' % kind


def _forced_items(choices: Choices) -> list[str]:
    """'relu_xla 10 places' / 'relu_float32 (no site)' / 'conv1x1_matmul' (not counted)."""
    counts = choices.forced_sites
    return [name if counts is None else
            '%s %s' % (name, cnn_util.counted(counts[name], 'place')) if counts.get(name)
            else '%s (no site)' % name for name in sorted(choices.mode)]


def brief(choices: Choices, width: int = BRIEF_WIDTH) -> list[str]:
    """The header's line of the choices, at most `width` characters (none when nothing is
    chosen or measured), e.g. 'graph choices measured here: 12 of 53 places changed
    (conv1x1_matmul 6, residual_xla 6); all: --print_graph_choices' or 'graph choices forced
    (--graph_choices): relu_xla 10 places, residual_xla 9 places'. What does not fit is left
    out: the hint first, then the per-choice counts; the full table (`table`) is in the
    header with --print_graph_choices, and in the results JSON (plan.graph_choices:
    Choices.summary)."""
    if choices.mode == graph_choice_flag.OFF:
        return []
    tail = '; all: --print_graph_choices'
    if choices.mode != graph_choice_flag.MEASURED:
        items, head = _forced_items(choices), 'graph choices forced (--graph_choices): '
        total = sum((choices.forced_sites or {}).values())
        count = '%d choices%s' % (len(items), ', %s changed' % cnn_util.counted(total, 'place')
                                  if choices.forced_sites is not None else '')
        texts = (head + ', '.join(items), 'graph choices forced: ' + ', '.join(items),
                 head + count + tail, head + count)
        return [next((t for t in texts if len(t) <= width), texts[-1][:width])]
    if not choices.factors:
        return [choices.note[:width]] if choices.note else []
    built: dict = {}
    for s in dict.fromkeys(s for s, _ in choices.factors):
        if choices.decide(s):
            name = choice_name(s, choices.decide(s))
            built[name] = built.get(name, 0) + choices.count(s)
    changed, total = choices.changed()
    counts = ', '.join('%s %d' % (name, built[name]) for name in graph_choice_flag.CHOICES
                       if name in built)
    head = 'graph choices %s: %d of %d places changed' % (choices.when, changed, total)
    detail = ' (%s)' % counts if counts else ''
    for text in (head + detail + tail, head + detail, head + tail, head):
        if len(text) <= width:
            return [text]
    return [head[:width]]


def _site_text(choices: Choices, site, factor: float | None = None) -> str:
    """'16x32x32x16 0.75x (3 places)': a site, its factor, its places where more than one."""
    n = choices.count(site)
    return '%s%s%s' % (site.describe(), ' %.2fx' % factor if factor is not None else '',
                       ' (%d places)' % n if n > 1 else '')


def table(choices: Choices, width: int = BRIEF_WIDTH) -> list[str]:
    """--print_graph_choices: the full table of the choices after a title line, wrapped at
    `width` characters. Measured: for each choice name the sites built in it ('on') and the
    others ('off'), each with its factor and places; without factors, a busy measurement's
    (`Choices.unkept`: 'on' what it would build) or none. Forced: each name with the sites it
    changes and their places, or why it changes none (Choices.idle); forced choices that were
    not counted: the brief line."""
    if choices.mode == graph_choice_flag.OFF:
        return []
    if choices.mode != graph_choice_flag.MEASURED:
        return _forced_table(choices, width)
    if not choices.factors:
        return table(choices.unkept, width) if choices.unkept is not None else []
    would = '; on: what it would build' if choices.when == BUSY_WHEN else ''
    lines = textwrap.wrap('graph choices %s (time vs today\'s form, forward + gradients%s):'
                          % (choices.when, would), width, subsequent_indent='  ')
    for name in graph_choice_flag.CHOICES:
        found = [(s, form, f) for (s, form), f in choices.factors.items()
                 if choice_name(s, form) == name]
        for state, rows in (('on', [r for r in found if choices.decide(r[0]) == r[1]]),
                            ('off', [r for r in found if choices.decide(r[0]) != r[1]])):
            if found and (rows or state == 'on'):
                text = '%s %s %s' % (name, state, ', '.join(
                    _site_text(choices, s, f) for s, _, f in rows) or 'none')
                lines += textwrap.wrap(text, width, initial_indent='  ',
                                       subsequent_indent='      ')
    return lines


def _forced_table(choices: Choices, width: int) -> list[str]:
    """`table` of forced choices: 'graph choices forced (--graph_choices), the places each
    changes:' and a row per name."""
    if choices.forced_sites is None:  # not counted (no model's sites): the names
        return brief(choices, width=1 << 20)
    lines = ['graph choices forced (--graph_choices), the places each changes:']
    for name in sorted(choices.mode):
        rows = choices.forced_rows(name) if choices.forced_sites.get(name) else []
        text = '%s on %s' % (name, ', '.join(_site_text(choices, s) for s in rows) or
                             'none' + (': %s' % choices.idle[name] if name in choices.idle
                                       else ''))
        lines += textwrap.wrap(text, width, initial_indent='  ', subsequent_indent='      ')
    return lines


def describe(choices: Choices) -> list[str]:
    """The header's lines of the choices (none when nothing is chosen or measured), e.g.
    'graph choices measured here (time vs today's form, forward + gradients):
    conv1x1_matmul on 16x14x14x1024->256 0.81x; off 16x56x56x64->256 1.12x; ...' or
    'graph choices forced (--graph_choices): conv1x1_matmul'. A shape is listed 'on' under the
    form built, 'off' under each other form with its factor."""
    if choices.mode == graph_choice_flag.OFF:
        return []
    if choices.mode != graph_choice_flag.MEASURED:
        return brief(choices, width=1 << 20)  # the forced names, each with its places
    if not choices.factors:
        return [choices.note] if choices.note else []
    parts = []
    for name in graph_choice_flag.CHOICES:
        rows = [(s, form, f) for (s, form), f in choices.factors.items()
                if choice_name(s, form) == name]
        if not rows:
            continue
        on = ['%s %.2fx' % (s.describe(), f) for s, form, f in rows if choices.decide(s) == form]
        off = ['%s %.2fx' % (s.describe(), f) for s, form, f in rows if choices.decide(s) != form]
        parts.append('%s on %s%s' % (name, ', '.join(on) or 'none',
                                     '; off ' + ', '.join(off) if off else ''))
    return ['graph choices %s (time vs today\'s form, forward + gradients): %s' % (
        choices.when, '; '.join(parts))]
