"""The closed vocabulary of failures.

Every failure chartscore reports is a :class:`ChartscoreError` whose ``code`` is
one member of :class:`ErrorCode`. The message is the code plus, for files, which
input and which line: never a value, case id, digest, key name or path. Each code
is explained in ``docs/errors.md``; a test keeps the two lists equal.
"""

from __future__ import annotations

import difflib
import enum
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, NoReturn, TypeVar

from chartscore._format import FIELD_ID_PATTERN, FORMAT_KEYS, PLUGIN_NAME_PATTERN

_T = TypeVar("_T")

# Compiled here, not taken from chartscore.records._rules, so that the value-free modules
# (report, comparison, gates, ...) can raise coded errors without importing _rules,
# whose caches hold input digests.
_FIELD_ID: Final = re.compile(FIELD_ID_PATTERN)
_PLUGIN_NAME: Final = re.compile(PLUGIN_NAME_PATTERN)


class ErrorCode(enum.StrEnum):
    """Stable, documented failure codes."""

    # Reading files and JSON Lines.
    FILE_UNREADABLE = "file_unreadable"
    INVALID_PATH = "invalid_path"
    FILE_TOO_LARGE = "file_too_large"
    NOT_UTF8 = "not_utf8"
    LINE_TOO_LONG = "line_too_long"
    INVALID_JSON = "invalid_json"
    NONFINITE_NUMBER = "nonfinite_number"
    NUMBER_OUT_OF_RANGE = "number_out_of_range"
    NESTING_TOO_DEEP = "nesting_too_deep"
    DUPLICATE_KEY = "duplicate_key"
    NOT_AN_OBJECT = "not_an_object"
    UNKNOWN_KEY = "unknown_key"
    MISSING_KEY = "missing_key"
    # Records.
    INVALID_CASE_ID = "invalid_case_id"
    INVALID_FIELD_ID = "invalid_field_id"
    INVALID_FIELD_TYPE = "invalid_field_type"
    INVALID_VALUE = "invalid_value"
    INVALID_GOLD_VALUE = "invalid_gold_value"
    INVALID_NOT_APPLICABLE = "invalid_not_applicable"
    INVALID_DIGEST = "invalid_digest"
    INVALID_EVIDENCE_CHAIN = "invalid_evidence_chain"
    INVALID_SOURCE_LOCATION = "invalid_source_location"
    INVALID_OFFSET = "invalid_offset"
    INVALID_SPAN = "invalid_span"
    DUPLICATE_SOURCE = "duplicate_source"
    INVALID_SOURCE_KIND = "invalid_source_kind"
    INVALID_TRANSFORMATION_KIND = "invalid_transformation_kind"
    INVALID_REVIEWER_STATE = "invalid_reviewer_state"
    INVALID_UNCERTAINTY = "invalid_uncertainty"
    # Run cost (usage objects and the run header).
    INVALID_USAGE = "invalid_usage"
    INVALID_RUN_HEADER = "invalid_run_header"
    MISPLACED_RUN_HEADER = "misplaced_run_header"
    RUN_HEADERS_DIFFER = "run_headers_differ"
    # Collections and the join.
    INVALID_COLLECTION = "invalid_collection"
    INVALID_RECORD = "invalid_record"
    EMPTY_GOLD = "empty_gold"
    DUPLICATE_GOLD_KEY = "duplicate_gold_key"
    DUPLICATE_PREDICTION_KEY = "duplicate_prediction_key"
    UNKNOWN_PREDICTION_KEY = "unknown_prediction_key"
    INCONSISTENT_FIELD_TYPE = "inconsistent_field_type"
    # Field schema.
    INVALID_SCHEMA = "invalid_schema"
    SCHEMA_UNKNOWN_TYPE = "schema_unknown_type"
    SCHEMA_UNKNOWN_OPTION = "schema_unknown_option"
    SCHEMA_INVALID_LEVELS = "schema_invalid_levels"
    SCHEMA_INVALID_CHOICES = "schema_invalid_choices"
    SCHEMA_INVALID_CHOICE_LABELS = "schema_invalid_choice_labels"
    SCHEMA_INVALID_TOLERANCE = "schema_invalid_tolerance"
    SCHEMA_INVALID_MATCH = "schema_invalid_match"
    SCHEMA_INVALID_PLUGINS = "schema_invalid_plugins"
    SCHEMA_INVALID_STRATA = "schema_invalid_strata"
    SCHEMA_INVALID_SAMPLING = "schema_invalid_sampling"
    SCHEMA_REQUIRED = "schema_required"
    SCHEMA_TYPE_MISMATCH = "schema_type_mismatch"
    GOLD_OUTSIDE_SCHEMA = "gold_outside_schema"
    INVALID_GOLD_PATTERN = "invalid_gold_pattern"
    MATCH_TEXT_TOO_LONG = "match_text_too_long"
    SCHEMA_FIELD_UNUSED = "schema_field_unused"
    STANDIN_NOT_PERFECT = "standin_not_perfect"
    # Plugin metrics.
    PLUGIN_NOT_FOUND = "plugin_not_found"
    INVALID_PLUGIN = "invalid_plugin"
    PLUGIN_FAILED = "plugin_failed"
    PLUGIN_MISMATCH = "plugin_mismatch"
    # Reports, comparisons and gates.
    UNKNOWN_REPORT_FORMAT = "unknown_report_format"
    INVALID_REPORT = "invalid_report"
    INVALID_TOML = "invalid_toml"
    INVALID_GATES = "invalid_gates"
    INVALID_GATE = "invalid_gate"
    INVALID_GATE_RULE = "invalid_gate_rule"
    INVALID_GATE_THRESHOLD = "invalid_gate_threshold"
    GATE_SLICE_MISSING = "gate_slice_missing"
    GATE_METRIC_MISSING = "gate_metric_missing"
    GATE_NEEDS_COMPARISON = "gate_needs_comparison"
    # Disclosure control (shared reports).
    INVALID_MIN_CELL = "invalid_min_cell"
    INVALID_SENSITIVITY = "invalid_sensitivity"
    DISCLOSURE_AUDIT_FAILED = "disclosure_audit_failed"
    SHARE_TOO_LARGE = "share_too_large"
    NOT_APPLICABLE_UNSUPPORTED = "not_applicable_unsupported"
    AGREEMENT_NOT_SHAREABLE = "agreement_not_shareable"
    # Command line.
    USAGE = "usage"
    OUTPUT_UNWRITABLE = "output_unwritable"
    OUTPUT_IS_INPUT = "output_is_input"
    INTERRUPTED = "interrupted"
    INTERNAL_ERROR = "internal_error"
    # Scaling out (chartscore[dask]).
    NO_PART_FILES = "no_part_files"
    ENGINE_UNAVAILABLE = "engine_unavailable"
    ENGINE_FAILED = "engine_failed"
    # Optional packages.
    MISSING_DEPENDENCY = "missing_dependency"
    # Importing (REDCap, Label Studio, CSV).
    INVALID_TABLE = "invalid_table"
    RAGGED_ROW = "ragged_row"
    DUPLICATE_COLUMN = "duplicate_column"
    UNKNOWN_DICTIONARY_HEADER = "unknown_dictionary_header"
    INVALID_FIELD_NAME = "invalid_field_name"
    UNKNOWN_REDCAP_TYPE = "unknown_redcap_type"
    INVALID_CHOICES = "invalid_choices"
    RECORD_ID_COLUMN = "record_id_column"
    UNKNOWN_COLUMN = "unknown_column"
    REPEATING_ROWS = "repeating_rows"
    DUPLICATE_CASE = "duplicate_case"
    INVALID_CELL = "invalid_cell"
    NOT_APPLICABLE_OPTION = "not_applicable_option"
    INVALID_EXPORT = "invalid_export"
    DUPLICATE_ANNOTATION = "duplicate_annotation"
    ANNOTATOR_NOT_FOUND = "annotator_not_found"
    LABEL_COLLISION = "label_collision"
    INVALID_CONFIG = "invalid_config"
    INVALID_COLUMN_MAP = "invalid_column_map"
    COLUMN_NOT_FOUND = "column_not_found"
    FIELD_UNDECLARED = "field_undeclared"
    EMPTY_EXPORT = "empty_export"
    DDE_RECORDS = "dde_records"
    INVALID_DDE_RECORD = "invalid_dde_record"
    NO_DDE_PAIRS = "no_dde_pairs"
    TASK_TOO_LARGE = "task_too_large"
    DUPLICATE_OUTPUT = "duplicate_output"
    INVALID_QUESTIONNAIRE = "invalid_questionnaire"
    INVALID_LINK_ID = "invalid_link_id"
    INVALID_RESPONSE = "invalid_response"
    CASE_REFERENCE_MISSING = "case_reference_missing"
    INVALID_ANSWER = "invalid_answer"
    # The adjudication worklist.
    INSIDE_ONLY_WORKLIST = "inside_only_worklist"
    NOT_A_WORKLIST = "not_a_worklist"
    DUPLICATE_WORKLIST_ROW = "duplicate_worklist_row"
    WORKLIST_ROW_NOT_IN_GOLD = "worklist_row_not_in_gold"
    # Partial tallies of several sites.
    INVALID_PARTIAL = "invalid_partial"
    PARTIAL_NEEDS_DECLARED_LABELS = "partial_needs_declared_labels"
    PARTIALS_DIFFER = "partials_differ"
    DUPLICATE_PARTIAL = "duplicate_partial"
    NO_PARTIALS = "no_partials"
    # The ledger of scored runs, and batches.
    LEDGER_KEY_MISSING = "ledger_key_missing"
    LEDGER_KEY_INVALID = "ledger_key_invalid"
    FILE_EXPOSED = "file_exposed"
    NOT_A_LEDGER = "not_a_ledger"
    LEDGER_UNWRITABLE = "ledger_unwritable"
    LEDGER_CUT_SHORT = "ledger_cut_short"
    LEDGER_GOLD_CHANGED = "ledger_gold_changed"
    INVALID_RUN_LABEL = "invalid_run_label"
    DUPLICATE_RUN_LABEL = "duplicate_run_label"
    UNKNOWN_BASELINE = "unknown_baseline"
    # Several raters (agree).
    UNDECLARED_RATER_FIELD = "undeclared_rater_field"
    # Case strata (site, abstractor).
    # The ledger of successive releases (share --releases).
    NOT_A_RELEASE_LEDGER = "not_a_release_ledger"
    RELEASE_MISMATCH = "release_mismatch"
    STRATA_NOT_DECLARED = "strata_not_declared"
    STRATUM_UNDECLARED = "stratum_undeclared"
    STRATUM_MISSING = "stratum_missing"
    STRATA_CASE_MISSING = "strata_case_missing"
    # A file given where another kind is expected.
    JSON_LINES_DOCUMENT = "json_lines_document"


