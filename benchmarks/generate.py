"""Seeded synthetic gold and prediction JSON Lines files for the benchmark.

A realistic mix: all seven field types (the schema declares ordinal levels,
choices and tolerances), about 20% unanswerable gold, 10% missing and 10%
abstained predictions, case and whitespace variants, number strings, wrong
answers, and about half of the answers carrying an evidence chain.

Run ``python benchmarks/generate.py --rows 100000 --out DIR`` to write
``gold.jsonl``, ``predictions.jsonl`` and ``schema.json`` into DIR.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

FIELDS = (
    ("registry.label", "text"),
    ("hx.smoking", "categorical"),
    ("hx.alcohol", "categorical"),
    ("echo.lvef", "number"),
    ("vitals.weight_kg", "number"),
    ("dx.diabetes", "boolean"),
    ("dx.hypertension", "boolean"),
    ("dx.onset", "date"),
    ("triage.acuity", "ordinal"),
    ("hx.symptoms", "multi"),
)
SCHEMA = {
    "fields": {
        "hx.smoking": {"type": "categorical", "choices": ["never", "former", "current"]},
        "echo.lvef": {"type": "number", "tolerance": "5"},
        "vitals.weight_kg": {"type": "number", "tolerance": "0.5"},
        "dx.onset": {"type": "date", "tolerance_days": 3},
        "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]},
        "hx.symptoms": {
            "type": "multi",
            "choices": ["cough", "fever", "syncope", "dyspnea", "rash"],
        },
    }
}
LABELS = ["Synthetic Alpha", "Synthetic Beta", "Test Gamma", "Test Delta", "Sample Epsilon"]
SYMPTOMS = ["cough", "fever", "syncope", "dyspnea", "rash"]


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _gold_value(rng: random.Random, field_type: str, field_id: str) -> object:
    if field_type == "text":
        return rng.choice(LABELS)
    if field_type == "categorical":
        return rng.choice(
            ["never", "former", "current"]
            if field_id == "hx.smoking"
            else ["none", "light", "heavy"]
        )
    if field_type == "number":
        return (
            rng.randint(15, 75) if field_id == "echo.lvef" else f"{rng.randint(400, 1200) / 10:.1f}"
        )
    if field_type == "boolean":
        return rng.random() < 0.3
    if field_type == "date":
        day = f"20{rng.randint(10, 24)}-{rng.randint(1, 12):02d}"
        return day if rng.random() < 0.2 else f"{day}-{rng.randint(1, 28):02d}"
    if field_type == "ordinal":
        return str(rng.choice([1, 2, 3, 3, 3, 4, 4, 5]))
    return sorted(rng.sample(SYMPTOMS, rng.randint(0, 3)))


def _variant(rng: random.Random, field_type: str, value: object) -> object:
    # A correct answer written the way a model might write it.
    if field_type in ("text", "categorical") and isinstance(value, str):
        return rng.choice([value, value.upper(), f"  {value.title()} ", value.replace(" ", "  ")])
    if field_type == "number":
        return rng.choice([value, str(value), f" {value} "])
    if field_type == "multi" and isinstance(value, list):
        return [item.title() for item in reversed(value)]
    return value


def _wrong(rng: random.Random, field_type: str, field_id: str, value: object) -> object:
    if field_type == "number":
        return rng.choice([rng.randint(15, 75), "n/a", f"{rng.randint(400, 1200) / 10} kg"])
    if field_type == "date" and isinstance(value, str) and len(value) == 10:
        return value[:8] + f"{min(28, max(1, int(value[8:]) + rng.choice([-5, -1, 2, 9]))):02d}"
    if field_type == "ordinal":
        return str(rng.randint(1, 5))
    return _gold_value(rng, field_type, field_id)


def _evidence(rng: random.Random, case_id: str, field_id: str) -> dict[str, object]:
    fact = _digest(f"{case_id}/{field_id}")
    sources = [
        {
            "source_digest": _digest(f"{case_id}/note/{rng.randint(0, 4)}"),
            "start_offset": (start := rng.randint(0, 50_000)),
            "end_offset": start + rng.randint(3, 80),
            "kind": "clinical_record" if rng.random() < 0.9 else "generated_text",
        }
        for _ in range(rng.randint(1, 2))
    ]
    if len(sources) == 2 and sources[0]["source_digest"] == sources[1]["source_digest"]:
        sources[1]["start_offset"] = sources[0]["end_offset"] + 1  # type: ignore[operator]
        sources[1]["end_offset"] = sources[1]["start_offset"] + 5  # type: ignore[operator]
    return {
        "normalized_fact_digest": fact,
        "evidence_chain": {
            "field_id": field_id,
            "source_locations": sources,
            "normalized_fact_digest": fact if rng.random() < 0.95 else _digest("other"),
            "transformation_kind": "model",
            "transformation_digest": _digest("benchmark-model-v1"),
            "uncertainty": round(rng.random(), 3),
            "reviewer_state": rng.choice(["pending", "approved", "rejected"]),
        },
    }


def generate(rows: int, out: Path, seed: int = 20261130) -> tuple[int, int]:
    """Write the three files; returns (gold rows, prediction rows)."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    predictions = 0
    with (
        (out / "gold.jsonl").open("w", encoding="utf-8") as gold_file,
        (out / "predictions.jsonl").open("w", encoding="utf-8") as prediction_file,
    ):
        for row in range(rows):
            field_id, field_type = FIELDS[row % len(FIELDS)]
            case_id = f"bench-{row // len(FIELDS):08d}"
            value = None if rng.random() < 0.2 else _gold_value(rng, field_type, field_id)
            gold_file.write(
                json.dumps(
                    {
                        "case_id": case_id,
                        "field_id": field_id,
                        "field_type": field_type,
                        "value": value,
                    }
                )
                + "\n"
            )
            draw = rng.random()
            if draw < 0.1:
                continue  # missing
            answer: dict[str, object] = {"case_id": case_id, "field_id": field_id}
            if draw < 0.2:
                answer["value"] = None  # abstained
            elif value is None:
                answer["value"] = _wrong(rng, field_type, field_id, value)
            elif rng.random() < 0.75:
                answer["value"] = _variant(rng, field_type, value)
            else:
                answer["value"] = _wrong(rng, field_type, field_id, value)
            if answer["value"] is not None and rng.random() < 0.55:
                answer.update(_evidence(rng, case_id, field_id))
            prediction_file.write(json.dumps(answer) + "\n")
            predictions += 1
    (out / "schema.json").write_text(json.dumps(SCHEMA, indent=2) + "\n", encoding="utf-8")
    return rows, predictions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()
    gold, predictions = generate(args.rows, args.out, args.seed)
    print(f"wrote {gold} gold rows and {predictions} predictions to the output folder")


if __name__ == "__main__":
    main()
