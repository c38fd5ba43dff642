"""The ledger of successive releases (``share --releases DIR``): inside only.

The folder holds one file per release that ``share`` made into it,
``release-0001.json``, ``release-0002.json``, ..., and a head record
``ledger.json``. Each release is canonical JSON with the shared report exactly
as it was published and, per case behind it, a digest of the case's rows
(docs/disclosure.md#successive-releases). The case ids make the folder
patient-level data that never leaves (docs/privacy.md):

- the folder is created with mode ``0700`` and each file with ``0600``; an
  existing folder or file that group or others may read or write is refused
  (``file_exposed``), as are symbolic links and anything but regular files;
- a share holds an exclusive ``flock`` on the folder from reading the
  releases to recording its own, a reader a shared one: concurrent shares
  take their turns, and each is audited with every release recorded before
  it;
- a release file is written atomically and never over another (a hard link
  of a complete temporary file, which fails on a name that exists);
- each release carries the check of the one before it and the head records
  how many there are and the last one's check, so a deleted, replaced or
  re-checked file breaks the chain; it, any other file (a file ``share`` did
  not write, a gap in the numbering, a file whose content or check does not
  match) is refused with ``not_a_release_ledger``: nothing is shared;
- a temporary file that a killed share left behind (``.chartscore-*.tmp``) is
  not a release: it is ignored, and removed by the next share.

Errors name ``releases``, never a path, a case id or a byte of a file.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import stat
from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from chartscore.documents import _strict_json
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind
from chartscore.io.inputs import InputPath, StandardInput, input_path
from chartscore.io.output import is_temporary_name, write_atomic, write_new
from chartscore.records._rules import is_case_id

FORMAT: Final = "chartscore.release"
FORMAT_VERSION: Final = 2
"""New release files: 2 (chained, with per-case digests); files of format 1 are still read."""
PUBLICATION_VERSION: Final = 3
"""A release that is a publication: several systems' shared reports, per case a digest each."""
HEAD_FORMAT: Final = "chartscore.release_ledger"
HEAD_FORMAT_VERSION: Final = 1
HEAD_NAME: Final = "ledger.json"
FOLDER_MODE: Final = 0o700
FILE_MODE: Final = 0o600
MAX_RELEASES: Final = 9999
_NAME: Final = re.compile(r"release-([0-9]{4})\.json")
_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")
_EXPOSED_BITS: Final = 0o077
_MAX_BYTES: Final = 1 << 30
_KEYS_1: Final = frozenset({"format", "format_version", "release", "case_ids", "shared", "check"})
_KEYS_2: Final = frozenset(
    {"format", "format_version", "release", "previous", "cases", "shared", "check"}
)
_KEYS_3: Final = frozenset(
    {
        "format",
        "format_version",
        "release",
        "previous",
        "cases",
        "products",
        "comparisons",
        "check",
    }
)
_HEAD_KEYS: Final = frozenset({"format", "format_version", "releases", "last", "check"})


