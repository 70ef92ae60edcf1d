"""Retrieval-quality evaluation: datasets, metrics, suites and reports."""
