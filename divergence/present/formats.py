"""How numbers, verdicts and terms read to people: ONE module for the dashboard and the
HTML report, so both show ``8.83%``, ``+28.9 pp``, ``1,235`` and ``q = 2.2e-56`` alike and
colour a verdict the same way.

Pure functions and constants (no Streamlit, no Plotly). Nothing here computes a statistic.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..vocabulary import CORRECTION_NAMES, FINDING_VERDICTS, SIGNIFICANT_VERDICTS, VERDICTS

if TYPE_CHECKING:
    from ..table import Assessment

__all__ = ["DASH", "format_count", "format_number", "format_percent", "format_value", "format_divergence",
           "format_interval", "format_divergence_interval", "format_estimate", "format_p", "format_threshold", "divergence_unit", "VERDICT_COLORS",
           "VERDICT_TEXT", "FINDING_VERDICTS", "COMPARE_VERDICT_COLORS", "ACTIONS", "family_sentence",
           "verdict_color", "verdict_ink", "ink_on", "verdict_legend", "verdict_label", "finding_label", "finding_labels", "direction",
           "GLOSSARY", "COLUMN_HELP", "column_help", "rgba", "is_undefined", "wrap_itemset", "format_support",
           "md_text", "md_code", "html_text", "plotly_text", "metric_label", "figure_label"]

DASH = "–"

# ----------------------------------------------------------------------------- text from the data, shown safely

#: characters through which text could plant something in markdown (Streamlit's, with GitHub's
#: extensions): ``[`` ``]`` open links, images (``![]()``, fetched at once) and colour directives
#: (``:red[...]``), ``<`` raw HTML and autolinks, a backtick code spans (and breaks out of ours),
#: ``$`` LaTeX, and the backslash itself. Emphasis and the like only change how text looks: kept
_MD_SPECIAL = set("\\`[]<$")
#: what makes GitHub's bare autolinks (``http://x``, ``www.x``, ``name@host.tld``); ``ndcg@10`` is
#: no address and stays as it is
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(:)(?=//)|(?<=www)(\.)|(?<=[\w.+-])(@)(?=[\w-]+\.[\w-])")
#: U+2060 WORD JOINER: drawn as nothing, and no character of an address. A backslash escape does not
#: break an autolink in Streamlit: its markdown (remark-gfm) finds bare addresses in the text after the
#: escapes are read (``http\://x`` is the text ``http://x`` by then), so a joiner goes inside the
#: pattern instead (after ``http:``, before the dot of ``www.``, after ``@``): the text reads the same
#: and links nowhere
_JOINER = "\u2060"


def md_text(text: object) -> str:
    """Text from the data (a column name, a value, a file name, an engine message that quotes
    them) as markdown that shows that text and plants nothing: no image, link, HTML element,
    colour or formula, no link from a bare address (:data:`_JOINER`). Line breaks become spaces (a
    name reads on one line)."""
    s = " ".join(str(text).replace("\r", "\n").split("\n"))
    s = "".join(f"\\{c}" if c in _MD_SPECIAL else c for c in s)
    return _AUTOLINK.sub(lambda m: _JOINER + m.group(0) if m.group(2) else m.group(0) + _JOINER, s)


def md_code(text: object) -> str:
    """Text from the data as an inline code span (CommonMark: a fence longer than any run of
    backticks inside, so a backtick in a value cannot close it; nothing inside is markdown or HTML)."""
    s = " ".join(str(text).replace("\r", "\n").split("\n"))
    longest, run = 0, 0
    for c in s:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if s[:1] == "`" or s[-1:] == "`" or (s[:1] == " " and s[-1:] == " " and s.strip()) else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def html_text(text: object) -> str:
    """Text from the data inside an HTML block of markdown (a line that starts with ``<div>``:
    markdown does not read inside it, the browser does): HTML-escaped, so it shows as written and
    plants no element. Never inside inline HTML of a markdown paragraph (``<span>`` or ``<code>``
    in a line of text): markdown still reads there, so an image in the text would load; put the
    text in its own markdown element with :func:`md_code` or :func:`md_text` instead."""
    import html

    return html.escape(str(text), quote=True)


def is_undefined(x: object) -> bool:
    try:
        return x is None or not math.isfinite(float(x))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return True


# ----------------------------------------------------------------------------- numbers


def format_count(n: object) -> str:
    """A row count with thousands separators: 12345 -> '12,345'."""
    return DASH if is_undefined(n) else f"{int(round(float(n))):,}"  # type: ignore[arg-type]


def format_number(x: object, digits: int = 3) -> str:
    """3 significant digits, thousands separators from 1,000 up: 0.0123456 -> '0.0123'."""
    if is_undefined(x):
        return DASH
    x = float(x)  # type: ignore[arg-type]
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    if abs(x) < 1e-4:
        return f"{x:.{digits - 1}e}".replace("e-0", "e-")
    decimals = max(digits - 1 - int(math.floor(math.log10(abs(x)))), 0)
    text = f"{x:,.{decimals}f}"
    # 9.996 -> '10.00' has one digit too many after rounding up
    if decimals and len(text.replace("-", "").replace(",", "").replace(".", "").lstrip("0")) > digits:
        text = f"{x:,.{decimals - 1}f}"
    return text


def format_percent(x: object, digits: int = 3) -> str:
    """A share as a percentage with 3 significant digits: 0.08831 -> '8.83%'."""
    if is_undefined(x):
        return DASH
    return format_number(100 * float(x), digits) + "%"  # type: ignore[arg-type]


def format_support(min_support: float | int, min_count: int, n_rows: int) -> str:
    """The support bar as it was given, with the other unit beside it: ``109 rows (1.77%)`` for a
    row count, ``0.02 (124 rows)`` for a share."""
    from ..settings import support_text

    return support_text(min_support, n_rows)


def format_value(x: object, binary: bool) -> str:
    """A metric value: a rate as a percentage, anything else with 3 significant digits."""
    return format_percent(x) if binary else format_number(x)


def divergence_unit(binary: bool) -> str:
    """The unit of a divergence: percentage points for a rate, the metric's own unit otherwise."""
    return "pp" if binary else ""