_DESCRIPTIONS: dict[str, str] = {
    "file_unreadable": "the file could not be opened or read, or is not a regular file",
    "invalid_path": "a path must be a str or os.PathLike naming a file, or chartscore.io.STDIN",
    "file_too_large": (
        "larger than chartscore reads (schema 16 MiB, gates 1 MiB, report 16 MiB, export 1 GiB)"
    ),
    "not_utf8": "the line is not valid UTF-8",
    "line_too_long": "a line is longer than 1 MiB (is this a JSON Lines file?)",
    "invalid_json": "the line is not valid JSON",
    "nonfinite_number": "NaN or Infinity appears; write null for unknown values",
    "number_out_of_range": "a number has over 100 digits or a magnitude beyond 1e+-9999",
    "nesting_too_deep": "arrays or objects nest too deeply",
    "duplicate_key": "an object has the same key twice",
    "not_an_object": "the line is JSON but not an object",
    "unknown_key": "an object has a key the format does not define",
    "missing_key": "an object lacks a required key (a misspelled key shows as the one it replaced)",
    "invalid_case_id": "case_id must be a string of 1 to 128 characters, no lone surrogate",
    "invalid_field_id": "field_id must be a dotted lowercase name such as dx.onset",
    "invalid_field_type": "field_type is not one of the seven field types",
    "invalid_value": "value must be null, a string, a boolean, a number or a list of strings",
    "invalid_gold_value": "a gold value is not a valid value of its field type",
    "invalid_not_applicable": "not_applicable must be true (with a null value) or false",
    "invalid_digest": "a digest must be sha256: and 64 lowercase hex digits",
    "invalid_evidence_chain": "evidence_chain is not an object, or its source_locations not a list",
    "invalid_source_location": "a source location is not an object",
    "invalid_offset": "an offset must be an integer from 0 to 2^63-1",
    "invalid_span": "end_offset must be greater than start_offset",
    "duplicate_source": "the same source location appears twice in one chain",
    "invalid_source_kind": "kind must be clinical_record or generated_text",
    "invalid_transformation_kind": "transformation_kind must be rule or model",
    "invalid_reviewer_state": "reviewer_state must be pending, approved or rejected",
    "invalid_uncertainty": "uncertainty must be a number from 0 to 1",
    "invalid_usage": "usage must hold token counts, latency_ms or cost, each 0 or more",
    "invalid_run_header": "the run header's model, version or price is not as documented",
    "misplaced_run_header": "a run header may only be line 1 of a predictions file",
    "run_headers_differ": "the run headers (model, version, price) of the inputs differ",
    "invalid_collection": "the argument is not iterable, or iterating it failed",
    "invalid_record": "an item (counted from 0) is not a GoldField / Prediction record",
    "empty_gold": "the gold set has no records",
    "duplicate_gold_key": "two gold rows share case_id and field_id",
    "duplicate_prediction_key": "two predictions share case_id and field_id",
    "unknown_prediction_key": "a prediction's case_id and field_id are not in gold",
    "inconsistent_field_type": "one field_id appears with two field types in gold",
    "invalid_schema": 'the schema must be {"fields": {field_id: {...}}}',
    "schema_unknown_type": "a schema field has no type, or an unknown one",
    "schema_unknown_option": "a schema option that this field type does not take",
    "schema_invalid_levels": "ordinal levels: 2 to 10,000, distinct, strings or integers",
    "schema_invalid_choices": (
        "choices: a non-empty list of distinct one-line strings of at most 256 characters"
    ),
    "schema_invalid_choice_labels": (
        "choice_labels: an object from declared choices or levels to distinct one-line labels"
    ),
    "schema_invalid_tolerance": "a tolerance must be a non-negative exact number",
    "schema_invalid_match": 'match must be "regex" or {"fuzzy": t} with 0 < t <= 1 (text fields)',
    "schema_invalid_plugins": (
        "plugins: a list of distinct plugin names or module:attribute references"
    ),
    "schema_invalid_strata": (
        "strata: 1 to 8 lowercase keys, each a list of 1 to 256 distinct plain labels"
    ),
    "schema_invalid_sampling": (
        "sampling: {key: {label: fraction}} for one declared stratum key, every label, 0 < f <= 1"
    ),
    "plugin_not_found": "no chartscore.metrics entry point or importable module:attribute",
    "invalid_plugin": "not a chartscore.MetricPlugin, or its name, version or outcomes are invalid",
    "plugin_failed": "a plugin raised or returned an undeclared label; its message is not shown",
    "plugin_mismatch": "the scorings use different plugins or plugin versions; not added up",
    "schema_required": "ordinal fields must be declared in a schema (--schema)",
    "schema_type_mismatch": "a gold field_type differs from the schema's type",
    "gold_outside_schema": "a gold value is not a declared level or choice",
    "invalid_gold_pattern": "a regex field's gold pattern is outside chartscore's pattern subset",
    "match_text_too_long": (
        "a regex answer over 5,000 or a fuzzy text over its limit (50,000 to 200,000 characters)"
    ),
    "schema_field_unused": "the schema declares a field id that no gold row uses (a typo?)",
    "standin_not_perfect": "gold scored against itself is not perfect: broken gold or a bug",
    "unknown_report_format": "not a chartscore document of a known format and format_version",
    "invalid_report": (
        "the document is not valid: not its format's shape, or a figure disagrees with its counts"
    ),
    "invalid_toml": "the gates file is not valid TOML",
    "invalid_gates": "a gates file is one or more [[gate]] tables and nothing else",
    "invalid_gate": "a gate's slice, metric or level is not one chartscore knows",
    "invalid_gate_rule": "a gate needs exactly one rule that fits its metric",
    "invalid_gate_threshold": "a gate's threshold is not a number in the rule's range",
    "gate_slice_missing": "a gate names a slice that is not in the document",
    "gate_metric_missing": "a gate names a metric that is not in its slice",
    "gate_needs_comparison": "a difference rule needs a comparison, not a report",
    "invalid_min_cell": "the minimum cell size must be an integer from 2 to 1000000",
    "invalid_sensitivity": "the case counts do not match the report: a bug in the caller",
    "disclosure_audit_failed": "the shared report would fail its own disclosure audit; not written",
    "share_too_large": "over 200 field x stratum-cell blocks (160 in a publication): fewer strata",
    "not_applicable_unsupported": (
        "not-applicable gold rows are not yet shareable, comparable or mergeable; not written"
    ),
    "agreement_not_shareable": (
        "an agreement document is never shared nor read as rows: render or gate it inside"
    ),
    "usage": "the arguments are not valid; run chartscore --help",
    "output_unwritable": "an output could not be written; nothing partial was left",
    "output_is_input": "the output names an input file; choose another output path",
    "interrupted": "stopped by Ctrl-C or a termination signal",
    "internal_error": "a bug in chartscore; no details are shown, they could hold data",
    "no_part_files": "the pattern or list of part files names no file",
    "engine_unavailable": "the Dask engine needs its extra: pip install 'chartscore[dask]'",
    "engine_failed": "the Dask cluster failed or could not be reached; no details are shown",
    "missing_dependency": (
        "pip install 'chartscore[share]' (share, audit) or 'chartscore[match]' (regex, fuzzy)"
    ),
    "invalid_table": "not a readable delimited text file: a quote left open, or no header",
    "ragged_row": "a row has more or fewer cells than the header",
    "duplicate_column": "two columns have the same header",
    "unknown_dictionary_header": "not a REDCap data dictionary header (UI or API column names)",
    "invalid_field_name": "a REDCap field name that is not a field id, or given twice",
    "unknown_redcap_type": "a REDCap field type chartscore does not know",
    "invalid_choices": "REDCap choices that cannot be read, repeat a code or collide as columns",
    "record_id_column": "the records' first column is not the dictionary's record-ID field",
    "unknown_column": "a column that is not in the dictionary (or the column map)",
    "repeating_rows": "repeating instruments or events: pass --repeating rows to import them",
    "duplicate_case": "two rows (or tasks) give the same case id",
    "invalid_cell": "a gold cell is not a valid value of its field's type",
    "not_applicable_option": (
        "an option names a field not in the dictionary, or that cannot take it"
    ),
    "invalid_export": "not a Label Studio JSON export: a list of tasks with annotations",
    "duplicate_annotation": "one annotator has two annotations of the same task",
    "annotator_not_found": "the annotator has no annotation in the export (or in the notes)",
    "label_collision": "two labels give the same field id",
    "invalid_config": "the chart-review config is not the subset chartscore reads (docs/import.md)",
    "invalid_column_map": "the column map is not {case_id, fields, ...} as docs/import.md says",
    "column_not_found": "the column map names a column the table does not have",
    "field_undeclared": "a gold field of the column map is not declared in the schema",
    "empty_export": "the export has no row, or no gold value: it would write an empty gold file",
    "dde_records": (
        "Double Data Entry records (ID--1, ID--2): import it with --dde (import_redcap_dde)"
    ),
    "invalid_dde_record": "with --dde, a record id must be ID--1, ID--2 or a merged ID",
    "no_dde_pairs": "no chart has both Double Data Entry entries (ID--1 and ID--2): no raters",
    "task_too_large": "a Label Studio task is over 8 MiB or 500,000 JSON values",
    "duplicate_output": "two outputs name the same file; give each output its own path",
    "invalid_questionnaire": "not a FHIR R4 Questionnaire (JSON) as docs/import.md reads one",
    "invalid_link_id": "a Questionnaire linkId that gives no field id, or the same one as another",
    "invalid_response": "not a QuestionnaireResponse, a Bundle of them, or NDJSON of them",
    "case_reference_missing": "a QuestionnaireResponse has no subject (or encounter) reference",
    "invalid_answer": "a gold answer is not a value of its item, or an item is answered twice",
    "inside_only_worklist": "an inside-only adjudication worklist: patient-level, never a report",
    "not_a_worklist": (
        "not a worklist with the adjudicated column (chartscore worklist --adjudication-column)"
    ),
    "duplicate_worklist_row": "two worklist rows give the same case id and field id",
    "worklist_row_not_in_gold": "a worklist row's case id and field id are not in this gold",
    "invalid_partial": "not a partial file as chartscore score --partial-out writes it",
    "partial_needs_declared_labels": (
        "a partial keeps kappa over declared labels only: declare this field's choices"
    ),
    "partials_differ": "the partials were made with another schema, option, plugin or version",
    "duplicate_partial": "the same partial was given twice (or within a merged partial)",
    "no_partials": "the pattern names no partial file",
    "ledger_key_missing": (
        "the ledger needs its key: --ledger-key FILE or CHARTSCORE_LEDGER_KEY_FILE"
    ),
    "ledger_key_invalid": "the ledger key file must hold 32 to 4096 bytes of secret",
    "file_exposed": "group or others may read or write this inside-only file: chmod 600 it",
    "not_a_ledger": "the file is not a chartscore ledger (JSON Lines of scored runs)",
    "ledger_unwritable": (
        "no line could be appended to the ledger; it was left as it was (a new one: empty)"
    ),
    "ledger_cut_short": (
        "the ledger could not be written and ends with a cut line: ledger show skips it"
    ),
    "not_a_release_ledger": (
        "the releases folder holds a file share --releases did not write, or lost or changed one"
    ),
    "release_mismatch": "an earlier release does not fit this one: cases dropped or changed",
    "ledger_gold_changed": "the gold file changed while it was scored; nothing was recorded",
    "invalid_run_label": "a system label or run id must be a plain name such as model-v2",
    "duplicate_run_label": "two prediction files give the same run label (file name stem)",
    "unknown_baseline": "the baseline names no run of the batch (a file name stem)",
    "undeclared_rater_field": "a rater file names a field id the schema does not declare",
    "strata_not_declared": "a strata file needs a schema that declares strata (--schema)",
    "stratum_undeclared": "a strata line names a key or label the schema does not declare",
    "stratum_missing": "a strata line lacks one of the schema's stratum keys",
    "strata_case_missing": "a gold case has no line in the strata file",
    "json_lines_document": (
        "JSON Lines where one JSON document (a report, comparison or shared report) is expected"
    ),
}