@attrs.frozen(repr=False)
class Release:
    """One earlier release: its number, the shared report and its cases (inside only).

    Attributes:
        number: Its number in the folder, from 1.
        shared: The shared report as published.
        case_ids: The cases behind it.
        digests: Per case, the digest of its rows as scored (None for a file of
            format 1, which has none).
        check: The file's own check, which the next release carries.
        previous: The check of the release before it (None for the first, and
            for a file of format 1).
        products: For a publication (format 3), every system's shared report in
            the systems' order (``shared`` is the first); empty otherwise.
        system_digests: For a publication, per system, the digests of each
            case's rows as that system's predictions scored them.
        comparisons: For a publication, its shared comparisons, in order.
        pairs: Each comparison's systems, as (baseline, candidate) places.

    Its repr shows the number only: never a case id or a digest.
    """

    number: int
    shared: SharedReport
    case_ids: frozenset[str]
    digests: Mapping[str, str] | None = None
    check: str = ""
    previous: str | None = None
    products: tuple[SharedReport, ...] = ()
    system_digests: tuple[Mapping[str, str], ...] = ()
    comparisons: tuple[SharedComparison, ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()

    @property
    def publication(self) -> bool:
        """Whether the release is a publication (several systems' reports)."""
        return bool(self.products)

    def __repr__(self) -> str:
        return f"Release({self.number})"


def _invalid() -> ChartscoreError:
    return ChartscoreError(ErrorCode.NOT_A_RELEASE_LEDGER, input=InputKind.RELEASES)


def _exposed(*, folder: bool = False) -> ChartscoreError:
    # The folder needs its x bit: "chmod 600 it", right for a file, would lock it.
    hint = ErrorHint.RELEASES_FOLDER_EXPOSED if folder else None
    return ChartscoreError(ErrorCode.FILE_EXPOSED, input=InputKind.RELEASES, hint=hint)


def _unwritable() -> ChartscoreError:
    return ChartscoreError(ErrorCode.OUTPUT_UNWRITABLE, input=InputKind.RELEASES)


def _unreadable() -> ChartscoreError:
    return ChartscoreError(ErrorCode.FILE_UNREADABLE, input=InputKind.RELEASES)


def release_folder(folder: InputPath) -> str:
    """The folder's path, checked: a directory (or absent, in an existing parent).

    Raises:
        ChartscoreError: ``invalid_path (releases)``; ``output_unwritable
            (releases)`` when it is not a directory (a symbolic link
            included) or its parent does not exist (then with the hint
            ``output_folder_missing``); ``file_exposed
            (releases)`` when group or others may use it.
    """
    where = input_path(folder, InputKind.RELEASES)
    if isinstance(where, StandardInput):
        raise ChartscoreError(ErrorCode.INVALID_PATH, input=InputKind.RELEASES)
    if not where:  # "" (an unset variable) names no folder, not the working one
        raise _unwritable()
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
            raise ChartscoreError(  # said, as for --out; the path never shown
                ErrorCode.OUTPUT_UNWRITABLE,
                input=InputKind.RELEASES,
                hint=ErrorHint.OUTPUT_FOLDER_MISSING,
            )
        return where
    if not stat.S_ISDIR(status.st_mode):
        raise _unwritable()
    if status.st_mode & _EXPOSED_BITS:
        raise _exposed(folder=True)
    return where


def is_inside(path: InputPath, folder: InputPath) -> bool:
    """Whether ``path`` names the folder or anything inside it, through any link.

    Both are resolved (``realpath``), so a symbolic link into the folder, or a
    spelling with ``..``, counts as inside.
    """
    where, target = input_path(folder, InputKind.RELEASES), input_path(path, InputKind.OUTPUT)
    if isinstance(where, StandardInput) or isinstance(target, StandardInput):
        return False
    if not where:  # "" names no folder (release_folder refuses it)
        return False
    root, resolved = os.path.realpath(where), os.path.realpath(target)
    return resolved == root or resolved.startswith(root.rstrip(os.sep) + os.sep)


class ReleaseFolder:
    """The ledger folder, open and locked: its releases, and (exclusive) room for one more.

    Open it with :func:`open_releases`; close it (or leave its ``with`` block)
    to release the lock. Its repr shows how many releases it holds.
    """

    def __init__(self, where: str, descriptor: int, releases: list[Release]) -> None:
        self.where = where
        self._descriptor = descriptor
        self.releases = releases

    def __repr__(self) -> str:
        return f"ReleaseFolder({len(self.releases)} releases)"

    def __enter__(self) -> ReleaseFolder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the lock (closing the folder's descriptor). Closing twice is harmless."""
        descriptor, self._descriptor = self._descriptor, -1
        if descriptor >= 0:
            os.close(descriptor)

    def record(self, shared: SharedReport, digests: Mapping[str, str]) -> Release:
        """Add the next release (``0600``), chained to the last, then move the head on.

        Needs the exclusive lock (:func:`open_releases` with ``exclusive=True``).
        A crash between the two writes leaves a release one past the head,
        which the next reader accepts and a share moves the head onto.

        Raises:
            ChartscoreError: ``not_a_release_ledger (releases)`` when the
                release's file exists already, or there is no room for it;
                ``output_unwritable (releases)``.
        """
        number = len(self.releases) + 1
        if not digests:
            raise _invalid()
        previous = self.releases[-1].check if self.releases else None
        return self._add(number, release_bytes(number, shared, digests, previous))

    def record_publication(
        self,
        products: Sequence[SharedReport],
        digests: Sequence[Mapping[str, str]],
        comparisons: Sequence[tuple[tuple[int, int], SharedComparison]] = (),
    ) -> Release:
        """Add the next release, a publication (format 3): as :meth:`record`.

        Args:
            products: Every system's shared report, in the systems' order.
            digests: Per system, per case, the digest of its rows as scored.
            comparisons: Its shared comparisons, each with its (baseline,
                candidate) systems' places.
        """
        number = len(self.releases) + 1
        cases = sorted(digests[0]) if digests else []
        if not cases or len(products) != len(digests) or any(sorted(d) != cases for d in digests):
            raise _invalid()
        places = range(len(products))
        if any(b not in places or c not in places for (b, c), _ in comparisons):
            raise _invalid()
        previous = self.releases[-1].check if self.releases else None
        document: dict[str, object] = {
            "format": FORMAT,
            "format_version": PUBLICATION_VERSION,
            "release": number,
            "previous": previous,
            "cases": {case: [d[case] for d in digests] for case in cases},
            "products": [product.to_json() for product in products],
            "comparisons": [[b, c, shared.to_json()] for (b, c), shared in comparisons],
        }
        document["check"] = _check(document)
        return self._add(number, (canonical_json(document) + "\n").encode("utf-8"))

    def _add(self, number: int, data: bytes) -> Release:
        if self._descriptor < 0 or number > MAX_RELEASES:
            raise _invalid()
        target = os.path.join(self.where, f"release-{number:04d}.json")
        failed = False
        written = False
        try:
            written = write_new(target, data, mode=FILE_MODE)
        except ChartscoreError:
            failed = True
        if failed:
            raise _unwritable()
        if not written:
            raise _invalid()
        release = _parse_release(data, number)
        assert release is not None
        self.releases.append(release)
        _write_head(self.where, self.releases)
        return release


def open_releases(folder: InputPath, *, exclusive: bool) -> ReleaseFolder:
    """Lock the folder and read every release in it, checked as one chain.

    With ``exclusive`` (a share) the folder is created ``0700`` if absent, the
    lock is exclusive, stray temporary files are removed and a head one
    release behind (a crash between the two writes) is moved on. Otherwise (a
    reader) the lock is shared and nothing is written; an absent folder (or
    one in an absent folder) reads as no release.

    Raises:
        ChartscoreError: as :func:`release_folder` (for a reader,
            ``file_unreadable (releases)`` in place of ``output_unwritable``);
            ``file_exposed (releases)`` for a file that group or others may
            read or write;
            ``not_a_release_ledger (releases)`` for anything ``share`` did not
            write there, a file that was edited, deleted or replaced, a head
            that does not match.
    """
    unusable = absent = False
    try:
        where = release_folder(folder)
    except ChartscoreError as error:
        if exclusive or error.code is not ErrorCode.OUTPUT_UNWRITABLE:
            raise
        # A folder whose parent does not exist does not exist either: no release, as when
        # only the folder is absent (it was file_unreadable, as for a file given as the folder).
        absent = error.hint is ErrorHint.OUTPUT_FOLDER_MISSING
        unusable = not absent
    if unusable:  # a reader writes nothing: a path it cannot use as the folder is unreadable
        raise _unreadable()
    if absent:
        return ReleaseFolder(str(input_path(folder, InputKind.RELEASES)), -1, [])
    if exclusive:
        failed = False
        try:
            os.mkdir(where, FOLDER_MODE)
        except FileExistsError:
            pass
        except OSError:
            failed = True
        if failed:
            raise _unwritable()
    elif not os.path.lexists(where):
        return ReleaseFolder(where, -1, [])
    unusable = False
    try:
        descriptor = _lock(where, exclusive)
    except ChartscoreError as error:
        if exclusive or error.code is not ErrorCode.OUTPUT_UNWRITABLE:
            raise
        unusable = True
    if unusable:
        raise _unreadable()
    try:
        releases, behind = _read_all(where, exclusive)
        if exclusive and behind:
            _write_head(where, releases)
    except BaseException:
        os.close(descriptor)
        raise
    return ReleaseFolder(where, descriptor, releases)


def read_releases(folder: InputPath) -> list[Release]:
    """Every release recorded in the folder, in order (none when it does not exist yet).

    Read under a shared lock, so never half-way through a share.

    Raises:
        ChartscoreError: as :func:`open_releases`.
    """
    with open_releases(folder, exclusive=False) as opened:
        return opened.releases


def _lock(where: str, exclusive: bool) -> int:
    # The folder itself, opened without following a link, is what is locked: no lock
    # file to leave behind or to take for a foreign file.
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    descriptor = -1
    exposed = failed = False
    try:
        descriptor = os.open(where, flags | getattr(os, "O_CLOEXEC", 0))
        status = os.fstat(descriptor)
        if not stat.S_ISDIR(status.st_mode):
            failed = True
        elif status.st_mode & _EXPOSED_BITS:
            exposed = True
        else:
            fcntl.flock(descriptor, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            named = os.lstat(where)  # still the folder that was locked
            failed = (named.st_dev, named.st_ino) != (status.st_dev, status.st_ino)
    except OSError:
        failed = True
    if (failed or exposed) and descriptor >= 0:
        os.close(descriptor)
    if exposed:
        raise _exposed(folder=True)
    if failed:
        raise _unwritable()
    return descriptor


def _read_all(where: str, exclusive: bool) -> tuple[list[Release], bool]:
    # Every release, checked as one chain against the head; whether the head is one behind.
    names: list[str] | None = None
    try:
        names = sorted(os.listdir(where))
    except OSError:
        names = None
    if names is None:
        raise _unwritable() if exclusive else _unreadable()
    has_head = HEAD_NAME in names
    strays = [name for name in names if is_temporary_name(name)]
    files = [name for name in names if name != HEAD_NAME and name not in strays]
    releases: list[Release] = []
    for expected, name in enumerate(files, start=1):
        match = _NAME.fullmatch(name)
        if match is None or int(match.group(1)) != expected:
            raise _invalid()
        releases.append(_read_release(os.path.join(where, name), expected))
    _check_chain(releases)
    if has_head:
        count, last = _read_head(os.path.join(where, HEAD_NAME))
    else:  # a folder of format 1 (no head then), or a crash before the first head
        count = sum(release.digests is None for release in releases)
        last = releases[count - 1].check if count else ""
    if len(releases) == count:
        behind = False
    elif len(releases) == count + 1 and releases[-1].digests is not None:
        behind = True  # recorded, and killed before the head moved on
    else:
        raise _invalid()
    if count and releases[count - 1].check != last:
        raise _invalid()
    for name in strays if exclusive else ():  # no other share is writing: a killed one left it
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(where, name))
    return releases, behind


def _check_chain(releases: list[Release]) -> None:
    # Files of format 1 (unchained) may only come first; each later one names the check
    # of the one before it.
    for position, release in enumerate(releases):
        before = releases[position - 1] if position else None
        if release.digests is None:
            if before is not None and before.digests is not None:
                raise _invalid()
            continue
        if release.previous != (None if before is None else before.check):
            raise _invalid()


def _read_release(path: str, number: int) -> Release:
    data = _read_file(path)
    release: Release | None = None
    failed = False
    try:
        release = _parse_release(data, number)
    except ChartscoreError:
        failed = True
    if failed or release is None:  # raised outside the handler: no context
        raise _invalid()
    return release


def _read_head(path: str) -> tuple[int, str]:
    data = _read_file(path)
    document: object = None
    failed = False
    try:
        document = _strict_json.parse(data)
    except ChartscoreError:
        failed = True
    if failed or type(document) is not dict or set(document) != _HEAD_KEYS:
        raise _invalid()
    count, last = document["releases"], document["last"]
    if (
        document["format"] != HEAD_FORMAT
        or document["format_version"] != HEAD_FORMAT_VERSION
        or document["check"] != _check(document)
        or type(count) is not int
        or not 1 <= count <= MAX_RELEASES
        or type(last) is not str
        or canonical_json(document) + "\n" != data.decode("utf-8", "replace")
    ):
        raise _invalid()
    return count, last


def _write_head(where: str, releases: list[Release]) -> None:
    document: dict[str, object] = {
        "format": HEAD_FORMAT,
        "format_version": HEAD_FORMAT_VERSION,
        "releases": len(releases),
        "last": releases[-1].check,
    }
    document["check"] = _check(document)
    failed = False
    try:
        write_atomic(
            os.path.join(where, HEAD_NAME),
            (canonical_json(document) + "\n").encode("utf-8"),
            mode=FILE_MODE,
        )
    except ChartscoreError:
        failed = True
    if failed:
        raise _unwritable()


def _read_file(path: str) -> bytes:
    descriptor = -1
    exposed = unreadable = False
    chunks: list[bytes] = []
    try:
        # Not blocking: a FIFO under a release's name is refused at once, not waited on
        # (a share would hold the folder's lock while it waited).
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
        descriptor = os.open(path, flags)
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


def _parse_release(data: bytes, number: int) -> Release | None:
    document = _strict_json.parse(data)
    if type(document) is not dict or document.get("format") != FORMAT:
        return None
    version = document.get("format_version")
    if type(version) is not int or version not in (1, 2, PUBLICATION_VERSION):
        return None
    if set(document) != {1: _KEYS_1, 2: _KEYS_2}.get(version, _KEYS_3):
        return None
    if document["release"] != number or document["check"] != _check(document):
        return None
    if version == PUBLICATION_VERSION:
        return _parse_publication(document, data, number)
    digests: dict[str, str] | None = None
    previous: str | None = None
    if version == 1:
        case_ids = document["case_ids"]
        if type(case_ids) is not list or not all(type(c) is str for c in case_ids):
            return None
        if case_ids != sorted(set(case_ids)):
            return None
    else:
        cases, previous = document["cases"], document["previous"]
        if type(cases) is not dict or not (previous is None or type(previous) is str):
            return None
        if not all(type(d) is str and _DIGEST.fullmatch(d) for d in cases.values()):
            return None
        case_ids, digests = sorted(cases), dict(cases)
    if not case_ids or not all(is_case_id(case_id) for case_id in case_ids):
        return None
    text = document["shared"]
    if type(text) is not str:
        return None
    shared = SharedReport.from_json(text)
    if shared.to_json() != text or canonical_json(document) + "\n" != data.decode("utf-8"):
        return None
    check = str(document["check"])
    return Release(number, shared, frozenset(case_ids), digests, check, previous)


def _parse_publication(document: dict[str, object], data: bytes, number: int) -> Release | None:
    # A release of format 3: per case a digest per system, and every system's report.
    cases, previous, texts = document["cases"], document["previous"], document["products"]
    if type(cases) is not dict or not (previous is None or type(previous) is str):
        return None
    if type(texts) is not list or not texts or not all(type(t) is str for t in texts):
        return None
    count = len(texts)
    for digests in cases.values():
        if type(digests) is not list or len(digests) != count:
            return None
        if not all(type(d) is str and _DIGEST.fullmatch(d) for d in digests):
            return None
    case_ids = sorted(cases)
    if not case_ids or not all(is_case_id(case_id) for case_id in case_ids):
        return None
    products = tuple(SharedReport.from_json(text) for text in texts)
    if any(p.to_json() != t for p, t in zip(products, texts, strict=True)):
        return None
    pairs: list[tuple[int, int]] = []
    comparisons: list[SharedComparison] = []
    found = document["comparisons"]
    if type(found) is not list:
        return None
    for entry in found:
        if type(entry) is not list or len(entry) != 3:
            return None
        b, c, text = entry
        if type(b) is not int or type(c) is not int or type(text) is not str:
            return None
        if b == c or not (0 <= b < count and 0 <= c < count):
            return None
        comparison = SharedComparison.from_json(text)
        if comparison.to_json() != text:
            return None
        pairs.append((b, c))
        comparisons.append(comparison)
    if canonical_json(document) + "\n" != data.decode("utf-8"):
        return None
    system_digests = tuple({c: cases[c][s] for c in case_ids} for s in range(count))
    return Release(
        number,
        products[0],
        frozenset(case_ids),
        system_digests[0],
        str(document["check"]),
        previous,
        products,
        system_digests,
        tuple(comparisons),
        tuple(pairs),
    )


def release_bytes(
    number: int, shared: SharedReport, digests: Mapping[str, str], previous: str | None
) -> bytes:
    """The file of one release (format 2): canonical JSON with its check, and a line end.

    Args:
        number: The release's number.
        shared: The shared report as published.
        digests: Per case behind it, the digest of its rows as scored.
        previous: The check of the release before it (None for the first).
    """
    document: dict[str, object] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "release": number,
        "previous": previous,
        "cases": dict(digests),
        "shared": shared.to_json(),
    }
    document["check"] = _check(document)
    return (canonical_json(document) + "\n").encode("utf-8")


__all__ = [
    "Release",
    "ReleaseFolder",
    "is_inside",
    "open_releases",
    "read_releases",
    "release_bytes",
    "release_folder",
]