def format_divergence(x: object, binary: bool, digits: int = 3) -> str:
    """A signed difference of metric values: percentage points for a rate ('+23.4 pp'), else '+1.23'."""
    if is_undefined(x):
        return DASH
    x = float(x)  # type: ignore[arg-type]
    sign = "+" if x > 0 else ("-" if x < 0 else "")
    body = format_number(abs(100 * x if binary else x), digits)
    return f"{sign}{body} pp" if binary else f"{sign}{body}"


def format_interval(low: object, high: object, binary: bool) -> str:
    """An interval as '[27.1%, 35.6%]'."""
    if is_undefined(low) or is_undefined(high):
        return DASH
    return f"[{format_value(low, binary)}, {format_value(high, binary)}]"


def format_divergence_interval(low: object, high: object, binary: bool) -> str:
    """An interval of a difference as '[-8.26, -4.40] pp' (a rate's in percentage points), else '[-1.2, 0.3]'."""
    if is_undefined(low) or is_undefined(high):
        return DASH
    scale = 100.0 if binary else 1.0
    body = f"[{format_number(scale * float(low))}, {format_number(scale * float(high))}]"  # type: ignore[arg-type]
    return f"{body} pp" if binary else body


def format_estimate(x: object, low: object, high: object, binary: bool) -> str:
    """An estimate with its interval, the unit once: '+30.7 [25.7, 35.9] pp', else '+1.23 [0.4, 2.1]'."""
    if is_undefined(x):
        return DASH
    value = format_divergence(x, binary)
    interval = format_divergence_interval(low, high, binary)
    return f"{value.removesuffix(' pp')} {interval}" if binary and interval != DASH else f"{value} {interval}"


def format_p(p: object) -> str:
    """A p- or q-value: 3 significant digits, scientific below 0.0001 ('1.1e-7')."""
    if is_undefined(p):
        return DASH
    p = float(p)  # type: ignore[arg-type]
    if p == 0:
        return "<1e-300"
    if p < 1e-4:
        mantissa, exp = f"{p:.1e}".split("e")
        return f"{mantissa}e{int(exp)}"
    return format_number(p)


def format_threshold(x: object, binary: bool = False) -> str:
    """A threshold for a title, rounded to 2 significant digits: δ = 0.05 of a rate -> '5 pp',
    7.15186 -> '7.2'."""
    if is_undefined(x):
        return DASH
    x = float(x)  # type: ignore[arg-type]
    text = format_number(100 * x if binary else x, 2)
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} pp" if binary else text


# ----------------------------------------------------------------------------- verdicts

