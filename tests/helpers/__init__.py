"""Helpers shared by more than one test folder (and by benchmarks/): inner pytest runs, journal
readers, the failing-login scenario, the in-process sim screen, the healing cases, memory patches."""
