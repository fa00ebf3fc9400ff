"""Shared constants for tests."""

FORGETFUL = "fixture_agents:ForgetfulAgent"
