"""Plain-Python specification of trec_eval 10.0's preference measures (``-R prefs``,
``-R qrels_prefs``; the ``prefs_*`` measures, nickname ``all_prefs``).

Its rules were learned from trec_eval 10.0 (form_prefs_counts.c, m_prefs_*.c) and its
output; no code is copied. For one query, the judgments are lines ``(jg, jsg, docno,
rel_level)``: within a judge sub-group (jsg) a document with a higher level is preferred to one with a lower level; a
judge group (jg) with one sub-group keeps its levels as equivalence classes, one with
several joins its sub-groups' preferences and closes them transitively. Documents are
numbered: the judged documents the run retrieved first, in rank order (0 .. NJR - 1), then
the other judged documents in docno order. A preference a > b is fulfilled when a's number is
smaller; "ret" counts the pairs both retrieved, "imp" those with one retrieved,
"notoccur" those with neither. Levels above 0 are relevant.
"""

from __future__ import annotations

__all__ = ["PREFS_MEASURES", "PREFS_COUNTS", "PrefsError", "prefs_measures"]

#: the measures, in trec_eval's print order
PREFS_MEASURES = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                  "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
                  "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
                  "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
                  "prefs_avgjg_imp")
#: the counts among them (summed over queries, printed as integers)
PREFS_COUNTS = frozenset(PREFS_MEASURES[:3])


class PrefsError(ValueError):
    """Judgments trec_eval cannot evaluate (a document with two levels in one sub-group, a
    level 0 and above 0 in one group, or contradicting preferences)."""


class _Group:
    def __init__(self) -> None:
        self.ful_ret = self.poss_ret = self.ful_imp = self.poss_imp = self.notoccur = 0
        self.num_rel = self.num_rel_ret = self.num_nonrel = self.num_nonrel_ret = 0
        self.ecs: list[tuple[float, list[int]]] = []   # one sub-group: (level, numbers)
        self.pa: list[list[int]] | None = None          # several: the preference matrix
        self.levels: list[float] = []
        #: the query's classes' documents, every one-sub-group judge group's in turn, and
        #: where this group's last class starts in it
        self.pool: list[int] = []
        self.last_start = 0
        self.notes: list | None = None