class ErrorHint(enum.StrEnum):
    """A closed sentence added to an error when chartscore can tell the likely cause.

    Each is decided from the shape of the inputs (which input failed, on which
    line, with which code), never from their content, and shown after the
    location: ``missing_key (gold line 1, key field_type; gold and predictions
    may be swapped)``.
    """

    JSON_LINES_EXPECTED = "JSON Lines expected: one JSON object per line, not CSV or a JSON array"
    INPUTS_SWAPPED = "gold and predictions may be swapped"
    GOLD_AS_PREDICTIONS = "this looks like a gold file: predictions have no field_type"
    SHARED_REPORT_EXPECTED = "audit needs a shared report, made by chartscore share"
    OUTPUT_FOLDER_MISSING = "the output folder does not exist"
    OUTPUTS_PARTLY_REPLACED = "some outputs were replaced, the others not"
    JUNIT_FOLDER_GIVEN = "--junit names a folder: it takes the JUnit file's name"
    OUTPUT_IN_RELEASES = "the output is inside the releases folder, which share writes alone"
    RELEASES_FOLDER_EXPOSED = "the releases folder itself: chmod 700 it (600 would lock it)"
    NO_RELEASE = "the folder holds no release: share --releases DIR records them"
    PUBLICATION_TOO_LARGE = "the publication's stratified reports and comparisons, counted together"
    AUDIT_TOO_LARGE = "the documents hold more stratum cells than share writes: not audited"
    RELEASES_OF_ANOTHER_KIND = (
        "the folder holds releases of another kind: report or publication, systems or comparisons"
    )
    RELEASE_RECORD_GIVEN = (
        "this is a record of the inside-only releases folder: audit --releases DIR reads it"
    )
    MISSING_CODES_UNDECLARED = "a REDCap missing-data code may be missing from --missing-codes"
    PANDAS_MISSING = "data frames need pandas: pip install 'chartscore[pandas]'"
    GOLD_OR_PREDICTIONS_GIVEN = (
        "this looks like a gold or predictions file: make a report with chartscore score first"
    )
    DOCUMENT_AS_ROWS = (
        "this looks like a chartscore document (a report): gold and predictions are JSON Lines "
        "of rows"
    )
    STRATA_AS_ROWS = "this looks like a strata file (case_id to strata), not JSON Lines of rows"
    ROWS_AS_STRATA = (
        "this looks like a gold or predictions file: a strata file maps case_id to strata"
    )
    REDCAP_DICTIONARY_GIVEN = (
        "this looks like a REDCap data dictionary: make a schema with "
        "chartscore import redcap --dictionary FILE --schema-out schema.json"
    )
    GATES_LOOK_LIKE_DOCUMENT = (
        "the gates file looks like a JSON document: the arguments may be swapped "
        "(chartscore gate DOCUMENT --gates GATES.toml)"
    )
    DOCUMENT_LOOKS_LIKE_GATES = (
        "this looks like a gates file (TOML), not a document: the arguments may be swapped "
        "(chartscore gate DOCUMENT --gates GATES.toml)"
    )
    GATES_GIVEN_TO_AUDIT = (
        "this looks like a gates file (TOML): audit reads shared reports, and gate reads gates"
    )
    PARTIAL_GIVEN = "this looks like a partial tally: chartscore merge --partials makes its report"
    DOCUMENT_AS_PARTIAL = (
        "this looks like a chartscore document (a report), not a partial: "
        "chartscore score --partial-out writes one"
    )
    ROWS_AS_SCHEMA = (
        "this looks like a gold or predictions file: a schema is one JSON object of fields"
    )
    DOCUMENT_AS_STRATA = (
        "this looks like a chartscore document (a report): a strata file maps case_id to strata"
    )
    LEDGER_GIVEN = "this looks like a ledger of scored runs: chartscore ledger show reads it"


