"""NFD's set-level match tests as data rows (expression-api_test.go at NFD v0.19): TestMatchKeys,
TestMatchValues, TestMatchInstances, TestMatchKeyNames, TestMatchValueNames,
TestMatchInstanceAttributeNames, TestMatchMulti and TestMatchNamesMulti; each row names its case."""

from __future__ import annotations

from typing import Any

import pytest

from gpulabel.k8s.nfd.expression import (
    Expression,
    ExpressionError,
    match_instances,
    match_keys,
    match_multi,
    match_names_multi,
    match_values,
)

E = Expression
ERR = "error"
X = {  # shorthand expressions
    "dne": E("DoesNotExist"),
    "ex": E("Exists"),
    "any": E(""),
}


def s(*pairs: tuple[str, Expression]) -> tuple[tuple[str, Expression], ...]:
    return pairs


MATCH_KEYS = [
    ("empty expression and nil input", s(), None, True, []),
    ("empty expression and empty input", s(), set(), True, []),
    ("empty expression with non-empty input", s(), {"foo"}, True, []),
    ("expressions match", s(("foo", X["dne"]), ("bar", X["ex"])), {"bar", "baz", "buzz"}, True,
     [{"Name": "bar"}, {"Name": "foo"}]),
    ("expression does not match", s(("foo", X["dne"]), ("bar", X["ex"])), {"foo", "bar", "baz"}, False, []),
    ("op that never matches", s(("foo", E("In", ("bar",))), ("bar", X["ex"])), {"bar", "baz"}, False, []),
    ("error in expression", s(("foo", E("Exists", ("bar",))), ("bar", X["ex"])), {"bar"}, ERR, []),
]  # fmt: skip


@pytest.mark.parametrize(("case", "exprs", "keys", "want", "out"), MATCH_KEYS, ids=[r[0] for r in MATCH_KEYS])
def test_match_keys(case: str, exprs: Any, keys: set[str] | None, want: Any, out: list[dict[str, str]]) -> None:
    k = None if keys is None else frozenset(keys)
    if want == ERR:
        with pytest.raises(ExpressionError):
            match_keys(exprs, k)
    else:
        assert match_keys(exprs, k) == (want, out)


THREE = s(("foo", X["ex"]), ("bar", E("In", ("val", "wal"))), ("baz", E("Gt", ("10",))))
MATCH_VALUES = [
    ("1", s(), None, True, []),
    ("2", s(), {}, True, []),
    ("3", s(), {"foo": "bar"}, True, []),
    ("4", THREE, {"bar": "val"}, False, []),
    ("5", THREE, {"foo": "1", "bar": "val", "baz": "123", "buzz": "light"}, True,
     [{"Name": "bar", "Value": "val"}, {"Name": "baz", "Value": "123"}, {"Name": "foo", "Value": "1"}]),
    ("5 (second)", s(("foo", X["ex"]), ("bar", E("In", ("val",))), ("baz", E("Gt", ("10",)))),
     {"foo": "1", "bar": "val", "baz": "123.0"}, ERR, []),
]  # fmt: skip


@pytest.mark.parametrize(("case", "exprs", "values", "want", "out"), MATCH_VALUES, ids=[r[0] for r in MATCH_VALUES])
def test_match_values(case: str, exprs: Any, values: dict[str, str] | None, want: Any, out: Any) -> None:
    if want == ERR:
        with pytest.raises(ExpressionError):
            match_values(exprs, values)
    else:
        assert match_values(exprs, values) == (want, out)


FOO_BAR_LT = s(("foo", X["ex"]), ("bar", E("Lt", ("10",))))
MATCH_INSTANCES = [
    ("1", s(), None, False, []),  # nil instances
    ("2", s(), [], False, []),  # zero instances
    ("3", s(), [{}], True, [{}]),  # one empty instance
    ("4", FOO_BAR_LT, [{"foo": "1"}, {"bar": "1"}], False, []),
    ("5", FOO_BAR_LT, [{"foo": "1"}, {"foo": "2", "bar": "1"}], True, [{"foo": "2", "bar": "1"}]),
    ("6", s(("bar", E("Lt", ("10",)))), [{"foo": "1"}, {"bar": "0x1"}], ERR, []),
]


@pytest.mark.parametrize(
    ("case", "exprs", "insts", "want", "out"), MATCH_INSTANCES, ids=[r[0] for r in MATCH_INSTANCES]
)
def test_match_instances(case: str, exprs: Any, insts: Any, want: Any, out: Any) -> None:
    if want == ERR:
        with pytest.raises(ExpressionError):
            match_instances(exprs, insts or ())
    else:
        assert match_instances(exprs, insts or ()) == (want, out)


