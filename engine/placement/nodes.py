"""The nodes of a Ray cluster as placement reads them, without Ray (``engine/placement/ray_connect.py`` lists
them): the name a node is shown by (its id, shortened, with its host: unique where hosts share a name), whether
any node can hold what a run asks (refused at once, naming the largest node, instead of waiting in silence),
and the node a replacement actor is steered to after a failure (another alive node that can hold it, so one lost
node costs one restart even before Ray has marked it dead)."""

from __future__ import annotations

from dataclasses import dataclass

GB = 1024**3
SHORT_ID = 6  # hex digits of Ray's node id shown


def node_name(node_id: str, host: str) -> str:
    """``<first 6 hex digits of the node id>@<host>``: unique in the cluster, readable."""
    short = node_id[:SHORT_ID]
    return f"{short}@{host}" if host else short


def resources_label(resources: dict[str, float]) -> str:
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

    def holds(self, resources: dict[str, float]) -> bool:
        """Whether the node could hold a run asking ``resources`` when nothing else plays on it."""
        return self.cpus >= resources.get("num_cpus", 0) and self.memory >= resources.get("memory", 0)

    def label(self) -> str:
        return f"{self.name} with {resources_label({'num_cpus': self.cpus, 'memory': self.memory})}"


def refusal(run_id: str, resources: dict[str, float], nodes: list[Node]) -> str:
    """Why no alive node can ever hold ``run_id`` (it would wait for one forever); "" when one can."""
    alive = [node for node in nodes if node.alive]
    if any(node.holds(resources) for node in alive):
        return ""
    asked = f"{run_id} asks {resources_label(resources)}"
    if not alive:
        return f"executor: no node of the Ray cluster is alive: {asked}"
    largest = max(alive, key=lambda node: (node.cpus, node.memory))
    return (
        f"executor: no node of the Ray cluster can hold it: {asked}, the largest node is {largest.label()}"
        " (lower the run's `resources` or `executor.resources`, or add a larger node)"
    )


def pick_node(nodes: list[Node], avoid: str, resources: dict[str, float]) -> str:
    """The node a replacement actor should go to after its predecessor failed on node ``avoid``: the alive
    node other than ``avoid`` that can hold the run, the largest first; "" when there is none (Ray chooses,
    the failed node included: it may have been only the actor that died)."""
    others = [n for n in nodes if n.alive and n.node_id != avoid and n.holds(resources)]
    if not avoid or not others:
        return ""
    return max(others, key=lambda node: (node.cpus, node.memory, node.node_id)).node_id