GATE_RULES: Final = (
    "min_lower",
    "max_upper",
    "min_upper",
    "max_lower",
    "min_difference_lower",
    "max_difference_upper",
)
"""A gate's rules (:data:`chartscore.documents.gates.RULES`), in documented order."""
GATE_KEYS: Final = ("slice", "metric", "label", "level", *GATE_RULES)
"""The keys of a gate in a gates file (:mod:`chartscore.documents.gates`), in documented order."""

# A name from a gates file (developer-authored, no patient data) is shown only
# when it is a plain word: no spaces, quotes or control characters to mislead a terminal.
_PLAIN_WORD: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,79}")


def _plain_word(value: object) -> str | None:
    return value if type(value) is str and _PLAIN_WORD.fullmatch(value) else None


def _valid_range(value: object) -> tuple[float, float] | None:
    if type(value) is not tuple or len(value) != 2:
        return None
    low, high = value
    if all(type(bound) in (int, float) and abs(bound) <= 1 for bound in (low, high)):
        return (float(low), float(high))
    return None


def _bound(value: float) -> str:
    return f"{value:g}"


def describe(code: ErrorCode) -> str:
    """A one-line explanation of ``code`` for people (closed text, never data)."""
    return _DESCRIPTIONS[ErrorCode(code).value]


