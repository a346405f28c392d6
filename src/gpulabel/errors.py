"""One exception hierarchy: every error a user can cause or meet ends here.

The CLI turns a :class:`GpulabelError` into one line on stderr and its
``exit_code``; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class GpulabelError(Exception):
    """Base class. ``str(err)`` is the one line shown to the user."""

    exit_code = 2


class InputError(GpulabelError):
    """A file or argument the user gave cannot be used.

    ``where`` names the place: a file, ``file:line``, or an argument.
    """

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


class SnapshotError(InputError):
    """A snapshot file is unreadable, not JSON/YAML, or not Kubernetes objects."""


class ManifestError(InputError):
    """A workload manifest is unreadable or invalid."""


class ClusterError(GpulabelError):
    """The API server could not be used: unreachable, refused, or answered an error."""

    def __init__(self, endpoint: str, message: str, status: int | None = None) -> None:
        self.endpoint = endpoint
        self.status = status
        super().__init__(f"{endpoint}: {message}")


class ConfigError(ClusterError):
    """No usable kubeconfig or in-cluster configuration."""


class ForbiddenError(ClusterError):
    """401/403: the credentials are refused or lack a right the command needs."""


class ConflictError(ClusterError):
    """409: the object changed under us (retryable)."""
