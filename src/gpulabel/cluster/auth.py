"""Where the cluster is and who we are: kubeconfig or the in-cluster service account.

Configuration and authentication come from the official ``kubernetes``
client (kubeconfig with contexts, client certificates, tokens, exec plugins
of any apiVersion, in-cluster service accounts); its model classes are never
used. It is imported only here, when a command needs a cluster, so
``gpulabel --help`` stays fast.
"""

from __future__ import annotations

import os
from typing import Any

from gpulabel.errors import ConfigError

__all__ = ["SERVICE_ACCOUNT_DIR", "load_configuration"]

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def load_configuration(
    kubeconfig: str | None = None, context: str | None = None, service_account_dir: str = SERVICE_ACCOUNT_DIR
) -> Any:
    """A ``kubernetes.client.Configuration`` from ``kubeconfig`` (or $KUBECONFIG, ~/.kube/config)
    or, when there is none and we run in a pod, from the service account.

    Problems raise :class:`ConfigError` naming the file: one line, exit 2.
    """
    from kubernetes import client, config
    from kubernetes.config.incluster_config import InClusterConfigLoader

    cfg = client.Configuration()
    where = kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
    try:
        if kubeconfig or context or os.environ.get("KUBECONFIG") or os.path.exists(where):
            config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=kubeconfig, context=context, client_configuration=cfg, persist_config=False
            )
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            where = f"in-cluster service account ({service_account_dir})"
            InClusterConfigLoader(
                token_filename=os.path.join(service_account_dir, "token"),
                cert_filename=os.path.join(service_account_dir, "ca.crt"),
            ).load_and_set(cfg)  # type: ignore[no-untyped-call]
        else:
            raise ConfigError(where, "no kubeconfig found and not running in a cluster (give --kubeconfig)")
    except config.ConfigException as err:
        raise ConfigError(where, f"cannot use the configuration: {err}") from None
    except OSError as err:
        raise ConfigError(where, err.strerror or str(err)) from None
    except (ValueError, TypeError, KeyError) as err:
        raise ConfigError(where, f"malformed kubeconfig: {err}") from None
    cfg.retries = 0  # cluster/retry.py retries, with backoff and a bound
    return cfg