class InputKind(enum.StrEnum):
    """Which input an error belongs to; the only location words ever printed."""

    GOLD = "gold"
    PREDICTIONS = "predictions"
    BASELINE = "baseline"
    CANDIDATE = "candidate"
    SCHEMA = "schema"
    OUTPUT = "output"
    GATES = "gates"
    REPORT = "report"
    DICTIONARY = "dictionary"
    RECORDS = "records"
    EXPORT = "export"
    TABLE = "table"
    COLUMNS = "columns"
    PARTIAL = "partial"
    LEDGER = "ledger"
    LEDGER_KEY = "ledger_key"
    STRATA = "strata"
    RELEASES = "releases"
    RATERS = "raters"
    CONFIG = "config"
    WORKLIST = "worklist"
    QUESTIONNAIRE = "questionnaire"
    RESPONSES = "responses"
    OTHERS = "others"
    SYSTEM = "system"
    VARIANTS = "variants"
    COMPARISONS = "comparisons"


def valid_field_id(value: object) -> bool:
    """Whether ``value`` is a field id (``[a-z][a-z0-9_]{0,63}`` segments joined by ``.``).

    The value-free twin of ``chartscore.records._rules.is_field_id`` (which remembers the
    ids it has seen, for speed on the hot path): for modules past the privacy
    boundary, and to decide whether a field id may be named in a message.
    """
    return type(value) is str and _FIELD_ID.fullmatch(value) is not None


