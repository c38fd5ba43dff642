"""Reading inputs and writing reports: JSON Lines, schema files, atomic writes."""

from chartscore.io.files import load_schema, score_files, write_atomic
from chartscore.io.jsonl import MAX_LINE_BYTES

__all__ = ["MAX_LINE_BYTES", "load_schema", "score_files", "write_atomic"]
