"""docs/batch.md's and docs/ledger.md's examples are true, on the bundled demo data."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

from chartscore import load_schema, score_files
from chartscore.documents.gates import parse_gates
from chartscore.io.ledger_file import read_ledger
from chartscore.ledger import ledger_table
from chartscore.records.gold_identity import LedgerKey
from chartscore.workflows.batch import batch_files
from chartscore.workflows.ledger import gold_state, record_run
from ledger_data import KEY, make_demo

ROOT = Path(__file__).resolve().parent.parent
PAGES = "".join((ROOT / "docs" / page).read_text("utf-8") for page in ("batch.md", "ledger.md"))
README = (ROOT / "README.md").read_text(encoding="utf-8")
MOMENT = datetime.datetime(2026, 5, 9, 7, 35, 25, tzinfo=datetime.UTC)
# The key, and so the keyed digests, are the reader's own; the code hash the installation's.
DIGITS = re.compile(r"(?<=sha256:)[0-9a-f]{12}|(?<=\(key )[0-9a-f]{16}")


def example(name: str) -> str:
    match = re.search(rf"<!-- example: {re.escape(name)} -->\n```\w+\n(.*?)```", PAGES, re.S)
    assert match is not None, name
    return match.group(1)


def test_the_batch_and_ledger_show_examples(tmp_path: Path) -> None:
    demo = make_demo(tmp_path / "demo")
    gates_toml = re.search(r"<!-- example: gates.toml -->\n```toml\n(.*?)```", README, re.S)
    assert gates_toml is not None
    gates = parse_gates(gates_toml.group(1))[:1]  # the README's non-inferiority gate
    assert gates[0].rule == "min_difference_lower" and gates[0].threshold == -0.02
    key = LedgerKey(KEY)
    schema = load_schema(demo.schema)
    before = gold_state(demo.gold)
    report = score_files(demo.gold, demo.run("model-v1"), schema=schema)
    record_run(
        demo.ledger, report, key=key, gold=demo.gold, gold_before=before, system="model-v1",
        schema=schema, time=MOMENT,
    )  # fmt: skip
    batch = batch_files(
        demo.gold, str(demo.runs / "*.jsonl"), ledger=demo.ledger, key=key,
        baseline="model-v1", gates=gates, schema=demo.schema, jobs=2, time=MOMENT,
    )  # fmt: skip
    assert batch.summary() == example("batch summary")
    assert batch.exit_status == 1
    shown = ledger_table(read_ledger(demo.ledger))
    assert DIGITS.sub("x", shown) == DIGITS.sub("x", example("ledger show"))
