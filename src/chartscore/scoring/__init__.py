"""Scoring: join gold and predictions on (case_id, field_id) and count into a tally.

The last place a value exists; what leaves this package is integers (a Tally).
"""
