"""The closed vocabulary of the input formats: patterns and key names, no values.

Both the value-holding rules (:mod:`chartscore.records._rules`) and the value-free
error type (:mod:`chartscore.errors`) need these names; this module holds only
constants, so importing it never reaches a cache of input data.
"""

from __future__ import annotations

from typing import Final

FIELD_ID_PATTERN: Final = r"[a-z][a-z0-9_]{0,63}(?:\.[a-z][a-z0-9_]{0,63}){0,7}"
DIGEST_PATTERN: Final = r"sha256:[0-9a-f]{64}"
PLUGIN_NAME_PATTERN: Final = r"[a-z][a-z0-9_]{0,39}"
"""A plugin's name and each of its labels: a lowercase identifier of 1 to 40 characters."""
MAX_CASE_ID_LENGTH: Final = 128
MAX_LABEL_NAME: Final = 256
"""The longest declared label (a normalized schema choice or level) a report names."""
MAX_OFFSET: Final = (1 << 63) - 1
PARTIAL_FORMAT: Final = "chartscore.partial"
"""A partial tally's ``format`` (:mod:`chartscore.scoring.partial_document`): here, so that a
reader that may not import the scoring layer (a hint in :mod:`chartscore.io.hints`) knows it."""

GOLD_KEY_ORDER: Final = ("case_id", "field_id", "field_type", "value")
"""The gold format's keys, in documented order (the first missing one is named)."""
GOLD_OPTIONAL_KEYS: Final = ("not_applicable",)
"""The gold format's optional keys: ``not_applicable`` (true with a null value, or false)."""
PREDICTION_KEY_ORDER: Final = (
    "case_id",
    "field_id",
    "value",
    "normalized_fact_digest",
    "evidence_chain",
)
"""The prediction format's keys, in documented order."""
CHAIN_KEY_ORDER: Final = (
    "field_id",
    "source_locations",
    "normalized_fact_digest",
    "transformation_kind",
    "transformation_digest",
    "uncertainty",
    "reviewer_state",
)
"""The evidence chain's keys, in documented order."""
SOURCE_KEY_ORDER: Final = ("source_digest", "start_offset", "end_offset", "kind")
"""A source location's keys, in documented order."""
STRATA_KEY_ORDER: Final = ("case_id", "strata")
"""A strata file line's keys, in documented order."""
USAGE_KEY: Final = "usage"
"""A prediction line's optional run-cost object (docs/formats.md, "Run cost")."""
USAGE_KEY_ORDER: Final = ("input_tokens", "output_tokens", "latency_ms", "cost")
"""A ``usage`` object's keys, in documented order (each optional, at least one)."""
RUN_HEADER_KEY: Final = "chartscore_run"
"""The one key of a predictions file's run header line (its first line, at most one)."""
RUN_HEADER_KEY_ORDER: Final = ("model", "model_version", "price")
"""A run header's keys, in documented order (each optional)."""
RUN_NAME_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9._:/+-]{0,63}"
"""A run header's model name or version: 1 to 64 of ``A-Za-z0-9._:/+-``, alphanumeric first."""
CURRENCY_PATTERN: Final = r"[A-Z]{3}"
"""A run header's currency: three capital letters (an ISO 4217 code such as USD)."""
PRICE_KEY_ORDER: Final = ("currency", "input_per_million_tokens", "output_per_million_tokens")
"""A run header's ``price`` keys, in documented order (``currency`` required)."""
FORMAT_KEYS: Final = frozenset(
    GOLD_KEY_ORDER
    + GOLD_OPTIONAL_KEYS
    + PREDICTION_KEY_ORDER
    + CHAIN_KEY_ORDER
    + SOURCE_KEY_ORDER
    + STRATA_KEY_ORDER
    + (USAGE_KEY, RUN_HEADER_KEY)
    + USAGE_KEY_ORDER
    + RUN_HEADER_KEY_ORDER
    + PRICE_KEY_ORDER
)
"""The closed vocabulary of format keys: the only key names an error may show."""

AGREEMENT_OPENING: Final = '{"by_field":'
AGREEMENT_MARKER: Final = '"format":"chartscore.agreement"'
"""How an agreement document (canonical JSON, one line) opens, and the member that names it:
a reader of JSON Lines refuses it (``agreement_not_shareable``), so that it is never shared."""

WORKLIST_SIGNATURE: Final = "# chartscore.worklist"
"""How an adjudication worklist begins; every reader of reports or JSON Lines refuses it."""
WORKLIST_FIRST_LINE: Final = (
    WORKLIST_SIGNATURE + " 1: INSIDE ONLY. Patient-level adjudication list (case ids); "
    "never share, upload or attach it."
)
"""The worklist's first line: its format, version and a warning for whoever opens it."""
WORKLIST_MARKER: Final = WORKLIST_SIGNATURE + " 1:"
"""How the first line of a worklist of this version begins (a reader of one checks it)."""
WORKLIST_COLUMNS: Final = ("case_id", "field_id", "outcome")
"""A worklist's columns, in order."""
WORKLIST_ADJUDICATED: Final = "adjudicated"
"""The optional last column a worklist may have: the answer an abstractor adjudicated."""
