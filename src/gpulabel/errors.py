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


class WatchExpired(ClusterError):
    """410 Gone on a watch: its resourceVersion is too old; relist, then watch again."""

    def __init__(self, path: str) -> None:
        super().__init__(path, "410 Gone: the watch's resourceVersion is too old", 410)


# -- what the pure core refuses, in the upstream component's own words ----------------
# The checks catch these and turn them into findings or into an InputError naming the
# file and field; ``str()`` is the upstream text, so they compare equal to the real thing.


class QuantityError(GpulabelError, ValueError):
    """A string apimachinery's ``resource.ParseQuantity`` refuses; ``str()`` is its message."""


class SemverError(GpulabelError, ValueError):
    """A string ``blang/semver`` ``Parse`` refuses; ``str()`` is blang's message."""


class CelError(GpulabelError):
    """A CEL expression failed at run time; ``str()`` is the scheduler's text."""


class AllocationError(GpulabelError):
    """The DRA allocator stopped with an error for one node; ``str()`` is the scheduler's text."""


class ExpressionError(GpulabelError, ValueError):
    """An invalid NodeFeatureRule expression, or an element value it cannot compare: nfd-master fails the rule."""


class TemplateError(GpulabelError, ValueError):
    """A NodeFeatureRule template does not parse or fails to execute, as Go's text/template would fail."""


class Unsupported(TemplateError):
    """A template uses a Sprig function gpulabel does not implement: the prediction is unknown."""
