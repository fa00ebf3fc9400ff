"""Virtual-time test agents, importable as fixture_agents_vt:ClockAgent."""

from test_virtual_time import ClockAgent, NoStatusAgent

__all__ = ["ClockAgent", "NoStatusAgent"]
