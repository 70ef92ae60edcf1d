"""Every golden case under fixtures/goldens/ (see README, "Golden cases")."""


def test_golden_case(golden_case, golden_harness):
    golden_harness.check(golden_case)