class ChartscoreError(ValueError):
    """A controlled, value-free failure.

    Attributes:
        code: The :class:`ErrorCode` naming what went wrong.
        input: Which input it concerns, if any.
        line: The 1-based line of that input, for JSON Lines files; for a gate,
            the line of the gates file where the gate's ``[[gate]]`` starts; for a
            delimited table (an importer's input), the line its row starts on.
        column: The 1-based column of a delimited table (an importer's input).
        item: The 0-based position in a caller's collection (``score()``'s
            gold or predictions) of the item that failed, if known.
        part: The 1-based part file of that input, in sorted path order, when
            the input is a set of part files (the Dask engine).
        field_id: A developer-authored schema field id, only for schema errors
            about a field id that is itself valid.
        key: A key name of the file format (``field_type``, ``uncertainty``,
            ...), for ``missing_key`` and ``unknown_key``; never a key the
            format does not define, except in a gates file (see below).
        gate: The 1-based number of the gate a gates-file error concerns.
        setting: For a gate, which of its settings is wrong: one of
            :data:`GATE_KEYS` (``slice``, ``metric``, ``level`` or a rule).
        given: For a gate, the slice, metric or level the gates file gave,
            when it is a plain word.
        valid_range: For a gate's threshold, the range its rule allows.
        hint: An :class:`ErrorHint`: the likely cause, when chartscore can tell.
        plugin: The name of the plugin metric whose judge failed
            (``plugin_failed``): a developer-chosen lowercase identifier.
        suggestion: A close name chartscore knows, shown as "did you mean
            ...?": a valid field id (a schema or dictionary name), or in a
            gates error a plain word (a metric, slice, level or key).

    The constructor takes no free text, so a message can never carry data:
    each location argument is kept only when it is of the expected kind
    (an int, a valid field id, a format key, a closed hint), and dropped
    otherwise. Gates files are written by developers and hold no patient
    data, so a gates error (``gate`` given, or ``input`` gates) may also name
    a key, slice, metric or level the file holds, when it is a plain word
    (letters, digits, ``_ . : -``, at most 80 characters).
    """

    code: ErrorCode
    input: InputKind | None
    line: int | None
    column: int | None
    item: int | None
    field_id: str | None
    key: str | None
    gate: int | None
    part: int | None
    setting: str | None
    given: str | None
    valid_range: tuple[float, float] | None
    hint: ErrorHint | None
    plugin: str | None
    suggestion: str | None

    def __init__(
        self,
        code: ErrorCode,
        *,
        input: InputKind | None = None,
        line: int | None = None,
        field_id: str | None = None,
        key: str | None = None,
        item: int | None = None,
        gate: int | None = None,
        part: int | None = None,
        setting: str | None = None,
        given: str | None = None,
        valid_range: tuple[float, float] | None = None,
        hint: ErrorHint | None = None,
        column: int | None = None,
        plugin: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        self.code = ErrorCode(code)
        self.input = None if input is None else InputKind(input)
        self.line = line if type(line) is int else None
        self.column = column if type(column) is int and column > 0 else None
        self.item = item if type(item) is int and item >= 0 else None
        self.part = part if type(part) is int and part > 0 else None
        # Only a valid schema field id may appear; anything else could be data.
        self.field_id = field_id if valid_field_id(field_id) else None
        self.gate = gate if type(gate) is int else None
        in_gates = self.gate is not None or self.input is InputKind.GATES
        # Only the format's own key names: an input's other keys could be data.
        # A gates file holds no data: its keys are shown when they are plain words.
        if type(key) is str and key in FORMAT_KEYS:
            self.key = key
        else:
            self.key = _plain_word(key) if in_gates else None
        self.setting = setting if in_gates and setting in GATE_KEYS else None
        self.given = _plain_word(given) if self.setting is not None else None
        self.valid_range = _valid_range(valid_range) if self.setting is not None else None
        self.hint = hint if type(hint) is ErrorHint else None
        # A plugin's name is a lowercase identifier from the schema; anything else is dropped.
        self.plugin = (
            plugin if type(plugin) is str and _PLUGIN_NAME.fullmatch(plugin) is not None else None
        )
        # A close known name: a field id anywhere, or a plain word of a gates file.
        self.suggestion = (
            suggestion
            if valid_field_id(suggestion) or (in_gates and _plain_word(suggestion) is not None)
            else None
        )
        super().__init__(self._message())

    def _message(self) -> str:
        where = []
        if self.input is not None and self.gate is None:
            where.append(str(self.input))
        if self.part is not None:
            where.append(f"part {self.part}")
        if self.line is not None and self.gate is None:
            where.append(f"line {self.line}")
        if self.column is not None:
            where.append(f"column {self.column}")
        if self.item is not None:
            where.append(f"item {self.item}")
        if self.gate is not None:
            on_line = "" if self.line is None else f" on line {self.line}"
            where.append(f"gate {self.gate}{on_line}")
        if self.field_id is not None:
            where.append(f"field {self.field_id}")
        if self.plugin is not None:
            where.append(f"plugin {self.plugin}")
        text = " ".join(where)
        if self.key is not None:
            text = f"{text}, key {self.key}" if text else f"key {self.key}"
        guess = None if self.suggestion is None else f"did you mean {self.suggestion}?"
        details = [detail for detail in (self._setting_text(), guess, self.hint) if detail]
        if details:
            text = "; ".join([text, *details]) if text else "; ".join(details)
        return f"{self.code}" + (f" ({text})" if text else "")

    def _setting_text(self) -> str | None:
        if self.setting is None:
            return None
        if self.valid_range is not None:
            low, high = (_bound(bound) for bound in self.valid_range)
            return f"{self.setting} must be a number from {low} to {high}"
        if self.given is not None:
            return f"unknown {self.setting} {self.given}"
        return f"unknown {self.setting}"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.code, self._location()))

    def _location(self) -> _Location:
        return (
            self.input,
            self.line,
            self.field_id,
            self.key,
            self.item,
            self.gate,
            self.part,
            self.setting,
            self.given,
            self.valid_range,
            self.hint,
            self.column,
            self.plugin,
            self.suggestion,
        )


