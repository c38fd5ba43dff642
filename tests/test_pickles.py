"""Records pickled before the layout (flat module paths) keep loading."""

from __future__ import annotations

import base64
import pickle
from decimal import Decimal

from chartscore import FieldSpec, FieldType, GoldField, Prediction, Schema

# pickle.dumps([GoldField("c-001", "hx.smoking", CATEGORICAL, "former"),
#               Prediction("c-001", "hx.smoking", "Former"), FieldType.NUMBER,
#               FieldSpec(NUMBER, tolerance=1), Schema({"echo.lvef": that spec})], protocol=4)
# written by chartscore at commit dc3be73, when the classes lived in chartscore.model and
# chartscore.schema. Invented values only.
OLD_PICKLE = base64.b64decode(
    "gASVVwEAAAAAAABdlCiMEGNoYXJ0c2NvcmUubW9kZWyUjAlHb2xkRmllbGSUk5QojAVjLTAwMZSMCmh4LnNtb2tp"
    "bmeUaAGMCUZpZWxkVHlwZZSTlIwLY2F0ZWdvcmljYWyUhZRSlIwGZm9ybWVylHSUUpRoAYwKUHJlZGljdGlvbpST"
    "lChoBGgFjAZGb3JtZXKUTk50lFKUaAeMBm51bWJlcpSFlFKUjBFjaGFydHNjb3JlLnNjaGVtYZSMCUZpZWxkU3Bl"
    "Y5STlCmBlH2UKIwKZmllbGRfdHlwZZRoFYwGbGV2ZWxzlCmMB2Nob2ljZXOUTowJdG9sZXJhbmNllIwHZGVjaW1h"
    "bJSMB0RlY2ltYWyUk5SMATGUhZRSlIwOdG9sZXJhbmNlX2RheXOUTnViaBaMBlNjaGVtYZSTlCmBlH2UjAZmaWVs"
    "ZHOUfZSMCWVjaG8ubHZlZpRoGXNzYmUu"
)


def test_the_pickle_names_the_old_module_paths() -> None:
    # Otherwise the test below would not exercise the aliases.
    assert b"chartscore.model" in OLD_PICKLE
    assert b"chartscore.schema" in OLD_PICKLE
    assert b"chartscore.records" not in OLD_PICKLE


def test_records_pickled_before_the_layout_load() -> None:
    gold, prediction, field_type, spec, schema = pickle.loads(OLD_PICKLE)
    assert gold == GoldField("c-001", "hx.smoking", FieldType.CATEGORICAL, "former")
    assert prediction == Prediction("c-001", "hx.smoking", "Former")
    assert field_type is FieldType.NUMBER
    assert spec == FieldSpec(FieldType.NUMBER, tolerance=Decimal(1))
    assert schema == Schema({"echo.lvef": spec})


def test_records_pickled_now_round_trip() -> None:
    records = [
        GoldField("c-001", "hx.smoking", FieldType.CATEGORICAL, "former"),
        Prediction("c-001", "hx.smoking", "Former"),
        FieldType.NUMBER,
        Schema({"echo.lvef": FieldSpec(FieldType.NUMBER, tolerance=1)}),
    ]
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(records, protocol=protocol)) == records
