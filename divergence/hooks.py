"""What a result calls to show itself, registered by the package (``divergence/__init__``).

A table cannot import the rooms that read it (``present`` draws tables), so the notebook's HTML, the
short text and the figures (:mod:`divergence.present.notebook`) are registered here by name when the
package is imported, and imported themselves only when first called (``import divergence`` stays fast).
"""
from __future__ import annotations

from collections.abc import Callable

__all__ = ["VIEWS", "view"]

#: name -> function: ``table_html``, ``table_text``, ``comparison_html``, ``statistics_html``, ``TablePlots``,
#: ``ComparisonPlots``
VIEWS: dict[str, Callable] = {}


def view(name: str) -> Callable:
    """The registered function ``name``."""
    try:
        return VIEWS[name]
    except KeyError:
        raise RuntimeError(f"No view {name!r} is registered: import divergence (its __init__ registers them).") from None
