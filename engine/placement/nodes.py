"""The nodes of a Ray cluster as placement reads them, without Ray (``engine/placement/ray_connect.py`` lists
them): the name a node is shown by (its id, shortened, with its host: unique where hosts share a name) and its
shortest unique name (for the runs table), whether any node can hold what a run asks (refused at once, naming the
largest node, instead of waiting in silence), and the node a run goes to: among the alive nodes that can hold it
and have what it needs, the one the strategy prefers (``spread``: fewest of this engine's runs per CPU; ``pack``:
most), another than the one its last player died on (so one lost node costs one restart even before Ray has
marked it dead)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from engine.event_summary import SHORT

GB = 1024**3
SHORT_ID = 6  # hex digits of Ray's node id shown
SHORTEST_ID = 4  # hex digits at least in a node's short name


def node_name(node_id: str, host: str) -> str:
    """``<first 6 hex digits of the node id>@<host>``: unique in the cluster, readable."""
    short = node_id[:SHORT_ID]
    return f"{short}@{host}" if host else short


def resources_label(resources: Mapping[str, float]) -> str:
    """``1 CPU, 1.75 GB``: what a run asks, as the operator set it."""
    return f"{resources.get('num_cpus', 0):g} CPU, {resources.get('memory', 0) / GB:.3g} GB"


@dataclass(frozen=True)
class Node:
    """A node as Ray's control store has it: its totals (not what is free now)."""

    node_id: str
    host: str
    cpus: float
    memory: float  # bytes
    alive: bool = True

    @property
    def name(self) -> str:
        return node_name(self.node_id, self.host)

    def holds(self, resources: Mapping[str, float]) -> bool:
        """Whether the node could hold a run asking ``resources`` when nothing else plays on it."""
        return self.cpus >= resources.get("num_cpus", 0) and self.memory >= resources.get("memory", 0)

    def label(self) -> str:
        return f"{self.name} with {resources_label({'num_cpus': self.cpus, 'memory': self.memory})}"


def short_name(node_id: str, nodes: list[Node]) -> str:
    """The node's shortest name that no other node of the cluster shares: its host when no other node runs on
    that host, else the fewest hex digits of its id (at least 4) that tell it from the others there, ``@host``."""
    me = next((node for node in nodes if node.node_id == node_id), None)
    if me is None:
        return node_id[:SHORT_ID]
    twins = [node.node_id for node in nodes if node.host == me.host and node.node_id != node_id]
    if me.host and not twins:
        return me.host
    size = SHORTEST_ID
    while size < len(node_id) and any(twin[:size] == node_id[:size] for twin in twins):
        size += 1
    return f"{node_id[:size]}@{me.host}" if me.host else node_id[:size]


def refusal(run_id: str, resources: Mapping[str, float], nodes: list[Node]) -> str:
    """Why no alive node can ever hold ``run_id`` (it would wait for one forever), in one line short enough to
    be shown whole; "" when one can."""
    alive = [node for node in nodes if node.alive]
    if any(node.holds(resources) for node in alive):
        return ""
    asked = f"{run_id}, which asks {resources_label(resources)}"
    if not alive:
        return f"executor: no node of the Ray cluster is alive to play {asked}"
    largest = max(alive, key=lambda node: (node.cpus, node.memory))
    said = f"executor: no Ray node can hold {asked}; the largest is {largest.label()}"
    advice = " (lower `resources` or add a larger node)"
    return said + advice if len(said + advice) <= SHORT else said


def candidates(nodes: list[Node], resources: Mapping[str, float], unfit: Collection[str] = ()) -> list[Node]:
    """The alive nodes that can hold the run and were not found to lack what it needs (``unfit``: node ids)."""
    return [node for node in nodes if node.alive and node.holds(resources) and node.node_id not in unfit]


def choose_node(fit: list[Node], placed: Mapping[str, int], strategy: str = "spread", avoid: str = "") -> str:
    """The node among ``fit`` a run should go to; ``placed``: this engine's runs per node. ``spread``: the one
    with the fewest runs per CPU (then the largest); ``pack``: the one with the most (then the largest); never
    ``avoid`` (the node the run's last player died on) while another is fit. "" when none is."""
    others = [node for node in fit if node.node_id != avoid] or fit
    if not others:
        return ""

    def load(node: Node) -> float:
        return placed.get(node.node_id, 0) / max(node.cpus, 0.01)

    if strategy == "pack":
        best = max(others, key=lambda n: (load(n) > 0, load(n), n.cpus, n.memory, n.node_id))
    else:
        best = min(others, key=lambda n: (load(n), -n.cpus, -n.memory, n.node_id))
    return best.node_id
