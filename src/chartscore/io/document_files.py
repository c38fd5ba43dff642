"""Reading the files a person writes or keeps: gates files and saved documents.

Both are value-free, and small: each is read whole, within its size limit, and never
named by path in an error.
"""

from __future__ import annotations

from chartscore.documents import MAX_DOCUMENT_BYTES, Document, load_document
from chartscore.errors import InputKind
from chartscore.gates import MAX_GATES_BYTES, Gate, parse_gates_bytes
from chartscore.io.inputs import InputPath, read_whole

__all__ = ["load_document_file", "load_gates", "read_document_bytes"]


def load_gates(path: InputPath) -> tuple[Gate, ...]:
    """Read and check a gates file (TOML, UTF-8, at most 1 MiB); see docs/formats.md.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` or ``not_utf8`` (gates), or any code of
            :func:`chartscore.gates.parse_gates`. Never names the path.
    """
    return parse_gates_bytes(read_whole(path, InputKind.GATES, MAX_GATES_BYTES))


def read_document_bytes(path: InputPath) -> bytes:
    """A saved document's bytes (at most 256 MiB), for a reader that checks its shape.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable`` or
            ``file_too_large`` (report). Never names the path.
    """
    return read_whole(path, InputKind.REPORT, MAX_DOCUMENT_BYTES)


def load_document_file(path: InputPath) -> Document:
    """Read a saved report or comparison (at most 256 MiB); see :mod:`chartscore.documents`.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` (report), ``unknown_report_format`` or
            ``invalid_report``. Never names the path.
    """
    return load_document(read_document_bytes(path))
