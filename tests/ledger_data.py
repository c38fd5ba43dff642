"""The ledger and batch tests' data: the bundled demo files, three runs of them, a key.

``model-v1`` is the demo's predictions; ``model-v2`` answers every fourth of them with
the gold value (so it is better, paired); ``broken`` is ``model-v1`` with its third line
cut short (invalid JSON on line 3).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

DATA = resources.files("chartscore") / "data"
KEY = b"0123456789abcdef-a-test-key-not-a-secret-0123456789"  # 51 bytes, many distinct


@dataclass(frozen=True)
class Demo:
    root: Path
    gold: Path
    schema: Path
    runs: Path
    key: Path
    ledger: Path

    def run(self, name: str) -> Path:
        return self.runs / f"{name}.jsonl"


def write_key(path: Path, secret: bytes = KEY, mode: int = 0o600) -> Path:
    path.write_bytes(secret)
    os.chmod(path, mode)
    return path


def make_demo(root: Path) -> Demo:
    """The demo's gold and schema, three runs in ``runs/``, a key; no ledger yet."""
    root.mkdir(parents=True, exist_ok=True)
    gold = root / "gold.jsonl"
    schema = root / "schema.json"
    gold.write_bytes((DATA / "demo_gold.jsonl").read_bytes())
    schema.write_bytes((DATA / "demo_schema.json").read_bytes())
    runs = root / "runs"
    runs.mkdir(exist_ok=True)
    lines = (DATA / "demo_predictions.jsonl").read_text(encoding="utf-8").splitlines()
    (runs / "model-v1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    truth = {}
    for line in gold.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        truth[row["case_id"], row["field_id"]] = row["value"]
    better = []
    for index, line in enumerate(lines):
        row = json.loads(line)
        if index % 4 == 0:
            key = (row["case_id"], row["field_id"])
            row = {"case_id": key[0], "field_id": key[1], "value": truth[key]}
        better.append(json.dumps(row))
    (runs / "model-v2.jsonl").write_text("\n".join(better) + "\n", encoding="utf-8")
    broken = list(lines)
    broken[2] = broken[2][:-5]
    (runs / "broken.jsonl").write_text("\n".join(broken) + "\n", encoding="utf-8")
    return Demo(root, gold, schema, runs, write_key(root / "ledger.key"), root / "results.jsonl")


def copy_demo(demo: Demo, root: Path) -> Demo:
    """A fresh copy of a demo folder (each test appends to its own ledger)."""
    shutil.copytree(demo.root, root)
    os.chmod(root / "ledger.key", 0o600)
    return Demo(
        root, root / "gold.jsonl", root / "schema.json", root / "runs", root / "ledger.key",
        root / "results.jsonl",
    )  # fmt: skip