K12 = {"key1", "key2"}
V12 = {"key1": "val1", "key2": "val2"}
# (test, case, expression, keys, values, instances, result, output)
NAMES = [
    ("TestMatchKeyNames", "empty input", X["any"], set(), None, None, False, []),
    ("TestMatchKeyNames", "MatchAny", X["any"], K12, None, None, True, [{"Name": "key1"}, {"Name": "key2"}]),
    ("TestMatchKeyNames", "MatchExists", X["ex"], K12, None, None, True, [{"Name": "key1"}, {"Name": "key2"}]),
    ("TestMatchKeyNames", "MatchDoesNotExist", X["dne"], K12, None, None, False, []),
    ("TestMatchKeyNames", "MatchIn matches", E("In", ("key1",)), K12, None, None, True, [{"Name": "key1"}]),
    ("TestMatchKeyNames", "MatchIn no match", E("In", ("key3",)), K12, None, None, False, []),
    ("TestMatchKeyNames", "MatchNotIn", E("NotIn", ("key1",)), K12, None, None, True, [{"Name": "key2"}]),
    ("TestMatchKeyNames", "error", E("Exists", ("key1",)), K12, None, None, ERR, []),
    ("TestMatchValueNames", "empty input", X["any"], None, {}, None, False, []),
    ("TestMatchValueNames", "MatchExists", X["ex"], None, V12, None, True,
     [{"Name": "key1", "Value": "val1"}, {"Name": "key2", "Value": "val2"}]),
    ("TestMatchValueNames", "MatchDoesNotExist", X["dne"], None, V12, None, False, []),
    ("TestMatchValueNames", "MatchIn matches", E("In", ("key1",)), None, V12, None, True,
     [{"Name": "key1", "Value": "val1"}]),
    ("TestMatchValueNames", "MatchIn no match", E("In", ("key3",)), None, V12, None, False, []),
    ("TestMatchValueNames", "MatchNotIn", E("NotIn", ("key1",)), None, V12, None, True,
     [{"Name": "key2", "Value": "val2"}]),
    ("TestMatchValueNames", "error", E("NotIn"), None, V12, None, ERR, []),
    ("TestMatchInstanceAttributeNames", "empty input", X["any"], None, None, [], False, []),
    ("TestMatchInstanceAttributeNames", "no match", E("In", ("foo",)), None, None, [{"bar": "1"}, {"baz": "2"}],
     False, []),
    ("TestMatchInstanceAttributeNames", "match", E("In", ("foo",)), None, None,
     [{"foo": "1"}, {"bar": "2"}, {"foo": "3", "baz": "4"}], True, [{"foo": "1"}, {"foo": "3", "baz": "4"}]),
    ("TestMatchInstanceAttributeNames", "error", E("In"), None, None, [{"foo": "1"}], ERR, []),
    ("TestMatchNamesMulti", "nil input", X["any"], None, None, None, False, []),
    ("TestMatchNamesMulti", "empty input keys", X["any"], set(), None, None, False, []),
    ("TestMatchNamesMulti", "empty input values", X["any"], None, {}, None, False, []),
    ("TestMatchNamesMulti", "empty input instances", X["any"], None, None, [], False, []),
    ("TestMatchNamesMulti", "input keys match", X["ex"], K12, None, None, True, [{"Name": "key1"}, {"Name": "key2"}]),
    ("TestMatchNamesMulti", "input keys do not match", X["dne"], K12, None, None, False, []),
    ("TestMatchNamesMulti", "input keys error", E("In"), K12, None, None, ERR, []),
    ("TestMatchNamesMulti", "input values match", E("In", ("key1",)), None, V12, None, True,
     [{"Name": "key1", "Value": "val1"}]),
    ("TestMatchNamesMulti", "input values do not match", E("In", ("key3",)), None, V12, None, False, []),
    ("TestMatchNamesMulti", "input values error", E("In"), None, V12, None, ERR, []),
    ("TestMatchNamesMulti", "input instances match", E("In", ("foo",)), None, None,
     [{"foo": "1"}, {"bar": "2"}, {"foo": "3", "baz": "4"}], True, [{"foo": "1"}, {"foo": "3", "baz": "4"}]),
    ("TestMatchNamesMulti", "input instances do not match", E("In", ("foo",)), None, None,
     [{"bar": "1"}, {"baz": "2"}], False, []),
    ("TestMatchNamesMulti", "input instances error", E("In"), None, None, [{"bar": "1"}], ERR, []),
    ("TestMatchNamesMulti", "input keys, values and instances match", E("In", ("key2",)), K12, V12,
     [{"key1": "1"}, {"key1": "2"}, {"key1": "3", "key2": "4"}], True,
     [{"Name": "key2"}, {"Name": "key2", "Value": "val2"}, {"key1": "3", "key2": "4"}]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("test", "case", "e", "keys", "values", "insts", "want", "out"), NAMES, ids=[f"{r[0]}/{r[1]}" for r in NAMES]
)
def test_match_names(
    test: str, case: str, e: Expression, keys: Any, values: Any, insts: Any, want: Any, out: Any
) -> None:
    k = None if keys is None else frozenset(keys)
    if want == ERR:
        with pytest.raises(ExpressionError):
            match_names_multi(e, k, values, insts)
    else:
        assert match_names_multi(e, k, values, insts) == (want, out)


KV_IN = s(("foo", E("In", ("1",))), ("baz", X["ex"]))
IK = {"bar", "baz", "qux"}
IV = {"foo": "1", "bar": "2", "quux": "3"}
# TestMatchMulti: (case, exprs, keys, values, instances, result, output)
MULTI = [
    ("empty expression and nil input", s(), None, None, None, False, []),
    ("empty expression and empty input keys", s(), set(), {}, [], True, []),
    ("empty expression and empty input values", s(), None, {}, None, True, []),
    ("empty expression and empty input instances", s(), None, None, [], False, []),
    ("empty expression and one input instance with empty attributes", s(), None, None, [{}], True, [{}]),
    ("empty expression", s(), None, {"foo": "bar"}, None, True, []),
    ("keys match", s(("foo", X["dne"]), ("bar", X["ex"])), {"bar", "baz", "buzz"}, None, None, True,
     [{"Name": "bar"}, {"Name": "foo"}]),
    ("keys do not match", s(("foo", X["dne"]), ("bar", X["ex"])), {"foo", "bar", "baz"}, None, None, False, []),
    ("keys error", s(("foo", E("Exists", ("val",)))), {"bar", "baz", "buzz"}, None, None, ERR, []),
    ("values match", THREE, None, {"foo": "1", "bar": "val", "baz": "123", "buzz": "light"}, None, True,
     [{"Name": "bar", "Value": "val"}, {"Name": "baz", "Value": "123"}, {"Name": "foo", "Value": "1"}]),
    ("values do not match", THREE, None, {"bar": "val"}, None, False, []),
    ("values error", s(("bar", E("In"))), None, {"foo": "1", "bar": "val", "baz": "123", "buzz": "light"}, None,
     ERR, []),
    ("instances match", FOO_BAR_LT, None, None, [{"foo": "1"}, {"foo": "2", "bar": "1"}], True,
     [{"foo": "2", "bar": "1"}]),
    ("instances do not match", s(("foo", X["ex"]), ("baz", E("Lt", ("10",)))), None, None,
     [{"foo": "1"}, {"bar": "1"}], False, []),
    ("instances error", s(("foo", E("In"))), None, None, [{"foo": "1"}, {"foo": "2", "bar": "1"}], ERR, []),
    ("multi: keys and values either matches", KV_IN, IK, IV, None, True,
     [{"Name": "baz"}, {"Name": "foo", "Value": "1"}]),
    ("multi: keys and values duplicate match", s(("foo", E("In", ("1",))), ("bar", X["ex"])), IK, IV, None, True,
     [{"Name": "bar"}, {"Name": "bar", "Value": "2"}, {"Name": "foo", "Value": "1"}]),
    ("multi: keys and values NotIn match", s(("bar", E("NotIn", ("1", "3")))), IK, IV, None, True,
     [{"Name": "bar", "Value": "2"}]),
    ("multi: keys and values NotIn does not match", s(("bar", E("NotIn", ("2",)))), IK, IV, None, False, []),
    ("multi: keys and values DoesNotExist match", s(("xyzzy", X["dne"])), IK, IV, None, True,
     [{"Name": "xyzzy"}, {"Name": "xyzzy", "Value": ""}]),
    ("multi: keys and values DoesNotExist does not match", s(("quux", X["dne"])), IK, IV, None, False, []),
    ("multi: keys, values and instances all match", s(("foo", E("In", ("1",))), ("bar", X["ex"])), IK, IV,
     [{"foo": "1", "bar": "2"}, {"foo": "10", "bar": "20"}], True,
     [{"Name": "bar"}, {"Name": "bar", "Value": "2"}, {"Name": "foo", "Value": "1"}, {"bar": "2", "foo": "1"}]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "exprs", "keys", "values", "insts", "want", "out"), MULTI, ids=[r[0] for r in MULTI])
def test_match_multi(case: str, exprs: Any, keys: Any, values: Any, insts: Any, want: Any, out: Any) -> None:
    k = None if keys is None else frozenset(keys)
    if want == ERR:
        with pytest.raises(ExpressionError):
            match_multi(exprs, k, values, insts)
    else:
        assert match_multi(exprs, k, values, insts) == (want, out)