_Location = tuple[
    InputKind | None,
    int | None,
    str | None,
    str | None,
    int | None,
    int | None,
    int | None,
    str | None,
    str | None,
    tuple[float, float] | None,
    ErrorHint | None,
    int | None,
    str | None,
    str | None,
]


def _rebuild(code: ErrorCode, location: _Location) -> ChartscoreError:
    (
        input_kind, line, field_id, key, item, gate, part, setting, given, valid_range, hint,
        column, plugin, suggestion,
    ) = location  # fmt: skip
    return ChartscoreError(
        code,
        input=input_kind,
        line=line,
        field_id=field_id,
        key=key,
        item=item,
        gate=gate,
        part=part,
        setting=setting,
        given=given,
        valid_range=valid_range,
        hint=hint,
        column=column,
        plugin=plugin,
        suggestion=suggestion,
    )


def with_hint(error: ChartscoreError, hint: ErrorHint) -> ChartscoreError:
    """A new error like ``error`` with ``hint`` added (raise it outside any handler)."""
    location = error._location()
    return _rebuild(error.code, (*location[:10], hint, *location[11:]))


def named_as(error: ChartscoreError, *, input: InputKind, part: int | None) -> ChartscoreError:
    """A new error like ``error`` (all it names, its hint too), as ``input``'s part ``part``.

    For a file given among several by one option (``audit --system``). Raise it outside
    the handler that caught ``error``, so that it has no context.
    """
    location = error._location()
    return _rebuild(error.code, (input, *location[1:6], part, *location[7:]))


