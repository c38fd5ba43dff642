"""Reading the files a person writes or keeps: gates files and saved documents.

Both are value-free, and small: each is read within its size limit, and never
named by path in an error.
"""

from __future__ import annotations

from chartscore.documents import Document, _strict_json, load_document, load_rendered_document
from chartscore.documents.agreement import Agreement
from chartscore.documents.gates import MAX_GATES_BYTES, Gate, parse_gates_bytes
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.hints import document_explained, format_explained, gates_explained
from chartscore.io.inputs import InputPath, input_path, open_input, read_whole

__all__ = ["load_document_file", "load_gates", "load_rendered_file", "read_document_bytes"]


def load_gates(path: InputPath) -> tuple[Gate, ...]:
    """Read and check a gates file (TOML, UTF-8, at most 1 MiB); see docs/formats.md.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` or ``not_utf8`` (gates), or any code of
            :func:`chartscore.documents.gates.parse_gates`. Never names the path.
    """
    data = read_whole(path, InputKind.GATES, MAX_GATES_BYTES)
    refused: ChartscoreError | None = None
    try:
        return parse_gates_bytes(data)
    except ChartscoreError as error:
        refused = error
    raise gates_explained(refused, data)  # outside the handler: nothing chained


def read_document_bytes(path: InputPath, source: InputKind = InputKind.REPORT) -> bytes:
    """A saved document's bytes (at most 16 MiB), for a reader that checks its shape.

    Read like every input (a path or standard input, regular files only, gzip
    decompressed), in chunks that a :class:`~chartscore.documents._strict_json.DocumentScanner`
    checks as they come: reading stops at the first chunk that is not UTF-8,
    does not open an object, nests too deep or passes the size limit, so a
    gzip bomb costs little more than that chunk.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` (``source``: report, or partial) or ``invalid_report``.
            Never names the path.
    """
    where = input_path(path, source)
    scanner = _strict_json.DocumentScanner()
    chunks: list[bytes] = []
    failed = False
    refused: ChartscoreError | None = None
    with open_input(where, source) as stream:
        while True:
            try:
                chunk = stream.read(_strict_json.SCAN_CHUNK_BYTES)
            except OSError:
                failed = True
                break
            if not chunk:
                break
            chunks.append(chunk)
            try:
                scanner.feed(chunk)  # raises as soon as the bytes cannot be a document
            except ChartscoreError as error:
                refused = error
                break
    if failed:  # raised outside the handler: no chained reader message
        raise ChartscoreError(ErrorCode.FILE_UNREADABLE, input=source)
    if refused is None:
        try:
            scanner.finish()
        except ChartscoreError as error:
            refused = error
    if refused is not None:  # what the bytes look like (JSON Lines, a gates file), never them
        raise document_explained(refused, b"".join(chunks), source)
    return b"".join(chunks)


def load_document_file(path: InputPath) -> Document:
    """Read a saved document (at most 16 MiB); see :mod:`chartscore.documents`.

    Raises:
        ChartscoreError: ``invalid_path``, ``file_unreadable``,
            ``file_too_large`` (report), ``unknown_report_format`` or
            ``invalid_report``. Never names the path.
    """
    return load_document(read_document_bytes(path))


def load_rendered_file(path: InputPath) -> Document | Agreement:
    """A saved document or agreement (``render``, ``gate``), read as :func:`read_document_bytes`.

    Raises:
        ChartscoreError: as :func:`read_document_bytes` and
            :func:`~chartscore.documents.load_rendered_document`; a partial or a ledger
            (told by its ``format``, never shown) is ``unknown_report_format`` with a hint.
    """
    data = read_document_bytes(path)
    refused: ChartscoreError | None = None
    try:
        return load_rendered_document(data)
    except ChartscoreError as error:
        refused = error
    raise format_explained(refused, data, InputKind.REPORT)  # outside the handler
