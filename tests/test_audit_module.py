"""The one audit (issue 36): every audit of shared documents lives in the package
``chartscore.disclosure.audits``, and the paths the audits had before name its own objects."""

from __future__ import annotations

import importlib

import pytest

_ATTACK_NAMES = (
    "AUDITING",
    "STATUSES",
    "AuditResult",
    "AuditRow",
    "audit",
    "audit_comparison",
    "audit_with_hints",
    "bound_status",
    "comparison_range_failures",
    "hidden_status",
    "proven_ranges",
    "range_failures",
    "range_status",
    "remembering_attacks",
)
_PUBLICATION_NAMES = (
    "PublicationAudit",
    "PublicationRow",
    "audit_publication",
    "publication_consistent",
    "publication_leaks",
)


def test_the_old_paths_name_the_audit_modules_objects() -> None:
    audits = importlib.import_module("chartscore.disclosure.audits")
    document = importlib.import_module("chartscore.disclosure.audits.document")
    attack = importlib.import_module("chartscore.disclosure.attack")
    publication_releases = importlib.import_module("chartscore.disclosure.publication_releases")
    shared_quantities = importlib.import_module("chartscore.documents.shared_quantities")
    publication = importlib.import_module("chartscore.disclosure.publication")
    releases = importlib.import_module("chartscore.disclosure.releases")
    disclosure = importlib.import_module("chartscore.disclosure")
    # One module object under both names: a name set on one (a test's monkeypatch) is set on both.
    assert attack is document
    for name in _ATTACK_NAMES:
        assert getattr(attack, name) is getattr(audits, name)
    # Tests read the documents' published values through the old path too.
    assert attack.published_values is shared_quantities.published_values
    for name in _PUBLICATION_NAMES:
        assert getattr(publication, name) is getattr(audits, name)
    for name in ("ReleaseAudit", "audit_releases", "joint_attack"):
        assert getattr(releases, name) is getattr(audits, name)
    assert publication_releases.audit_publication_releases is audits.audit_publication_releases
    for name in ("AuditResult", "AuditRow", "audit"):
        assert getattr(disclosure, name) is getattr(audits, name)
    for module in (publication, releases, publication_releases):
        with pytest.raises(AttributeError):
            module.no_such_name  # noqa: B018
