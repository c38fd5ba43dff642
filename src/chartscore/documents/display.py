"""A document's data frame and notebook display, supplied by the renderers above.

Every document has ``to_pandas()`` and ``_repr_html_()`` (the method Jupyter looks for).
Both are made by the render layer (:mod:`chartscore.render.frames`,
:func:`chartscore.render.html.notebook_html`), which sits above the documents
(docs/architecture.md): a document may not import it, not even inside a method. So the
renderers fill the two hooks here, from ``chartscore/__init__`` (the public API, above
every layer), and the methods call them. ``chartscore`` is always imported before any
document (Python imports a package before its modules), so the hooks are always filled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chartscore.errors import ChartscoreError, ErrorCode

__all__ = ["Displayed", "frame", "html", "register"]

_Hook = Callable[[Any], Any]
_HOOKS: dict[str, _Hook] = {}


def register(*, frame: Callable[[Any], Any], html: Callable[[Any], str]) -> None:
    """Install the render layer's frame builder and notebook HTML (``chartscore/__init__``)."""
    _HOOKS["frame"] = frame
    _HOOKS["html"] = html


def frame(document: object) -> Any:
    """The document's ``pandas.DataFrame`` (:func:`chartscore.render.frames.to_pandas`).

    Raises:
        ChartscoreError: ``missing_dependency`` without pandas; ``internal_error`` if the
            hooks were never registered (``chartscore`` not imported: cannot happen).
    """
    hook = _HOOKS.get("frame")
    if hook is None:
        raise ChartscoreError(ErrorCode.INTERNAL_ERROR)
    return hook(document)


def html(document: object) -> str | None:
    """The document's notebook HTML, or None (plain ``repr``) if no renderer is registered."""
    hook = _HOOKS.get("html")
    return None if hook is None else str(hook(document))


class Displayed:
    """The notebook methods every document has: ``to_pandas()`` and ``_repr_html_()``."""

    __slots__ = ()

    def to_pandas(self) -> Any:
        """This document's estimates as a tidy ``pandas.DataFrame``.

        One row per slice, metric and label, as ``chartscore render --format csv`` writes
        them, typed: counts ``Int64``, rates and intervals ``float64``; a withheld number
        is missing, with its published range beside it (:mod:`chartscore.render.frames`
        lists the columns; docs/reports.md, "Notebooks"). Also
        ``chartscore.to_pandas(document)``.

        Raises:
            ChartscoreError: ``missing_dependency`` without pandas:
                ``pip install 'chartscore[pandas]'``.
        """
        return frame(self)

    def _repr_html_(self) -> str | None:
        # A notebook's rich display: the HTML renderer's tables (no script, no external
        # reference), made by the render layer through the hook above.
        return html(self)
