"""The ledger of successive releases (``share --releases DIR``): inside only.

The folder holds one file per release that ``share`` made into it,
``release-0001.json``, ``release-0002.json``, ... Each is canonical JSON with
the shared report exactly as it was published and the sorted case ids behind
it (docs/disclosure.md#successive-releases). The case ids make the folder
patient-level data that never leaves (docs/privacy.md):

- the folder is created with mode ``0700`` and each file with ``0600``; an
  existing folder or file that group or others may read or write is refused
  (``file_exposed``), as are symbolic links and anything but regular files;
- a file is written atomically (a temporary file beside it, renamed), so the
  folder holds the old set of releases or the new one, never half a file;
- any other file in the folder (a file ``share`` did not write, a gap in the
  numbering, a file whose content or check does not match) is refused with
  ``not_a_release_ledger``: nothing is shared.

Errors name ``releases``, never a path, a case id or a byte of a file.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable
from typing import Final

import attrs

from chartscore.documents import _strict_json
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.inputs import InputPath, StandardInput, input_path
from chartscore.io.output import write_atomic
from chartscore.records._rules import is_case_id

FORMAT: Final = "chartscore.release"
FORMAT_VERSION: Final = 1
FOLDER_MODE: Final = 0o700
FILE_MODE: Final = 0o600
MAX_RELEASES: Final = 9999
_NAME: Final = re.compile(r"release-([0-9]{4})\.json")
_EXPOSED_BITS: Final = 0o077
_MAX_BYTES: Final = 1 << 30
_KEYS: Final = frozenset({"format", "format_version", "release", "case_ids", "shared", "check"})


@attrs.frozen(repr=False)
class Release:
    """One earlier release: its number, the shared report and its case ids (inside only).

    Its repr shows the number only: never a case id.
    """

    number: int
    shared: SharedReport
    case_ids: frozenset[str]

    def __repr__(self) -> str:
        return f"Release({self.number})"


def _invalid() -> ChartscoreError:
    return ChartscoreError(ErrorCode.NOT_A_RELEASE_LEDGER, input=InputKind.RELEASES)


def _exposed() -> ChartscoreError:
    return ChartscoreError(ErrorCode.FILE_EXPOSED, input=InputKind.RELEASES)


def _unwritable() -> ChartscoreError:
    return ChartscoreError(ErrorCode.OUTPUT_UNWRITABLE, input=InputKind.RELEASES)


def release_folder(folder: InputPath) -> str:
    """The folder's path, checked: a directory (or absent, in an existing parent).

    Raises:
        ChartscoreError: ``invalid_path (releases)``; ``output_unwritable
            (releases)`` when it is not a directory (a symbolic link
            included) or its parent does not exist; ``file_exposed
            (releases)`` when group or others may use it.
    """
    where = input_path(folder, InputKind.RELEASES)
    if isinstance(where, StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.RELEASES)
    status: os.stat_result | None = None
    problem = False
    try:
        status = os.lstat(where)
    except FileNotFoundError:
        status = None
    except (OSError, ValueError):
        problem = True
    if problem:
        raise _unwritable()
    if status is None:
        if not os.path.isdir(os.path.dirname(os.path.abspath(where))):
            raise _unwritable()
        return where
    if not stat.S_ISDIR(status.st_mode):
        raise _unwritable()
    if status.st_mode & _EXPOSED_BITS:
        raise _exposed()
    return where


def read_releases(folder: InputPath) -> list[Release]:
    """Every release recorded in the folder, in order (none when it does not exist yet).

    Raises:
        ChartscoreError: as :func:`release_folder`; ``file_exposed (releases)``
            for a file that group or others may read or write;
            ``not_a_release_ledger (releases)`` for anything ``share`` did not
            write there, or a file that was edited.
    """
    where = release_folder(folder)
    names: list[str] | None = None
    try:
        names = sorted(os.listdir(where))
    except FileNotFoundError:
        return []
    except OSError:
        names = None
    if names is None:
        raise _unwritable()
    releases: list[Release] = []
    for expected, name in enumerate(names, start=1):
        match = _NAME.fullmatch(name)
        if match is None or int(match.group(1)) != expected:
            raise _invalid()
        releases.append(_read_release(os.path.join(where, name), expected))
    return releases


def _read_release(path: str, number: int) -> Release:
    data = _read_file(path)
    release: Release | None = None
    failed = False
    try:
        release = _parse(data, number)
    except ChartscoreError:
        failed = True
    if failed or release is None:  # raised outside the handler: no context
        raise _invalid()
    return release


def _read_file(path: str) -> bytes:
    descriptor = -1
    exposed = unreadable = False
    chunks: list[bytes] = []
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_size > _MAX_BYTES:
            unreadable = True
        elif status.st_mode & _EXPOSED_BITS:
            exposed = True
        else:
            while chunk := os.read(descriptor, 1 << 20):
                chunks.append(chunk)
    except OSError:
        unreadable = True
    finally:
        if descriptor >= 0:
            os.close(descriptor)
    if exposed:
        raise _exposed()
    if unreadable:
        raise _invalid()
    return b"".join(chunks)


def _check(document: dict[str, object]) -> str:
    # A SHA-256 of the rest of the document: an edit that does not redo it is refused.
    # (The file holds the case ids in plain already: the digest shows nothing more.)
    rest = {key: value for key, value in document.items() if key != "check"}
    return "sha256:" + hashlib.sha256(canonical_json(rest).encode("utf-8")).hexdigest()


def _parse(data: bytes, number: int) -> Release | None:
    document = _strict_json.parse(data)
    if type(document) is not dict or set(document) != _KEYS:
        return None
    if document["format"] != FORMAT or document["format_version"] != FORMAT_VERSION:
        return None
    if document["release"] != number or document["check"] != _check(document):
        return None
    case_ids = document["case_ids"]
    if type(case_ids) is not list or not case_ids:
        return None
    if not all(is_case_id(case_id) for case_id in case_ids) or case_ids != sorted(set(case_ids)):
        return None
    text = document["shared"]
    if type(text) is not str:
        return None
    shared = SharedReport.from_json(text)
    if shared.to_json() != text or canonical_json(document) + "\n" != data.decode("utf-8"):
        return None
    return Release(number, shared, frozenset(case_ids))


def release_bytes(number: int, shared: SharedReport, case_ids: Iterable[str]) -> bytes:
    """The file of one release: canonical JSON with its check, and a final line end."""
    document: dict[str, object] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "release": number,
        "case_ids": sorted(set(case_ids)),
        "shared": shared.to_json(),
    }
    document["check"] = _check(document)
    return (canonical_json(document) + "\n").encode("utf-8")


def record_release(
    folder: InputPath, number: int, shared: SharedReport, case_ids: Iterable[str]
) -> None:
    """Add release ``number`` to the folder (created ``0700``), atomically, mode ``0600``.

    Raises:
        ChartscoreError: as :func:`release_folder`; ``not_a_release_ledger``
            when the release's file exists already (another share in between);
            ``output_unwritable (releases)``.
    """
    if type(number) is not int or not 1 <= number <= MAX_RELEASES:
        raise _invalid()
    where = release_folder(folder)
    data = release_bytes(number, shared, case_ids)
    failed = False
    try:
        os.mkdir(where, FOLDER_MODE)
    except FileExistsError:
        pass
    except OSError:
        failed = True
    if failed:
        raise _unwritable()
    target = os.path.join(where, f"release-{number:04d}.json")
    if os.path.lexists(target):
        raise _invalid()
    write_atomic(target, data, mode=FILE_MODE)


__all__ = ["Release", "read_releases", "record_release", "release_bytes", "release_folder"]
