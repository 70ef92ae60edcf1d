"""The pytest plugins, the top floor: options, golden cases and retrieval suites as tests, the
run record and the summaries. Thin: the work is in the rooms below."""
