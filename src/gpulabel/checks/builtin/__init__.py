"""gpulabel's own checks, one definition each (:class:`gpulabel.checks.definition.Check`); the registry
(:mod:`gpulabel.checks.registry`) is the one module that imports them."""
