"""Properties: Go's Atoi on any int64, the flag/attribute union, and the memo that shares rule outcomes
between nodes giving exactly what evaluating every node on its own gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpulabel.k8s.nfd.expression import Expression, evaluate, go_atoi, match_multi
from gpulabel.k8s.nfd.master import Memo, NfdConfig, process_node
from gpulabel.k8s.nfd.objects import Features, NodeFeature, NodeFeatureRule, Rule, Term


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_atoi_reads_every_int64_with_or_without_a_plus(n: int) -> None:
    assert go_atoi(str(n)) == n
    if n >= 0:
        assert go_atoi(f"+{n}") == n


@given(st.text(alphabet=" x.\t_e", min_size=1), st.integers(0, 99))
def test_atoi_refuses_anything_but_sign_and_digits(junk: str, n: int) -> None:
    for text in (junk, f"{n}{junk}", f"{junk}{n}"):
        try:
            go_atoi(text)
        except ValueError:
            continue
        raise AssertionError(text)


NAMES = st.sampled_from(["a", "b", "c", "d"])
VALUES = st.sampled_from(["1", "5", "10", "true", "x"])
OPS = st.sampled_from(["Exists", "DoesNotExist", "In", "NotIn", "Gt", "IsTrue"])


@st.composite
def expressions(draw: st.DrawFn) -> Expression:
    op = draw(OPS)
    if op in ("Exists", "DoesNotExist", "IsTrue"):
        return Expression(op)
    if op == "Gt":
        return Expression(op, (draw(st.sampled_from(["1", "5"])),))
    return Expression(op, tuple(draw(st.lists(VALUES, min_size=1, max_size=2))))


@given(
    st.lists(st.tuples(NAMES, expressions()), max_size=3, unique_by=lambda p: p[0]),
    st.frozensets(NAMES),
    st.dictionaries(NAMES, st.sampled_from(["1", "5", "10"])),  # numbers: Gt on "true" is an error
)
def test_flags_and_attributes_are_a_union_per_expression(
    exprs: list[tuple[str, Expression]], keys: frozenset[str], values: dict[str, str]
) -> None:
    def holds(name: str, e: Expression) -> bool:
        k = evaluate(e, name in keys, None)
        v = evaluate(e, name in values, values.get(name))
        return (k and v) if e.op == "DoesNotExist" else (k or v)

    ok, elems = match_multi(tuple(exprs), keys, values, None)
    assert ok == all(holds(n, e) for n, e in exprs)
    assert [el["Name"] for el in elems] == sorted(el["Name"] for el in elems)


@st.composite
def features(draw: st.DrawFn) -> Features:
    return Features(
        {"f.flag": draw(st.frozensets(NAMES))},
        {"f.attr": draw(st.dictionaries(NAMES, st.sampled_from(["1", "5", "10", "true"])))},
        {"f.inst": tuple(draw(st.lists(st.dictionaries(NAMES, st.sampled_from(["1", "5"])), max_size=2)))},
    )


@st.composite
def rules(draw: st.DrawFn) -> Rule:
    feature = draw(st.sampled_from(["f.flag", "f.attr", "f.inst", "rule.matched"]))
    exprs = draw(st.lists(st.tuples(NAMES, expressions()), max_size=2, unique_by=lambda p: p[0]))
    label = draw(NAMES)
    return Rule(f"r-{label}", labels={label: "true"}, vars={f"v{label}": "1"},
                match_features=(Term(feature, tuple(exprs)),))  # fmt: skip


@settings(max_examples=60)
@given(st.lists(features(), min_size=1, max_size=6), st.lists(rules(), min_size=1, max_size=5))
def test_the_memo_changes_nothing(pool: list[Features], rule_list: list[Rule]) -> None:
    objs = [NodeFeatureRule("obj", tuple(rule_list))]
    # nodes share feature objects (as interned NodeFeatures do) by drawing from a small pool
    nfs = [NodeFeature("nfd", f"n{i}", f"n{i}", pool[i % len(pool)], {}) for i in range(12)]
    memo = Memo()
    for nf in nfs:
        shared = process_node(nf.name, [nf], objs, NfdConfig(), memo)
        alone = process_node(nf.name, [nf], objs, NfdConfig())
        assert shared == alone
