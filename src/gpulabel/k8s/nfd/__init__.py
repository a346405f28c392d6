"""Node Feature Discovery's NodeFeatureRule engine, as nfd-master evaluates it (NFD v0.19).

``objects`` reads NodeFeature and NodeFeatureRule objects into typed records,
``expression`` evaluates match expressions, ``gotemplate`` runs the Go
text/template subset rule templates use, ``rule`` executes one rule and says
why it did not match, ``master`` is nfd-master's per-node pipeline (merging
NodeFeatures, rule order and ``rule.matched``, prefixing, the namespace
rules, taints and extended resources). Facts and their upstream sources:
``docs/nfd.md``.
"""
