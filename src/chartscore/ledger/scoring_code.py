"""A digest of the code that decides a document's numbers: the ledger's ``code_hash``.

A version number says which release scored a run, not whether the code was edited
since (a checkout, a patched install). The code hash says exactly that. It covers
every Python source file of the installed ``chartscore`` package except those that
cannot change a report's, shared report's or comparison's numbers:

- ``cli/`` (the command line), ``render/`` (tables, Markdown, CSV, HTML),
  ``importers/`` (they write inputs, which have identities of their own) and
  ``ledger/`` (this package: it records documents, it makes none).

Definition (docs/ledger.md#the-code-hash): the files are taken in the order of
their POSIX paths relative to the package (``documents/canonical_json.py``,
``scoring/scorer.py``, ...); each contributes its path (UTF-8), a zero byte, its length in bytes in
decimal, a zero byte and its bytes; the hash is ``sha256:`` and the SHA-256 of all
of that, in hex. A test recomputes it from this definition.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from importlib import resources
from importlib.abc import Traversable
from typing import Final

EXCLUDED: Final = ("cli", "render", "importers", "ledger")
"""The package's folders whose code cannot change a document's numbers."""


def code_files(root: Traversable | None = None) -> list[tuple[str, bytes]]:
    """``(relative POSIX path, bytes)`` of every hashed file, in hash order.

    Args:
        root: The package folder (default: the installed ``chartscore``).
    """
    base = resources.files("chartscore") if root is None else root
    found = [(path, entry.read_bytes()) for path, entry in _python_files(base, "")]
    return sorted(found)


def _python_files(folder: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for entry in folder.iterdir():
        path = prefix + entry.name
        if entry.is_dir():
            if entry.name != "__pycache__" and (prefix or entry.name not in EXCLUDED):
                yield from _python_files(entry, path + "/")
        elif entry.name.endswith(".py"):
            yield path, entry


def code_hash_of(root: Traversable) -> str:
    """The code hash of the package folder ``root`` (for tests and for checking a copy)."""
    digest = hashlib.sha256()
    for path, data in code_files(root):
        digest.update(path.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
        digest.update(data)
    return "sha256:" + digest.hexdigest()


@functools.cache
def code_hash() -> str:
    """The installed chartscore's code hash, ``sha256:`` and 64 hex digits (computed once)."""
    return code_hash_of(resources.files("chartscore"))
