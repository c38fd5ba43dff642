"""The one audit: every attack on shared documents, one document or several at once.

An outsider holds shared documents and attacks them; this package is that outsider, for
every kind of holding (docs/disclosure.md, "The audit", "One publication", "Successive
releases"):

- :func:`audit` a shared report and :func:`audit_comparison` a shared comparison, through
  one attack (:func:`_attack` over a :class:`_Target`: one solver set-up, one memory of
  attacked problems, one split over two cores, one row order): :mod:`.document`;
- :func:`audit_publication` several products of one cohort held together, in the joint model
  of :mod:`chartscore.disclosure.publication` (and :func:`publication_leaks`, its inside-only
  check of the numbers it pins): :mod:`.publication`;
- :func:`audit_releases` and :func:`audit_publication_releases` every release of a ledger
  held with all the earlier ones, in the atoms' joint model
  (:class:`~chartscore.disclosure.releases.JointModel`), :class:`ReleaseAudit` the verdict
  of one: :mod:`.ledger`.

Every joint attack judges a hidden number the same way: its exact range, then
:func:`hidden_status` (:func:`judge`; :func:`ranges_of` asks a solver for each).

The old path ``chartscore.disclosure.attack`` is :mod:`.document` (the same module object);
the old homes of the joint audits (``publication``, ``releases``, ``publication_releases``)
still name them. Inside chartscore a module imports the submodule it needs, never this
package, so the joint audits may read the models that the suppression also reads.
"""

from __future__ import annotations

from chartscore.disclosure.audits import document, ledger, publication
from chartscore.disclosure.audits.document import *  # noqa: F403
from chartscore.disclosure.audits.ledger import *  # noqa: F403
from chartscore.disclosure.audits.publication import *  # noqa: F403

__all__ = document.__all__ + publication.__all__ + ledger.__all__
