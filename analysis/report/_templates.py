"""The report's templates and the files inlined into it, shipped with the package under
``analysis/report/templates/``: Jinja2 templates with autoescape on (``report.html``,
``section.html``, ``table.html``, ``found.html``), the stylesheet ``report.css`` and the script
that draws the charts, ``charts.js``.

The code computes what the report says (the figures, the tables, the sentences); the
templates lay it out. Every value a template writes is escaped, unless it is
:class:`markupsafe.Markup`: HTML the code built from these templates, a chart's JSON made safe
inside a ``<script>`` element, or a file of this folder.
"""

from __future__ import annotations

from functools import cache
from html import escape
from importlib.resources import files

import jinja2
from markupsafe import Markup

_PACKAGE = "analysis.report"
_FOLDER = "templates"


def _escaped(value: object) -> object:
    """A value as a template writes it: :class:`~markupsafe.Markup` (anything with
    ``__html__``) as it is, anything else escaped by :func:`html.escape`, so the report keeps
    writing ``&#x27;`` and ``&quot;`` where Jinja2's own escaping would write ``&#39;`` and
    ``&#34;`` (the same characters are escaped either way)."""
    if hasattr(value, "__html__"):
        return value
    return Markup(escape(str(value)))


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(_PACKAGE, _FOLDER),
        autoescape=True,
        finalize=_escaped,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )


def render(template: str, /, **context: object) -> Markup:
    """The template named ``template`` filled in with ``context``: HTML, every value in it
    escaped."""
    return Markup(_environment().get_template(template).render(context))


@cache
def inlined(name: str) -> Markup:
    """A file of the templates' folder as it is (the stylesheet, the charts' script), to be
    inlined in the document."""
    text = files(_PACKAGE).joinpath(_FOLDER, name).read_text(encoding="utf-8")
    return Markup(text)
