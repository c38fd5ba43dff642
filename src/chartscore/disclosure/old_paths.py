"""Old paths of names that moved to the audit package (issue 36's one audit).

The audit imports the modules whose joint models it attacks, so those modules cannot import
the audit back: their old names are looked up in the audit when first asked (a module's
``__getattr__``, PEP 562), which keeps ``from chartscore.disclosure.releases import
audit_releases`` working without an import cycle.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection


def moved_to(module: str, home: str, names: Collection[str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``module`` that reads ``names`` from ``home``."""
    moved = frozenset(names)

    def lookup(name: str) -> object:
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    return lookup


__all__ = ["moved_to"]
