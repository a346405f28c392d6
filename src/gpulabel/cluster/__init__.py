"""Reading and writing the cluster: the API client, snapshots, bundles. Importing the package gives the pure
ConfigMap reader its YAML decoder (:mod:`gpulabel.cluster.autoscalerstatus`): every reader of API objects is in it."""

from gpulabel.cluster import autoscalerstatus as _autoscalerstatus  # noqa: F401  (registers the decoder)
