"""``kubeconfig``: a kubeconfig that acts as a ServiceAccount, to run ``gpulabel monitor`` (or ``sync``) outside
the cluster with exactly the rights the chart gives it.

The cluster entry (server, CA) is the current kubeconfig's; the user is a token of the ServiceAccount
from a TokenRequest (what ``kubectl create token`` asks for), valid for ``duration``. The file is
written with mode 0600 (it holds a credential) through ``cluster.files.write_file``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from gpulabel.app.config import parse_duration
from gpulabel.app.session import Outcome, Session
from gpulabel.errors import ClusterError, InputError
from gpulabel.model.findings import Result

__all__ = ["GENERATOR_MARK", "KubeconfigOptions", "run_kubeconfig", "token_kubeconfig"]


@dataclass(frozen=True, slots=True)
class KubeconfigOptions:
    """``service_account`` ``NAMESPACE/NAME``; ``output`` the file; ``duration`` the token's lifetime."""

    service_account: str
    output: str
    duration: str = "1h"
    namespace: str = field(init=False, default="")
    account: str = field(init=False, default="")
    seconds: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        namespace, slash, account = self.service_account.partition("/")
        if not slash or not namespace or not account or "/" in account:
            raise InputError("--service-account", f"{self.service_account!r} is not NAMESPACE/NAME")
        seconds = int(parse_duration(self.duration, "--duration"))
        if seconds < 600:  # the API server's minimum expirationSeconds
            raise InputError("--duration", f"{self.duration!r}: at least 10m")
        object.__setattr__(self, "namespace", namespace)
        object.__setattr__(self, "account", account)
        object.__setattr__(self, "seconds", seconds)


def token_kubeconfig(server: str, ca: bytes | None, verify: bool, name: str, token: str) -> dict[str, Any]:
    """A kubeconfig of one cluster (``server``, ``ca`` or the system's CAs, TLS ``verify``), one user holding
    ``token``, one context ``name`` that is current."""
    cluster: dict[str, Any] = {"server": server}
    if ca is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
    if not verify:
        cluster["insecure-skip-tls-verify"] = True
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": name.split("/")[0]}}],
        "current-context": name,
    }


GENERATOR_MARK = b"# written by gpulabel kubeconfig"  # cluster/files.py replaces only a kubeconfig it wrote


def run_kubeconfig(session: Session, opts: KubeconfigOptions) -> Outcome:
    """Ask for a token of the ServiceAccount and write the kubeconfig that uses it."""
    import yaml

    from gpulabel.cluster import writes
    from gpulabel.cluster.files import write_file

    client = session.client()
    token = writes.request_token(client, opts.namespace, opts.account, opts.seconds)
    if not token:
        raise ClusterError(client.endpoint, f"no token in the answer for serviceaccount {opts.service_account}")
    server, ca, verify = client.trust()
    config = token_kubeconfig(server, ca, verify, opts.service_account, token)
    data = GENERATOR_MARK + b"\n" + yaml.safe_dump(config, sort_keys=False).encode()
    write_file(opts.output, data, marker=GENERATOR_MARK, mode=0o600)
    return Outcome(Result("kubeconfig", ()), 0)
