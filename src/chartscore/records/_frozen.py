"""Fast construction of frozen, slotted attrs records.

A frozen attrs class refuses ``record.name = value``, so the ``__init__``
attrs generates sets each field through ``object.__setattr__``: a general
route (a call, a look-up of the name along the class's MRO, then the slot's
descriptor), several times the cost of a plain slot store. Building millions
of records, that and the converters and ``__attrs_post_init__`` are most of
the time a record takes.

chartscore's records stay attrs frozen, slotted classes (``attrs.has``,
``attrs.fields``, ``attrs.evolve``, ``attrs.asdict``, equality, hashing and the
frozen ``__setattr__`` are attrs'), declared with ``init=False`` and given a
hand-written ``__init__`` that checks every argument in one pass and then
stores each field with its slot's own descriptor: :func:`slot_setters` looks
the descriptors up once, when the module is imported. A slot descriptor's
``__set__`` is what ``object.__setattr__`` ends in, minus the look-up; it works
on subclasses too (they inherit the slots), so subclassing needs no other
route. Records define ``__reduce__`` to pickle and copy by calling the class
again, so a loaded record is validated like a new one. tests/test_record_api.py
pins all of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs


def slot_setters(record: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The ``__set__`` of each slot of the attrs record ``record``, in the order of ``names``.

    Also removes ``__attrs_init__`` (attrs' own initializer for classes
    declared with ``init=False``, which validates nothing): a record that
    exists must have passed its checks, so it has one constructor.

    Raises:
        TypeError: ``record`` is not a slotted attrs class whose fields are
            ``names`` (a programming error).
    """
    fields = tuple(field.name for field in attrs.fields(record))
    if fields != names or "__slots__" not in vars(record):
        raise TypeError("a record must be a slotted attrs class with these fields")
    if "__attrs_init__" in vars(record):
        delattr(record, "__attrs_init__")
    return tuple(vars(record)[name].__set__ for name in names)
