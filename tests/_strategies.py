"""Hypothesis strategies that several test modules draw from."""

from hypothesis import strategies as st

#: document ids that sort differently in bytes, code points and case, the empty one included
DOC_IDS = ["a", "b", "B", "ab", "d9", "d10", "é", "Ω", "中文", ""]
#: scores with ties
SCORES = [0.0, 0.5, 1.0, -1.0, 0.25, 3.0]


@st.composite
def qrels_and_runs(draw, *, grades: list, min_retrieved: int = 0):
    """({qid: {doc: grade}}, {qid: {doc: score}}): 1-3 queries, each with 1-7 judged documents
    and ``min_retrieved``-9 retrieved ones, drawn from :data:`DOC_IDS` and :data:`SCORES`."""
    qrels, run = {}, {}
    for qid in draw(st.lists(st.sampled_from(["q1", "q2", "q10", "é"]), unique=True,
                             min_size=1, max_size=3)):
        judged = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, min_size=1, max_size=7))
        qrels[qid] = {d: draw(st.sampled_from(grades)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(DOC_IDS), unique=True,
                                  min_size=min_retrieved, max_size=9))
        run[qid] = {d: draw(st.sampled_from(SCORES)) for d in retrieved}
    return qrels, run
