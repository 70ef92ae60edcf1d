"""Golden cases: case files, what a case runs (its agent or a target), what its run observed
(``CaseRun``), the checks over it, goldens written and compared, live runs."""
