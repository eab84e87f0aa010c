"""The measure reference (the measure table, ``qafast._measures``, rendered by the docs build)
says what the parser does: every name ``qafast.evaluate`` accepts is listed under the family it
computes, every listed name parses to that family, and the torchmetrics classes it names
compute it."""

import re

import numpy as np
import pytest

import qafast
from qafast import _measure_parser as parser
from qafast import _measures as measures
from qafast._measure_parser import UnknownMeasureError, listed_names, parse_measure

#: the families the reference documents: those with a per-query number
DOCUMENTED = [d for d in measures.TABLE if d.kernel is not None or d.subtopics]
BY_FAMILY = {d.name: d for d in DOCUMENTED}
TOOLS = ("trec_eval", "qafast", "ranx", "ir_measures")


def listed(doc):
    names = listed_names(doc)
    return {name for tool in TOOLS for name in names[tool]}


def pattern(name):
    """A concrete name as the registry writes it: cut-offs k, levels N, recall points r."""
    name = re.sub(r"rbp([.@])\d+", r"rbp\1p", name)
    name = re.sub(r"@\d+\.\d+", "@r", name)
    name = re.sub(r"@[1-9]\d*", "@k", name)
    name = re.sub(r"rel=\d+", "rel=N", name)
    return re.sub(r"-l\d+$", "-lN", name)


def concrete(name):
    return (name.replace("@k", "@10").replace("@r", "@0.5").replace("-lN", "-l2")
            .replace("rel=N", "rel=2").replace("rbp.p", "rbp.95").replace("rbp@p", "rbp@95"))


def family_of(name):
    try:
        cols = parse_measure(name)
    except UnknownMeasureError:
        return None
    assert len({c.family for c in cols}) == 1, name
    return cols[0].family


def accepted_names():
    """Every base name the parser knows, in the forms users write it: bare, with a cut-off
    (or recall point), and for ranx's names with its -lN level suffix."""
    forms = set()
    for base in parser.known_names():
        if base in measures.NICKNAMES:
            continue
        at = "@0.5" if base == "IPrec" else "@10"
        forms.update({base, base + at})
        if base in parser.RANX_BASES:
            forms.update({base + "-l2", base + at + "-l2"})
    forms.update({"rbp.95", "rbp.95-l2", "rbp@95"})
    forms.update(f"{family}@10" for family in parser.CUT_FAMILIES)
    return sorted(forms)


def test_every_kernel_family_has_one_entry():
    families = [d.name for d in DOCUMENTED]
    assert len(families) == len(set(families))
    text_only = measures.TEXT_MEASURES
    assert set(families) == set(measures.CODES) - text_only | measures.SUBTOPIC_FAMILIES


def test_every_trec_eval_family_and_nickname_is_listed():
    for family in measures.FAMILIES:
        if family in measures.TEXT_MEASURES:
            continue
        assert family in listed_names(BY_FAMILY[family])["trec_eval"], family
    assert set(measures.NICKNAME_DOCS) == set(measures.NICKNAMES)


@pytest.mark.parametrize("name", accepted_names())
def test_every_accepted_name_is_listed_under_its_family(name):
    family = family_of(name)
    if family is None:
        return  # not a name in this form (e.g. Rprec@10): the parser refuses it
    if family in measures.TEXT_MEASURES or family in measures.FAMILIES and name == family:
        return  # trec_eval's own family names are checked above
    names = listed(BY_FAMILY[family])
    if name.endswith("-l2") and family_of(name[:-3]) == family:
        # ranx's level suffix on a name that keeps its family: the bare name is listed
        assert pattern(name) in names or pattern(name[:-3]) in names, (name, family)
    else:
        assert pattern(name) in names, (name, family)


@pytest.mark.parametrize("doc", DOCUMENTED, ids=lambda d: d.name)
def test_every_listed_name_parses_to_its_family(doc):
    for tool in TOOLS:
        for name in listed_names(doc)[tool]:
            cols = parse_measure(concrete(name))
            assert {c.family for c in cols} == {doc.name}, (tool, name)
            if tool in ("ranx", "ir_measures"):
                # the tool's own definition, or trec_eval's where the name is trec_eval's too
                assert cols[0].tool in (tool, "trec_eval"), (tool, name)


def test_agreement_keys_and_answer_entries_are_known():
    for doc in DOCUMENTED:
        assert doc.agrees, doc.name
        assert set(doc.agrees) <= set(measures.AGREEMENT), doc.name
        assert doc.definition and doc.title
    assert all(a.name and a.api and a.definition and a.reference for a in measures.ANSWERS)


def test_the_docs_build_renders_every_family():
    import importlib.util
    from pathlib import Path

    conf_dir = Path(__file__).resolve().parent.parent / "docs"
    if not (conf_dir / "_ext" / "measure_reference.py").exists():
        pytest.skip("docs/ not next to the tests")
    spec = importlib.util.spec_from_file_location("measure_reference",
                                                  conf_dir / "_ext" / "measure_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = module.render()
    for doc in DOCUMENTED:
        assert f".. _measure-{doc.name}:" in text
    for answer in measures.ANSWERS:
        assert answer.name in text


# ---------------------------------------------------------------------------------------------
# torchmetrics: the classes the reference names compute the family's numbers


def torchmetrics_cases():
    for doc in DOCUMENTED:
        for spelled in doc.spelled("torchmetrics"):
            yield pytest.param(doc.name, spelled, id=f"{doc.name}-{spelled}")


@pytest.mark.parametrize("family,spelled", list(torchmetrics_cases()))
def test_torchmetrics_names_compute_the_family(family, spelled):
    torch = pytest.importorskip("torch")
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    cls_name, args = re.fullmatch(r"(\w+)\((.*)\)", spelled).groups()
    k = 3
    kwargs = {key: (k if value == "k" else value == "True")
              for key, _, value in (a.strip().partition("=") for a in args.split(",") if a)}
    metric = getattr(retrieval, cls_name)(**kwargs)
    # tie-free positive scores (torchmetrics counts a document scored <= 0 as non-relevant
    # and breaks ties by position); every query has a relevant candidate, so the candidates
    # hold every relevant document, as RankingMetrics sees them
    rng = np.random.default_rng(7)
    queries, candidates = 40, 8
    scores = (rng.permutation(queries * candidates).reshape(queries, candidates) + 1.0) / 1000
    grades = rng.integers(0, 4, size=(queries, candidates)) * (rng.random((queries,
                                                                            candidates)) < 0.4)
    grades[:, 0] = np.maximum(grades[:, 0], 1)
    graded = cls_name == "RetrievalNormalizedDCG"
    target = torch.from_numpy(grades if graded else (grades > 0).astype(np.int64))
    metric.update(torch.from_numpy(scores.reshape(-1)), target.reshape(-1),
                  indexes=torch.arange(queries).repeat_interleave(candidates))
    theirs = float(metric.compute())

    # the family at the same cut-off, by qafast's family@k (any family of cut-offs)
    name = f"{family}@{k}" if "top_k" in kwargs else family
    ours = qafast.RankingMetrics([name])
    ours.update(scores, grades)
    assert abs(ours.compute()[name] - theirs) < 1e-6, (name, ours.compute()[name], theirs)