#: colours of the verdicts, readable on light and dark backgrounds (app, figures, report)
VERDICT_COLORS = {
    "defect": "#e03131", "hard cohort": "#f08c00", "above": "#d9480f", "below": "#1c7ed6",
    "better": "#2f9e44", "not replicated": "#ae3ec9", "noise": "#868e96", "too small": "#adb5bd",
    "undetermined": "#748ffc", "": "#868e96",
}
_OTHER_COLOR = "#868e96"

#: colours of a model comparison's verdicts (app, figures, report)
COMPARE_VERDICT_COLORS = {"worse": "#e03131", "better": "#2f9e44", "no change": "#1c7ed6", "noise": "#868e96",
                          "too small": "#adb5bd"}

#: what each verdict means, in a sentence for people who are not statisticians
VERDICT_TEXT = {
    "defect": "Error above the whole dataset's, while the target is no harder here (its best guess without the "
              "model errs as much as across the values of the slice's attributes) and the model gains less "
              "over it than there, or a reference fitted to these rows beats the model: the model fails here.",
    "hard cohort": "Error above the whole dataset's, and the target is harder here: its best guess without the "
                   "model errs more than across the values of the slice's attributes, and the model gains as "
                   "much over it as there. Harder to predict from these columns: a noisier target, or a feature "
                   "the model and these columns lack; not a fault these columns can show.",
    "better": "Error significantly below the whole dataset's.",
    "above": "Significantly above the whole dataset's value.",
    "below": "Significantly below the whole dataset's value.",
    "not replicated": "Significant here, but not confirmed on the replication rows.",
    "noise": "Not significant once corrected for the number of slices tested, with at least n_min rows (its "
             "interval narrower than δ): no finding here.",
    "too small": "Not significant, and fewer measured rows than the minimum size n_min: too small to tell whether "
                 "it diverges by δ.",
    "undetermined": "Error above the whole dataset's, but these columns cannot tell why: the target may be "
                    "harder here (noisier, or driven by a feature the model and these columns lack), the model may "
                    "fail here, or both; or there are too few rows to tell.",
}



