"""pyverify test suite."""
