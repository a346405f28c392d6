"""``rules``: what nfd-master would write on each node, and nfd-master's configuration file.

The configuration (``--nfd-config``, nfd-master's own YAML format) is read here
once and handed to the checks as a typed :class:`~gpulabel.k8s.nfd.master.NfdConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpulabel.app.session import Outcome, Session
from gpulabel.errors import InputError
from gpulabel.k8s.nfd.master import NfdConfig
from gpulabel.k8s.nfd.objects import NFD_KINDS

__all__ = ["RulesOptions", "load_nfd_config", "run_rules"]


def load_nfd_config(path: str | None) -> NfdConfig:
    """nfd-master's configuration from ``path`` (YAML, nfd-master's own format), or its defaults."""
    from gpulabel.k8s.nfd.master import config_from_mapping

    if not path:
        return NfdConfig()
    import yaml

    from gpulabel.app.config import read_text

    text = read_text(path)
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml bounds nesting
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise InputError(where, f"not YAML: {getattr(err, 'problem', None) or err}") from None
    if doc is None:
        return NfdConfig()
    if not isinstance(doc, dict):
        raise InputError(path, "nfd-master configuration must be a mapping")
    return config_from_mapping(doc, path)


@dataclass(frozen=True, slots=True)
class RulesOptions:
    node: str | None = None  # only this node
    config: NfdConfig = field(default_factory=NfdConfig)


def run_rules(session: Session, opts: RulesOptions) -> Outcome:
    """Per node, what nfd-master would write and why a rule did not match; exit 0 (drift is ``check``'s), 2 when
    the input holds no node (app/selected.py)."""
    from gpulabel.app.selected import not_found, refuse_empty
    from gpulabel.checks.nfd.rules import rules_result

    state = session.state(["Node", *NFD_KINDS])
    if opts.node and state.node(opts.node) is None:
        raise InputError(f"node {opts.node}", not_found(opts.node, state))
    return refuse_empty(Outcome(rules_result(state, opts.config, opts.node)), session.source, state)
