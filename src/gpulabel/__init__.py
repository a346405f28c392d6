"""gpulabel: find, explain and repair the node labels a GPU Kubernetes cluster runs on.

The library is a functional core: load a :class:`~gpulabel.model.ClusterState`
once (from snapshots or a live cluster), run pure checks that return
:class:`~gpulabel.findings.Finding` records, and render them at the edge.
"""

__version__ = "0.1.0"
