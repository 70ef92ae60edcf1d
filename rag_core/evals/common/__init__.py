"""The evaluation wing's bottom floor: what every room uses and nothing here depends on a room.

Paths as messages show them, YAML read within bounds and written for review, bounded diffs,
the harness's errors, a failed check as data, exceptions as a person reads them.
"""
