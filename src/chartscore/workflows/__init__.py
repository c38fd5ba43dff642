"""File-level entry points: read -> score -> document -> write (score, compare, share).

They hold values while they run and return only value-free documents.
"""
