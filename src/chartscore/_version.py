"""The scorer's version, stamped into every report."""

__version__ = "0.1.0"
