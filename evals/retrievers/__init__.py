"""Retrievers of other libraries, each written as its library's docs write it, benchmarked by the
``kitchen_targets`` suite (fixtures/retrieval/kitchen_targets.yaml) through a factory function."""