def _key(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _number_docs(lines, ranking, max_docs):
    """(numbers {docno: number}, NJR, number of judged documents)."""
    order = sorted(ranking, key=lambda d: (-d[1], _key(d[0])))
    if max_docs is not None:
        order = order[:max_docs]
    seen = set()
    for doc, _ in order:
        if doc in seen:
            raise PrefsError(f"document {doc!r} is retrieved twice")
        seen.add(doc)
    judged = {line[2] for line in lines}
    numbers: dict[str, int] = {}
    for doc, _ in order:
        if doc in judged:
            numbers[doc] = len(numbers)
    njr = len(numbers)
    for doc in sorted(judged - set(numbers), key=_key):
        numbers[doc] = len(numbers)
    return numbers, njr, len(numbers)


def _groups(lines, numbers, njr, n, counts):
    rows = sorted(((_key(jg), _key(jsg), -lvl, numbers[doc], lvl, doc)
                   for jg, jsg, doc, lvl in lines))
    groups = []
    pool: list[int] = []
    k = 0
    while k < len(rows):
        end = k
        while end < len(rows) and rows[end][0] == rows[k][0]:
            end += 1
        part = rows[k:end]
        k = end
        g = _Group()
        if len({r[1] for r in part}) > 1:
            _matrix_group(g, part, njr, n, counts)
        else:
            _class_group(g, part, njr, counts)
            g.pool = pool
            g.last_start = len(pool) + sum(len(d) for _, d in g.ecs[:-1])
            for _, docs in g.ecs:
                pool.extend(docs)
        groups.append(g)
    return groups


def _class_group(g: _Group, part, njr: int, counts) -> None:
    for r in part:
        if g.ecs and g.ecs[-1][0] == r[4]:
            g.ecs[-1][1].append(r[3])
        else:
            g.ecs.append((r[4], [r[3]]))
    for a, (lvl, docs) in enumerate(g.ecs):
        ret = 0
        for d in docs:  # ascending: count up to the first one not retrieved
            if d >= njr:
                break
            ret += 1
        if lvl > 0.0:
            g.num_rel_ret += ret
            g.num_rel += len(docs)
        else:
            g.num_nonrel_ret += ret
            g.num_nonrel += len(docs)
        for _, docs2 in g.ecs[a + 1:]:
            for d1 in docs:
                for d2 in docs2:
                    counts[d1][d2] += 1
                    if d1 == d2:
                        raise PrefsError("a document has two levels in one sub-group")
                    if d1 < d2:
                        if d2 < njr:
                            g.ful_ret += 1
                        elif d1 < njr:
                            g.ful_imp += 1
                        else:
                            g.notoccur += 1
                    elif d1 < njr:
                        g.poss_ret += 1
                    elif d2 < njr:
                        g.poss_imp += 1
                    else:
                        g.notoccur += 1
    g.poss_ret += g.ful_ret
    g.poss_imp += g.ful_imp


def _matrix_group(g: _Group, part, njr: int, n: int, counts) -> None:
    levels = [-1.0] * n
    pa = [[0] * n for _ in range(n)]
    for i, r in enumerate(part):
        d, lvl = r[3], r[4]
        if (levels[d] > 0.0 and lvl == 0.0) or (levels[d] == 0.0 and lvl > 0.0):
            raise PrefsError(f"document {r[5]!r} has both level 0 and a level above 0")
        levels[d] = lvl
        j = i + 1
        while j < len(part) and part[j][1] == r[1] and part[j][4] == lvl:
            j += 1
        while j < len(part) and part[j][1] == r[1]:
            pa[d][part[j][3]] = 1
            j += 1
    # transitive closure (reflexive while it is computed)
    for i in range(n):
        pa[i][i] = 1
    for m in range(n):
        row_m = pa[m]
        for i in range(n):
            if pa[i][m]:
                row_i = pa[i]
                for j in range(n):
                    if row_m[j]:
                        row_i[j] = 1
    for i in range(n):
        pa[i][i] = 0
    for i in range(n):
        for j in range(n):
            if i != j and pa[i][j] and pa[j][i]:
                raise PrefsError("the preferences of a judge group contradict each other")
    g.pa, g.levels = pa, levels
    for i in range(n):
        if levels[i] > 0.0:
            g.num_rel += 1
            g.num_rel_ret += i < njr
        elif levels[i] == 0.0:
            g.num_nonrel += 1
            g.num_nonrel_ret += i < njr
    for i in range(n):
        for j in range(n):
            if not pa[i][j]:
                continue
            counts[i][j] += 1
            if i < njr:
                if j < i:
                    g.poss_ret += 1
                elif j < njr:
                    g.ful_ret += 1
                else:
                    g.ful_imp += 1
            elif j < njr:
                g.poss_imp += 1
            else:
                g.notoccur += 1
    g.poss_ret += g.ful_ret
    g.poss_imp += g.ful_imp


def _ratio(ful: int, poss: int) -> float:
    """C's ful / poss in double: 0 / 0 is NaN, which then keeps the sum from being > 0."""
    if poss == 0:
        return float("nan") if ful == 0 else float("inf")
    return ful / poss


def _recalc(g: _Group, njr: int, n: int, ret_only: bool) -> tuple[int, int]:
    """Counts with only the first R non-relevant documents kept (R: relevant documents,
    retrieved ones with ``ret_only``), as m_prefs_avgjg_Rnonrel(_ret).c recount them."""
    ful = poss = 0
    if g.pa is None:
        # trec_eval takes the first R documents from the start of the last class on: past
        # its end, those of the next one-sub-group judge group's classes. Past the query's
        # last class its memory is stale; only the documents there are taken here.
        keep = g.num_rel_ret if ret_only else g.num_rel
        nonrel = g.pool[g.last_start:g.last_start + keep]
        if len(nonrel) < keep and g.notes is not None:
            g.notes.append("stale")

        def pairs(a, b):
            nonlocal ful, poss
            for d1 in a:
                if ret_only and d1 >= njr:
                    break
                for d2 in b:
                    if ret_only and d2 >= njr:
                        break
                    if d1 < d2 and (ret_only or d1 < njr):
                        ful += 1
                    else:
                        poss += 1

        m = len(g.ecs)
        for a in range(m):
            for b in range(a + 1, m - 1):
                pairs(g.ecs[a][1], g.ecs[b][1])
        for a in range(m):
            pairs(g.ecs[a][1], nonrel)
        return ful, poss + ful
    pa, lv = g.pa, g.levels
    limit = njr if ret_only else n
    seen = 0
    first = limit
    for i in range(limit):
        if lv[i] == 0.0:
            seen += 1
            if seen == g.num_rel + 1:
                first = i
                break

    def dropped(i: int) -> bool:
        return i >= first and lv[i] == 0.0

    for i in range(njr):
        if dropped(i):
            continue
        for j in range(njr if ret_only else n):
            if j == i or dropped(j) or not pa[i][j]:
                continue
            if j < i:
                poss += 1
            else:
                ful += 1
    if not ret_only:
        for i in range(njr, n):
            if dropped(i):
                continue
            for j in range(n):
                if not dropped(j) and pa[i][j]:
                    poss += 1
    return ful, poss + ful


def _avg(terms: list[float], count: int) -> float:
    s = 0.0
    for t in terms:
        s += t
    return s / count if s > 0.0 else 0.0


def prefs_measures(lines: list[tuple[str, str, str, float]], ranking: list[tuple[str, float]],
                   *, max_docs: int | None = None, notes: list | None = None
                   ) -> dict[str, float]:
    """One query's ``prefs_*`` values. ``lines``: its judgments (jg, jsg, docno, level);
    ``ranking``: its retrieved (docno, score) pairs, ranked by score then docno.
    ``notes``: a list to which "stale" is added when trec_eval's ``prefs_avgjg_Rnonrel``
    or ``prefs_avgjg_Rnonrel_ret`` would read memory past the query's judgments (its value
    is then not reproducible; here only the documents there are counted)."""
    numbers, njr, n = _number_docs(lines, ranking, max_docs)
    counts = [[0] * n for _ in range(n)]
    groups = _groups(lines, numbers, njr, n, counts)
    for g in groups:
        g.notes = notes
    ngr = len(groups)
    out: dict[str, float] = {}
    ful_ret = sum(g.ful_ret for g in groups)
    ful_imp = sum(g.ful_imp for g in groups)
    poss_ret = sum(g.poss_ret for g in groups)
    poss_imp = sum(g.poss_imp for g in groups)
    notoccur = sum(g.notoccur for g in groups)
    out["prefs_num_prefs_poss"] = float(poss_ret + poss_imp + notoccur)
    out["prefs_num_prefs_ful"] = float(ful_ret + ful_imp)
    out["prefs_num_prefs_ful_ret"] = float(ful_ret)

    def simp(ful: int, poss: int) -> float:
        return ful / poss if poss else 0.0

    out["prefs_simp"] = simp(ful_ret + ful_imp, poss_ret + poss_imp + notoccur)
    out["prefs_simp_ret"] = simp(ful_ret, poss_ret)
    out["prefs_simp_imp"] = simp(ful_ret + ful_imp, poss_ret + poss_imp)

    def pair(ranges) -> float:
        """The mean over document pairs with a preference of the share of the judge groups
        preferring the document ranked first; ``ranges`` [(i from, i to, j from, j to,
        add)] ("j from" None: i + 1); pairs not added count in the mean only."""
        s, pairs = 0.0, 0
        for i0, i1, j0, j1, add in ranges:
            for i in range(i0, i1):
                for j in range(i + 1 if j0 is None else j0, j1):
                    a, b = counts[i][j], counts[j][i]
                    if a or b:
                        pairs += 1
                        if add:
                            s += a / (a + b)
        return s / pairs if pairs else 0.0

    ret_block = (0, njr, None, njr, True)
    imp_block = (0, njr, njr, n, True)
    not_block = (njr, n, None, n, False)
    out["prefs_pair"] = pair([ret_block, imp_block, not_block])
    out["prefs_pair_ret"] = pair([ret_block])
    out["prefs_pair_imp"] = pair([ret_block, imp_block])

    def avgjg(f) -> float:
        terms = []
        for g in groups:
            ful, poss = f(g)
            if poss:
                terms.append(ful / poss)
        return _avg(terms, ngr)

    out["prefs_avgjg"] = avgjg(lambda g: (g.ful_ret + g.ful_imp,
                                          g.poss_ret + g.poss_imp + g.notoccur))
    out["prefs_avgjg_ret"] = avgjg(lambda g: (g.ful_ret, g.poss_ret))
    out["prefs_avgjg_imp"] = avgjg(lambda g: (g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp))

    def rnonrel(ret_only: bool) -> float:
        terms = []
        for g in groups:
            big_r = g.num_rel_ret if ret_only else g.num_rel
            big_n = g.num_nonrel_ret if ret_only else g.num_nonrel
            if big_r >= big_n:
                if ret_only:
                    ful, poss = g.ful_ret, g.poss_ret
                else:
                    ful = g.ful_ret + g.ful_imp
                    poss = g.poss_ret + g.poss_imp + g.notoccur
                ful += g.num_rel_ret * (big_r - big_n)
                poss += g.num_rel * (big_r - big_n)
            else:
                ful, poss = _recalc(g, njr, n, ret_only)
            terms.append(_ratio(ful, poss))
        return _avg(terms, ngr)

    out["prefs_avgjg_Rnonrel"] = rnonrel(False)
    out["prefs_avgjg_Rnonrel_ret"] = rnonrel(True)
    return {m: out[m] for m in PREFS_MEASURES}
