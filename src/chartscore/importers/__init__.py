"""Importers: REDCap, Label Studio, CSV, FHIR exports to chartscore's gold, predictions, schema.

Each importer reads an export inside the protected environment, as a stream in
bounded memory, and returns an :class:`Imported` (validated records and a schema
document); :func:`write_imported` writes the chosen parts all or none, never over an
input. They hold patient values,
as the readers of :mod:`chartscore.io` do, and sit in the same layer. Every error is
a code with the input's line, column or item, never a cell. See docs/import.md.
"""

from chartscore.importers.csv_table import import_csv
from chartscore.importers.fhir import import_fhir
from chartscore.importers.imported import Imported, write_imported
from chartscore.importers.labelstudio import import_labelstudio
from chartscore.importers.redcap import import_redcap, import_redcap_dde

__all__ = [
    "Imported",
    "import_csv",
    "import_fhir",
    "import_labelstudio",
    "import_redcap",
    "import_redcap_dde",
    "write_imported",
]
