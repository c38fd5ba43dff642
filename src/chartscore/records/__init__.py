"""Records that hold patient values: validated rows, their rules and normalization.

Everything in this package may hold a value, a case id or a digest. Nothing in the
value-free layers (statistics, documents, disclosure, render) imports it.
"""