def family_sentence(assessment: Assessment | None, metric: str, *, extra: int = 0) -> str:
    """The multiple-testing family of ``metric``'s q-values in one sentence, its size and what it
    covers (the same words on the cards, the open slice, the tiles, the report and the command line):
    ``Benjamini–Hochberg over 2,674 tests: the 1,337 slices tested for each of fpr and fnr``.
    ``extra``: tests counted beyond the result's own (a slice typed by hand)."""
    a = assessment
    tested = {k: int(v) for k, v in a.n_tested.items()} if a is not None else {}
    correction_key = a.correction if a is not None else "bh"
    correction = CORRECTION_NAMES.get(correction_key, str(correction_key))
    mine = tested.get(metric, 0)
    size = int((a.family_size if a is not None else {}).get(metric, mine)) + int(extra)
    joint = (a.family if a is not None else "scan") == "scan" and len(tested) > 1
    if joint:
        names = list(tested)
        listed = ", ".join(names[:-1]) + " and " + names[-1]
        counts = set(tested.values())
        what = (f"the {format_count(mine)} slices tested for each of {listed}" if len(counts) == 1 else
                "the slices tested for " + ", ".join(f"{k} ({format_count(v)})" for k, v in tested.items()))
    else:
        what = f"the {format_count(mine)} slices tested for {metric}"
    if size > (sum(tested.values()) if joint else mine):
        what += f", and {format_count(size - (sum(tested.values()) if joint else mine))} more"
        if extra:
            slices = max(int(extra) // (len(tested) if joint else 1), 1)  # the slice and its subsets not mined
            what += (": this slice, typed by hand" + (f", and {format_count(slices - 1)} of its subsets the scan did not"
                                                      " mine" if slices > 1 else "")
                     + (", once per metric" if joint and extra > 1 else ""))
    return f"{correction} over {format_count(size)} test{'s' if size != 1 else ''}: {what}"


#: what to do about a finding, by verdict
ACTIONS = {
    "defect": "Investigate the model on these rows: it does worse here than the target's difficulty explains.",
    "hard cohort": "Set expectations: these rows are harder to predict from these columns; a feature that "
                   "explains them (one the model and these columns lack), not a fix of the model, would help.",
    "better": "No action: the model does better here than overall.",
    "above": "Review these rows: the metric is reliably higher here than overall.",
    "below": "Review these rows: the metric is reliably lower here than overall.",
    "undetermined": "Look closer before acting: check for a feature the model lacks here, or get more rows; these "
                    "columns cannot tell a defect from a harder target.",
}


def verdict_color(verdict: object) -> str:
    """The colour of a verdict, or of its label ('above · indicative'); grey for one not listed."""
    return VERDICT_COLORS.get(str(verdict).split(" · ")[0], _OTHER_COLOR)


def verdict_ink(verdict: object) -> str:
    """Text colour on a verdict's colour: dark on the light ones (too small), white otherwise."""
    return ink_on(verdict_color(verdict))


def ink_on(hex_color: str) -> str:
    """Text colour on a background colour: dark on light ones, white otherwise."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) / 255 for i in (0, 2, 4))
    return "#212529" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.6 else "#ffffff"


def _all_verdicts() -> list[str]:
    extra = [v for v in VERDICT_TEXT if v not in VERDICTS]
    return list(VERDICTS) + extra


def verdict_legend(present: Iterable[object] | None = None) -> list[tuple[str, str, str]]:
    """(verdict, colour, sentence) for every verdict the engine gives (those in ``present``
    only, when given), in the engine's order."""
    keep = None if present is None else {str(v) for v in present}
    return [(v, verdict_color(v), VERDICT_TEXT.get(v, v)) for v in _all_verdicts()
            if keep is None or v in keep]


def direction(divergence: object) -> str:
    """'above', 'below' or 'level with' the whole dataset, from a divergence's sign."""
    if is_undefined(divergence):
        return DASH
    d = float(divergence)  # type: ignore[arg-type]
    return "above" if d > 0 else ("below" if d < 0 else "level with")


def finding_label(finding: object, explained_by: object = "", within: object = "", alias: object = "",
                  effect: tuple | None = None, binary: bool = False) -> str:
    """Whether a slice is a distinct finding, as the tables show it: 'distinct finding', 'distinct
    finding inside gender=male' (its rows all in that finding: read against the rest of it),
    'explained by region=South, education=Primary', or '' (neither); a finding's effect in the
    model, given the other findings, with its interval (``effect``: (effect, low, high)): 'distinct
    finding, effect +8.3 [6.1, 10.7] pp given the other findings'; a finding the data do not tell from other
    slices says so: 'distinct finding, not told from c0=u2, c2=t1 | c1=w2, c2=t1'."""
    if not is_undefined(finding) and bool(finding):
        holder = "" if within is None or (isinstance(within, float) and math.isnan(within)) else str(within)
        label = f"distinct finding inside {holder}" if holder else "distinct finding"
        if effect is not None and not is_undefined(effect[0]):
            label += f", effect {format_estimate(effect[0], effect[1], effect[2], binary)} given the other findings"
        other = "" if alias is None or (isinstance(alias, float) and math.isnan(alias)) else str(alias)
        return f"{label}, not told from {other}" if other else label
    by = "" if explained_by is None or (isinstance(explained_by, float) and math.isnan(explained_by)) \
        else str(explained_by)
    return f"explained by {by}" if by else ""


def finding_labels(rows, metric: str, binary: bool) -> list[str]:
    """:func:`finding_label` of each row of a frame of slices (its ``M_finding``, ``M_explained_by``,
    ``M_within``, ``M_alias`` and ``M_effect`` columns, those it has)."""
    n = len(rows)

    def col(suffix, default=""):
        name = f"{metric}_{suffix}"
        return list(rows[name]) if name in rows else [default] * n

    effects = zip(col("effect", None), col("effect_ci_low", None), col("effect_ci_high", None))
    return [finding_label(a, b, w, x, e if e[0] is not None else None, binary)
            for a, b, w, x, e in zip(col("finding", False), col("explained_by"), col("within"), col("alias"), effects)]


def verdict_label(verdict: object, divergence: object = None, q: object = None, meets: object = None) -> str:
    """A verdict as the table shows it. A significant slice below the minimum size keeps its
    verdict, marked indicative: 'above · indicative' (``meets``: whether it has n_min rows)."""
    v = "" if verdict is None or (isinstance(verdict, float) and math.isnan(verdict)) else str(verdict)
    if v in SIGNIFICANT_VERDICTS and meets is not None and not is_undefined(meets) and not bool(meets):
        return f"{v} · indicative"
    return v or DASH


def rgba(hex_color: str, alpha: float) -> str:
    """'#e03131', 0.3 -> 'rgba(224,49,49,0.3)'."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


# ----------------------------------------------------------------------------- glossary

#: plain-language meaning of every term the tables, charts and report use
GLOSSARY = {
    "slice": "A subgroup of rows: every row matching all of its items (attribute=value).",
    "item": "One attribute=value choice; numeric columns are cut into ranges first.",
    "rows": "Rows in the slice.",
    "support": "The slice's share of all rows. Slices below the minimum support are not mined.",
    "measured": "Rows where the metric is defined (a false-positive rate counts only the true negatives).",
    "value": "The metric over the slice's measured rows.",
    "interval": "Confidence interval of the slice's value (Wilson for a rate, Student t otherwise): where "
                "the true value plausibly lies. Compare intervals, not points.",
    "divergence": "The slice's value minus the whole dataset's: percentage points (pp) for a rate, the "
                  "metric's own unit otherwise.",
    "t": "The divergence paper's t-value: the distance between slice and whole dataset in units of their "
         "combined uncertainty. A score to compare with the literature, not a test.",
    "p": "How likely a difference this large would be if the slice were like the rest of the rows "
         "(Fisher's exact test for a rate, Welch's t-test with a guard for skewed outcomes otherwise), "
         "before correcting for the number of slices tested.",
    "q": "The p-value corrected for the number of slices tested (Benjamini–Hochberg by default: among "
         "slices with q below 0.05, about 5% are false findings). The family is every slice tested.",
    "n_min": "The minimum slice size: the measured rows from which the slice's interval (at the scan's "
             "confidence, at the whole dataset's value shifted by δ) is narrower than δ. Fixed before any slice is "
             "looked at, whatever the number of slices tested. A smaller slice that is significant is a finding "
             "marked indicative; one that is not is too small to tell.",
    "n_power": "The rows a divergence of δ needs to be found among the slices tested, at 80% power after the "
               "correction: it grows with the number of slices tested and answers another question than n_min "
               "(can this scan find it, not is this slice measured precisely).",
    "min size": "Whether the slice has at least n_min measured rows (see n_min).",
    "δ": "The smallest divergence worth acting on; it sets the minimum slice size n_min.",
    "ε": "Redundancy threshold, in units of the metric's standard deviation σ: a slice is hidden as "
         "redundant when dropping one of its items changes its divergence by less than ε·σ.",
    "bootstrap": "An interval from re-drawing the slice's rows with replacement a few hundred times: checks "
                 "the analytic interval without its assumptions.",
    "baseline": "The error of the best constant guess made from the slice's own rows: how hard the slice "
                "is to predict at all (for a 0/1 target it shows only the class balance).",
    "harder": "How much harder the target is here than across the values of the slice's attributes: the "
              "baseline's error minus theirs pooled (each value with its own constant; for a 0/1 target the best "
              "model-free reference's). Reliably above 0: a harder target.",
    "lift": "How much the model gains over the baseline, on the metric's natural scale (where a noisier target "
            "leaves it unchanged): baseline minus error for squared error; baseline² − error² for absolute "
            "error; −log(1 − 2·error) for 0/1 error and −log(1 − 4·Brier) for Brier, over the best model-free "
            "reference.",
    "lift shortfall": "The lift across the values of the slice's attributes minus the slice's: how much less "
                      "the model gains here. Reliably short while the target is no harder: a defect.",
    "achievable": "The achievable error: the least error of simple references fitted within the slice "
                  "(its constant, the model with the slice's own offset removed, a constant per item of "
                  "another attribute), each row predicted from the others. Reliably below the model's, by more "
                  "than on the whole dataset: a defect.",
    "columns reference": "The least error of the references that use the slice's rows and attributes only (not "
                         "the model): the baseline a 0/1 target is judged by.",
    "shrunk divergence": "The divergence with the winner's curse removed, with the lattice in mind: each "
                         "slice's step from the subset it is most like (one item fewer) is shrunk towards "
                         "zero by how precisely it is measured and how large such steps are among slices "
                         "of its length (empirical Bayes). A lucky refinement of a real cohort shrinks to "
                         "the cohort's value; a real cohort keeps its size.",
    "bound": "The end nearest zero of the divergence's simultaneous interval (Bonferroni over every test "
             "of the family; 0 when it holds 0): with 95% confidence every slice's divergence is at least "
             "its bound at once, so the top of a list sorted by it is no luckier than the rest.",
    "order": "The slice's place in the default order: the distinct findings first, then the other significant "
             "slices, then the rest; within each, slices of at least the minimum size first, then by the honest "
             "estimate.",
    "finding": "A distinct finding is a significant slice no stronger finding explains: with the findings' "
               "rows accounted for, it still diverges. 'Explained by F': with F's rows accounted for, the "
               "slice no longer diverges (a refinement no different from F, a wider slice holding F's rows, "
               "a slice that only looks low or high because F lifts or lowers the whole dataset). 'Not told "
               "from X': X accounts for the finding's divergence as the finding accounts for X's (a near "
               "copy on a correlated attribute, or the same slice with an item almost all its rows hold); "
               "the data fit either name, and this one tested stronger.",
    "replicated divergence": "The slice's divergence re-measured on the other rows: an estimate free of "
                             "the winner's curse.",
    "replication": "The slice re-measured on other rows (a second file, a split or period, or a held-out "
                   "share), with its interval.",
    "replicated": "Same direction on the other rows, and the slice differs from the rest of them there "
                  "(corrected for the slices being confirmed).",
    "verdict": "What the statistics say about the slice; see the legend.",
    "shapley": "How much each item adds to the slice's divergence, averaged over every order in which the "
               "items could be added; the contributions sum to the divergence.",
    "corrective": "An item that brings a slice's divergence closer to zero when it is added.",
    "indicative": "Below the minimum size n_min: a significant slice keeps its verdict, marked indicative (its "
                  "interval is wider than δ: see it); one that is not significant is too small to tell.",
    "overlap": "Rows two findings share: ten findings may be one cohort described ten ways.",
}

#: the glossary entry of each column of the slice table
COLUMN_HELP = {
    "Slice": "slice", "Items": "item", "Rows": "rows", "Support": "support", "Measured": "measured",
    "Interval": "interval", "Divergence": "divergence", "t": "t", "p": "p", "q": "q", "Min size": "min size",
    "Baseline": "baseline", "Harder": "harder", "Lift": "lift", "Lift shortfall": "lift shortfall",
    "Bootstrap": "bootstrap",
    "Replication": "replication", "Replicated": "replicated", "Verdict": "verdict",
    "Achievable": "achievable", "Shrunk divergence": "shrunk divergence", "Bound nearest zero": "bound",
    "Divergence bound nearest zero": "bound", "Replicated divergence": "replicated divergence",
    "Finding": "finding", "Order": "order",
}


def column_help(column: str) -> str:
    """The glossary text of a slice-table column (the metric's own column: 'value')."""
    return GLOSSARY[COLUMN_HELP.get(column, "value")]


def plotly_text(text: object) -> str:
    """Text from the data made inert for a Plotly figure: Plotly reads every string it draws (axis
    labels, hover text, table cells, titles) as its own small HTML (``<a href>``, ``<b>``, ``<br>``),
    so a value holding ``<``, ``>`` or ``&`` is written as an entity, which Plotly shows as the
    character itself."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def wrap_itemset(itemset: str, width: int = 60) -> str:
    """An itemset label for a figure (:func:`plotly_text`), broken after commas (``<br>``) into
    lines of at most ``width`` characters where its items allow (figures' axis labels)."""
    if len(itemset) <= width:
        return plotly_text(itemset)
    parts, line, out = itemset.split(", "), "", []
    for p in parts:
        if line and len(line) + len(p) + 2 > width:
            out.append(line + ",")
            line = p
        else:
            line = f"{line}, {p}" if line else p
    out.append(line)
    return "<br>".join(plotly_text(x) for x in out)

def metric_label(m: str, *, long: bool = False) -> str:
    """A metric's name for people: 'fpr' -> 'FPR' (long: 'FPR: false-positive rate')."""
    from ..vocabulary import METRIC_LABELS

    kind, sep, cls = m.partition(":")
    if sep and kind in ("recall", "precision", "fpr", "fnr"):  # one class against the rest (prepare.outcomes)
        short = f"{metric_label(kind)}:{cls}"  # 'recall:dog: recall of class dog'
        return f"{short}: {METRIC_LABELS.get(kind, kind)} of class {cls}" if long else short
    short = m.upper() if len(m) <= 4 else m.replace("_", " ")
    desc = METRIC_LABELS.get(m)
    return f"{short}: {desc}" if long and desc and desc != short else short


def figure_label(m: str) -> str:
    """A metric's name inside a figure (a title, a legend, an axis or colour-bar title): its
    :func:`metric_label` made inert by :func:`plotly_text`, since a metric named after an outcome
    column is text from the data."""
    return plotly_text(metric_label(m))
