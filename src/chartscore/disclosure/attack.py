"""The old path of the audit, the same module as :mod:`chartscore.disclosure.audits`.

Every audit of shared documents lives in the one audit module,
:mod:`chartscore.disclosure.audits`. This module makes its old path name the same module
object (as ``chartscore/__init__`` does for modules that moved into folders), so that
``from chartscore.disclosure.attack import audit`` and ``import chartscore.disclosure.attack``
keep working, and a name set on one is set on the other. Nothing inside chartscore imports
this path.
"""

from __future__ import annotations

import sys

from chartscore.disclosure.audits import document

sys.modules[__name__] = document
