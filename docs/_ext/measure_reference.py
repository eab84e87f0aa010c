"""Sphinx extension: writes ``measures.rst`` from the measure table before each build.

The table (``qafast._measures``) declares each ranking-measure family with its definition,
its names in trec_eval, ranx, ir_measures and torchmetrics, and the checks it passes; the
parser reads the same rows, and ``tests/test_docs_measures.py`` checks that every name
``qafast.evaluate`` accepts is listed here.
"""

from __future__ import annotations

from pathlib import Path

#: marks the torchmetrics classes that apply their rule for scores of 0 or less
_NONPOSITIVE_MARK = "(†)"
_RULES = {"not relevant": "counts as not relevant (it leaves R too)",
          "not retrieved": "counts as not retrieved (it stays in R)"}


def _literals(names) -> str:
    return ", ".join(f"``{n}``" for n in names)


def _heading(text: str, char: str) -> list[str]:
    return [text, char * len(text), ""]


def _table(header: list[str], rows: list[list[str]], widths: str | None = None) -> list[str]:
    out = [".. list-table::", "   :header-rows: 1"]
    if widths:
        out.append(f"   :widths: {widths}")
    out.append("")
    for row in [header, *rows]:
        for i, cell in enumerate(row):
            out.append(f"   {'*' if i == 0 else ' '} - {cell or ' '}")
    return out + [""]


def render() -> str:
    from qafast import _measures as table
    from qafast._measure_parser import listed_names

    agreement = table.AGREEMENT
    # per section, in the table's order; runid, num_q and relstring are not numbers
    families = sorted((d for d in table.TABLE if d.kernel is not None or d.subtopics),
                      key=lambda d: table.GROUPS.index(d.group))
    out = _heading("Measure reference", "=")
    out += [
        ("Every ranking measure ``qafast.evaluate``, ``qafast.RankingMetrics``, "
        "``qafast.compare`` and ``qafast trec -m`` compute, with the names each tool gives it. "
        "This page is generated from qafast's measure registry; a test checks that every "
        "name the measure parser accepts is listed under the family it computes."),
        "",
        ("In names, ``k`` is a positive cut-off, ``N`` a relevance level, ``r`` a recall "
        "point and ``p`` ranx's persistence digits (``rbp.95`` is p = 0.95). A name means "
        "what its tool computes: trec_eval's names come first (bare ``map``, ``recall``, "
        "``ndcg`` and ``dcg`` are trec_eval's), then ir_measures', ranx's and qafast's own. "
        "ranx's names take its ``-lN`` suffix and ir_measures' its ``rel=N`` parameter, "
        "which set the relevance level of that measure alone."),
        "",
        ("In the definitions below, R is the number of relevant documents in the qrels "
        "(a grade at least the relevance level, ``relevance_level=``, trec_eval's ``-l``), "
        "n the number of documents ranked (after ``max_docs=``), and ranks count from 1. "
        "Documents with the same score are ordered by document id, as trec_eval orders "
        "them; the other tools agree on tie-free scores (see the README's \"Ties move "
        "numbers between tools\")."),
        "",
        (f"{_NONPOSITIVE_MARK} torchmetrics 1.9's classes marked so count a relevant "
        "candidate scored 0 or less as not found (Lightning-AI/torchmetrics PR #3104): "
        "``RetrievalMAP``, ``RetrievalMRR`` and ``RetrievalPrecision`` as not relevant (it "
        "leaves R too), ``RetrievalRecall`` as not retrieved (it stays in R). On logits "
        "their numbers then differ from trec_eval's, which reads a score only as a rank; "
        "they agree once every score is positive. ``RankingMetrics(..., "
        "torchmetrics_nonpositive=True)`` and the torchmetrics ``RankingMetric`` with that "
        "option apply the same rule, and give torchmetrics' numbers."),
        "",
    ]

    out += _heading("Summary", "-")
    rows = []
    for d in families:
        names = listed_names(d)
        mark = f" {_NONPOSITIVE_MARK}" if d.torchmetrics_nonpositive else ""
        rows.append([f":ref:`{d.name} <measure-{d.name}>`", _literals(names["trec_eval"]),
                     _literals(names["ranx"]), _literals(names["ir_measures"]),
                     _literals(names["torchmetrics"]) + mark,
                     ", ".join(a for a in agreement if a in d.agrees)])
    out += _table(["Family", "trec_eval", "ranx", "ir_measures", "torchmetrics", "Agrees with"],
                  rows, "13 15 15 17 17 23")

    out += [".. _agreement:", ""]
    out += _heading("How agreement is checked", "-")
    out += _table(["Key", "Tool", "What is compared", "Test"],
                  [[f"``{key}``", tool, what, f"``{where}``"]
                   for key, (tool, what, where) in agreement.items()], "12 22 40 26")
    out += [("Each check runs in the test suite; the tools are pinned in the ``test`` extra. "
            "The numbers of trec_eval 10.0 measures that pytrec_eval (trec_eval 9.0.8) lacks "
            "were also compared with a trec_eval 10.0 binary by differential fuzzing "
            "(``tests/fuzz_trec_eval.py``, run by hand)."), ""]

    out += _heading("Ranking measures", "-")
    groups: dict[str, list] = {}
    for d in families:
        groups.setdefault(d.group, []).append(d)
    for group, entries in groups.items():
        out += _heading(group, "~")
        for d in entries:
            out += [f".. _measure-{d.name}:", ""]
            out += _heading(f"{d.name}: {d.title}", "^")
            out += [d.definition, ""]
            for tool, names in listed_names(d).items():
                if names:
                    out.append(f":{tool}: {_literals(names)}")
            tools = ", ".join(agreement[a][0] for a in agreement if a in d.agrees)
            out.append(f":agrees with: {tools} (:ref:`how <agreement>`)")
            if d.torchmetrics_nonpositive:
                out.append(f":torchmetrics on scores of 0 or less: a relevant candidate scored "
                           f"so {_RULES[d.torchmetrics_nonpositive]} "
                           f"(``torchmetrics_nonpositive=True`` does the same)")
            out.append("")
            if d.note:
                out += [d.note, ""]

    out += _heading("Nicknames", "-")
    out += [("A nickname asks for several trec_eval families at once (``evaluate(..., "
            "\"all_trec\")``, ``qafast trec -m all_trec``):"), ""]
    for name, text in table.NICKNAME_DOCS.items():
        out += [f"``{name}``", f"   {text}", ""]

    out += _heading("Answer metrics", "-")
    out += [("The answer, factoid, selection, concept, event and curve metrics, with the tool "
            "or definition each reproduces."), ""]
    for a in table.ANSWERS:
        out += _heading(a.name, "~")
        out += [a.definition, "", f":API: {a.api}", f":reference: {a.reference}",
                f":checked: {a.checked}", ""]
    return "\n".join(out)


def _write(app) -> None:
    target = Path(app.srcdir) / "measures.rst"
    text = render()
    # rewrite only on change, so Sphinx does not rebuild an unchanged page
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _write)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
