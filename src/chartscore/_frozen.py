"""Fast construction of frozen, slotted attrs records.

A frozen attrs class refuses ``record.name = value``, so the ``__init__``
attrs generates sets each field through ``object.__setattr__``: a general
route, several times the cost of a plain slot store. Building millions of
records, that is most of the time a record takes.

chartscore's records are built another way. Each record class (declared with
``init=False``) derives from a plain *slots class* that holds the same slots
and has no ``__setattr__`` of its own. The record's ``__new__`` validates its
arguments, makes an instance of the slots class, fills it with plain stores,
and then turns it into the record by assigning ``__class__`` (allowed: both
classes have the same layout, the record class adds no slot). attrs still
generates everything else (``attrs.fields``, equality, hashing, ``repr``
hooks, the frozen ``__setattr__``), so the records keep their public
behaviour; ``__reduce__`` pickles and copies a record by calling the class
again, so a loaded record is validated like a new one. tests/test_records.py
pins all of it.
"""

from __future__ import annotations

from typing import Any, TypeVar

_R = TypeVar("_R")


def seal(record: type, slots: type) -> None:
    """Check that ``record`` can be built from ``slots`` instances; leave it one constructor.

    attrs adds ``__attrs_init__`` (its own initializer, which validates
    nothing) to a class declared with ``init=False``. Nothing needs it, and a
    record that exists must have passed its checks, so it is removed.

    Raises:
        TypeError: ``record`` adds slots to ``slots`` or does not derive from it
            (a programming error).
    """
    if record.__bases__ != (slots,) or vars(record).get("__slots__") != ():
        raise TypeError("a record must add no slot to its slots class")
    if "__attrs_init__" in vars(record):
        delattr(record, "__attrs_init__")


def subclass_record(cls: type[_R], names: tuple[str, ...], values: tuple[Any, ...]) -> _R:
    """A new instance of a subclass of a record, its fields set the general way.

    A subclass may add slots or a ``__dict__``, so it cannot be made from the
    slots class; this route is slower and used only for subclasses.
    """
    record = object.__new__(cls)
    for name, value in zip(names, values, strict=True):
        object.__setattr__(record, name, value)
    return record
