"""The CSS and JavaScript of ``gpulabel report --html``, read from the package data files beside this module.

``report.js`` reads the page's JSON block (rows with named fields) and builds
every table with ``textContent`` (never ``innerHTML``), so data is never parsed
as markup. It sorts and filters in memory; the filter, model, selection and
sort live in the URL fragment (``#filter=lab-node-3&gpu=NVIDIA-A10&show=problems&sort=name``),
so a view can be shared as a link and tests can drive it without a browser driver.
"""

from __future__ import annotations

from importlib.resources import files

__all__ = ["CSS", "JS"]

_HERE = files("gpulabel.render")
CSS = "\n" + _HERE.joinpath("report.css").read_text(encoding="utf-8")
JS = "\n" + _HERE.joinpath("report.js").read_text(encoding="utf-8")