def relocated(
    error: ChartscoreError,
    *,
    input: InputKind | None,
    line: int | None,
    part: int | None = None,
) -> ChartscoreError:
    """A new error with ``error``'s code and what it names, at another place.

    What it names: its field id, key, item and plugin. Raise it outside the handler that
    caught ``error``, so that it has no context.
    """
    return ChartscoreError(
        error.code,
        input=input,
        part=part,
        line=line,
        field_id=error.field_id,
        key=error.key,
        item=error.item,
        plugin=error.plugin,
    )


def as_part(
    part: int, own: Iterable[InputKind | None], input: InputKind, call: Callable[[], _T]
) -> _T:
    """``call()``; an error it raises in one of the ``own`` inputs is named as ``input``'s
    part ``part`` (``predictions part 2 line 3``: a file named by its place among several),
    its hint kept.

    Any other error passes unchanged. Raised outside the handler: no context.
    """
    try:
        return call()
    except ChartscoreError as error:
        failure = error
    if failure.input in own:
        moved = relocated(failure, input=input, line=failure.line, part=part)
        raise moved if failure.hint is None else with_hint(moved, failure.hint)
    raise failure


def closest(word: object, known: Iterable[str]) -> str | None:
    """The name in ``known`` closest to ``word`` (difflib's ratio at least 0.6), or None.

    For "did you mean" in a message: ``word`` is a name the caller gave (a gates
    file's metric, an option's field name), ``known`` a closed vocabulary or a
    schema's field ids. Ties go to the first in sorted order (not difflib's
    last), so the answer is deterministic. Only the returned name may be shown,
    and only when it is of a kind :class:`ChartscoreError` keeps (``suggestion``).
    """
    if type(word) is not str or not word:
        return None
    found = difflib.get_close_matches(word, sorted(set(known)), n=3)
    if not found:
        return None
    matcher = difflib.SequenceMatcher(b=word)
    scores: dict[str, float] = {}
    for name in found:
        matcher.set_seq1(name)
        scores[name] = matcher.ratio()
    return min(found, key=lambda name: (-scores[name], name))


def fail(
    code: ErrorCode,
    *,
    input: InputKind | None = None,
    line: int | None = None,
    key: str | None = None,
) -> NoReturn:
    """Raise a :class:`ChartscoreError`; a one-liner for validators."""
    raise ChartscoreError(code, input=input, line=line, key=key)


# Options of the library's entry points are read by their exact type: a caller's
# object (a bool-like whose __bool__ raises, a str subclass whose __eq__ or
# __hash__ raises) never runs code inside chartscore. Anything else is ``usage``.


def flag_option(value: object) -> bool:
    """``value`` when it is exactly ``True`` or ``False``.

    Raises:
        ChartscoreError: ``usage`` for anything else (``1``, ``numpy.bool_``, ...).
    """
    if value is not True and value is not False:
        raise ChartscoreError(ErrorCode.USAGE)
    return value


def word_option(value: object, words: tuple[str, ...]) -> str:
    """``value`` when it is exactly a ``str`` and one of ``words``.

    Raises:
        ChartscoreError: ``usage`` for anything else (a ``str`` subclass included).
    """
    if type(value) is not str or value not in words:
        raise ChartscoreError(ErrorCode.USAGE)
    return value


def caller_items(value: object) -> tuple[object, ...] | None:
    """A caller's collection as a tuple, or None when it cannot be read as one.

    An exact list or tuple is copied directly (that runs no caller code); any
    other iterable (not a string, bytes or a mapping) is read inside a guard
    whose exception is dropped, so the caller raises a coded error with no
    context.
    """
    if type(value) is list or type(value) is tuple:
        return tuple(value)
    return _guarded(tuple, value)


def caller_iterator(value: object) -> Iterator[object] | None:
    """An iterator over a caller's collection (not a string, bytes or a mapping), or None.

    Made inside a guard whose exception is dropped (even ``isinstance`` runs a
    lazy proxy's ``__class__``); the caller reads the items under its own guard.
    """
    return _guarded(iter, value)


def _guarded(read: Callable[[Any], _T], value: object) -> _T | None:
    # ``read(value)`` for a collection that is not a string, bytes or a mapping; None for
    # one of those, or when reading it raises (the caller's exception must not survive).
    result: _T | None = None
    try:
        if not isinstance(value, str | bytes | Mapping):
            result = read(value)
    except Exception:  # noqa: BLE001 - the caller's exception must not survive
        result = None
    return result


def callback_option(value: object) -> None:
    """Check that ``value`` is None or callable (``callable`` runs no caller code).

    Raises:
        ChartscoreError: ``usage`` for anything else.
    """
    if value is not None and not callable(value):
        raise ChartscoreError(ErrorCode.USAGE)
