"""Estimated costs of DRA selectors, the expected values of ``k8s.io/dynamic-resource-allocation/cel``'s
``compile_test.go`` (``testcases``: ``expression`` and ``expectCost``; rows with list-type attributes use
its ``maxElementsListTypeEnabled`` = 64). Each row: (upstream name, expression, cost)."""

from __future__ import annotations

ATTR = 'device.attributes["dra.example.com"]'
CAP = 'device.capacity["dra.example.com"]'
NONE = 'device.attributes["no-such-domain"]'
ALL = " &&\n".join(
    (
        f'{CAP}.quantity.isGreaterThan(quantity("1Ki"))',
        f"{ATTR}.bool",
        f"{ATTR}.int > 0",
        f'{ATTR}.string == "fish"',
        f'{ATTR}.version.isGreaterThan(semver("0.0.1"))',
        f'{CAP}["quantity"].isGreaterThan(quantity("1Ki"))',
        f'{ATTR}["bool"]',
        f'{ATTR}["int"] > 0',
        f'{ATTR}["string"] == "fish"',
        f'{ATTR}["version"].isGreaterThan(semver("0.0.1"))',
    )
)
ROWS: list[tuple[str, str, int]] = [
    ("runtime-error-lookup-identifier", f'{NONE}.noSuchAttr.isGreaterThan(quantity("0"))', 6),
    ("runtime-error-lookup-map", f'{NONE}["noSuchAttr"].isGreaterThan(quantity("0"))', 6),
    ("domain-check-negative", '"no-such-domain" in device.attributes', 3),
    ("domain-check-positive", '"dra.example.com" in device.attributes', 3),
    ("empty-driver-name", 'device.driver == ""', 2),
    ("real-driver-name", 'device.driver == "dra.example.com"', 4),
    ("driver-name-qualifier", f"{ATTR}.name", 4),
    ("driver-name-qualifier-map-lookup", f'{ATTR}["name"]', 4),
    ("bind", f"cel.bind(dra, {ATTR}, dra.name)", 15),
    ("qualified-attribute-name", 'device.attributes["other.example.com"].name', 4),
    ("int", f"{ATTR}.name > 0", 5),
    ("string", f'{ATTR}.name == "fish"', 5),
    ("list-of-string", f"{ATTR}.names.size() == 2", 6),
    ("macro-on-list-of-int", f"{ATTR}.names.exists(x, x > 0)", 5 + (3 + 3) * 64),
    ("macro-on-list-of-string", f'{ATTR}.names.all(x, x != "")', 5 + (2 + 2) * 64),
    ("macro-on-list-of-semver", f'{ATTR}.names.all(x, x.isGreaterThan(semver("0.0.1")))', 5 + (2 + 4) * 64),
    ("macro-exists-on-version", f'{ATTR}.name.exists(x, x.isGreaterThan(semver("0.0.1")))', 5 + (3 + 4) * 64),
    ("in-operator-on-list", f"1 in {ATTR}.names", 4 + 64),
    ("version", f'{ATTR}.name.isGreaterThan(semver("0.0.1"))', 6),
    ("quantity", f'{CAP}.name.isGreaterThan(quantity("1Ki"))', 6),
    ("check-positive", f'"name" in {CAP} && {CAP}.name.isGreaterThan(quantity("1Ki"))', 10),
    ("check-negative", f'!("name" in {CAP}) || {CAP}.name.isGreaterThan(quantity("1Ki"))', 11),
    ("all", ALL, 52),
    ("many", f"{ATTR}.a && {ATTR}.b && {ATTR}.c", 12),
    ("check_attribute_domains", 'device.attributes.exists_one(x, x == "dra.example.com")', 164),
    ("check_attribute_ids", f'{ATTR}.exists_one(x, x == "services")', 133),
    ("split_attribute", f'{ATTR}.services.split("example").size() >= 2', 19),
    ("regexp_attribute", f'{ATTR}.services.matches("[^a]?sym")', 18),
    ("check_capacity_domains", 'device.capacity.exists_one(x, x == "dra.example.com")', 164),
    ("check_capacity_ids", f'{CAP}.exists_one(x, x == "memory")', 133),
    ("allow_multiple_allocations", "device.allowMultipleAllocations == true", 3),
]
