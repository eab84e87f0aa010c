"""The one hash table behind the TREC ids, the answer tokens and the answer strings.

Each use gives keys ids in the order they are first seen: checked here against a dict, on
sizes that make every table grow several times, with the keys that take each comparison
path (short and long byte strings, bytes that are not UTF-8, strings of every width).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from qafast import _kernels
from qafast.io import TrecFormatError, read_trec_qrels, read_trec_run


def first_seen(keys) -> tuple[list, list]:
    """(each key's first-seen id, the distinct keys in that order)."""
    ids: dict = {}
    return [ids.setdefault(k, len(ids)) for k in keys], list(ids)


def mixed_bytes(rng: random.Random, n: int) -> list[bytes]:
    """n byte strings of 0 to 40 bytes, many repeated, some sharing their first 8 or 16."""
    pool = [b"", b"a", b"abcdefgh", b"abcdefghi", b"abcdefghijklmnop", b"abcdefghijklmnopq"]
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.2:
            out.append(rng.choice(pool))
        elif r < 0.5 and out:
            out.append(rng.choice(out))
        else:
            length = rng.choice((1, 3, 7, 8, 9, 15, 16, 17, 24, 40))
            out.append(bytes(rng.randrange(256) for _ in range(length)))
    return out


def test_tokens_get_first_seen_ids_through_growth():
    rng = random.Random(11)
    tokens = mixed_bytes(rng, 30_000)  # past the 4096-slot start, several doublings
    # not UTF-8 on purpose: a tokenizer's bytes are taken as they are
    assert any(not _is_utf8(t) for t in tokens)
    per_string = [tokens[i:i + 3] for i in range(0, len(tokens), 3)]
    strings = [str(i) for i in range(len(per_string))]
    table = dict(zip(strings, per_string))
    tok_off = np.empty(len(strings) + 1, np.int64)
    ids, vocab = _kernels.answer_tokens(strings, table.__getitem__, False, tok_off)
    want, distinct = first_seen(tokens)
    assert vocab == len(distinct)
    assert np.asarray(ids).tolist() == want
    assert tok_off.tolist() == list(range(0, len(tokens), 3)) + [len(tokens)]


def test_squad_tokens_get_first_seen_ids_through_growth():
    rng = random.Random(12)
    strings = [" ".join(f"w{rng.randrange(40_000)}" for _ in range(rng.randint(0, 5)))
               for _ in range(20_000)]
    tok_off = np.empty(len(strings) + 1, np.int64)
    ids, vocab = _kernels.answer_tokens(strings, None, True, tok_off)
    tokens = [w.encode() for s in strings for w in s.split()]
    want, distinct = first_seen(tokens)
    assert vocab == len(distinct)
    assert np.asarray(ids).tolist() == want


def test_tokens_longer_than_16_mib():
    # The table packs a long key's length in 24 bits beside its place in the arena; one of
    # 2**24 - 1 bytes or more is measured through its offsets instead, so tokens that share
    # that packed length (and their first bytes) still get their own ids.
    big = 1 << 24
    a = b"x" * (big - 1)
    b = b"x" * big
    c = b"x" * (big + 7)
    d = b"x" * (big - 1) + b"y"
    tokens = [a, b, c, d, b"short", c, a, d, b]
    tok_off = np.empty(2, np.int64)
    ids, vocab = _kernels.answer_tokens(["s"], lambda s: list(tokens), False, tok_off)
    assert np.asarray(ids).tolist() == [0, 1, 2, 3, 4, 2, 0, 3, 1]
    assert vocab == 5


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _answer_strings(rng: random.Random, n: int) -> list[str]:
    """Distinct and repeated strings of each PEP 393 width, repeats as new objects."""
    alphabets = ("abcdefgh", "abcdéfgh", "abcd中文字符", "abcd\U0001f600\U0001f601")
    out: list[str] = []
    for _ in range(n):
        if out and rng.random() < 0.4:
            # an equal string that is another object (so the table compares contents)
            out.append((rng.choice(out) + ".")[:-1])
        else:
            alpha = rng.choice(alphabets)
            out.append("".join(rng.choice(alpha) for _ in range(rng.choice((0, 1, 4, 8, 9, 17)))))
    return out


@pytest.mark.parametrize("private", [True, False])
def test_answer_strings_get_first_seen_ids_through_growth(private):
    rng = random.Random(13)
    preds = _answer_strings(rng, 6_000)
    refs = [[s for s in _answer_strings(rng, rng.randint(1, 4))] for _ in preds]
    before = _kernels._set_private_capi(private)
    try:
        strings: list = []
        n_ref = sum(map(len, refs))
        ps = np.empty(len(preds), np.int32)
        rs = np.empty(n_ref, np.int32)
        assert _kernels.answer_intern(preds, refs, strings, ps, rs) is None
        flat = [g for r in refs for g in r]
        off = np.cumsum([0] + [len(r) for r in refs]).astype(np.int64)
        strings2: list = []
        ps2 = np.empty(len(preds), np.int32)
        rs2 = np.empty(n_ref, np.int32)
        assert _kernels.answer_intern_flat(preds, flat, off, strings2, ps2, rs2) is None
        distinct = _kernels.squad_count_distinct(preds + flat)
        # the kernels that copy the strings out intern the copies in their own table
        copied = []
        for kernel, r in ((_kernels.answer_encode_squad, refs),
                          (_kernels.answer_encode_squad_flat, flat)):
            ps3 = np.empty(len(preds), np.int32)
            rs3 = np.empty(n_ref, np.int32)
            tok_off, _ = kernel(preds, r, off, ps3, rs3)
            copied.append((ps3.tolist(), rs3.tolist(), len(tok_off) - 1))
    finally:
        _kernels._set_private_capi(before)
    order = [x for i in range(len(preds)) for x in [preds[i]] + refs[i]]
    want, keys = first_seen(order)
    got = [x for i in range(len(preds)) for x in [ps[i]] + rs[off[i]:off[i + 1]].tolist()]
    assert got == want
    assert strings == keys and strings2 == keys
    assert ps2.tolist() == ps.tolist() and rs2.tolist() == rs.tolist()
    assert distinct == len(keys)
    assert copied == [(ps.tolist(), rs.tolist(), len(keys))] * 2


@pytest.mark.parametrize("repeat", [1, 3])
def test_copied_answer_strings_get_first_seen_ids_through_growth(repeat):
    # all distinct (each also seen `repeat` times, as other objects): the table of the copies
    # starts with room for half of them at load 1/2 and grows; a long string grows the copy
    # buffer past its first guess
    n = 40_000
    words = [f"w{i} {'é' if i % 7 == 0 else ''}{'北' if i % 11 == 0 else ''}" for i in range(n)]
    words[123] = "long " * 200_000
    preds = [(w + ".")[:-1] for w in words for _ in range(repeat)]
    refs = [[] for _ in preds]
    off = np.zeros(len(preds) + 1, dtype=np.int64)
    ps = np.empty(len(preds), np.int32)
    tok_off, ids = _kernels.answer_encode_squad(preds, refs, off, ps, np.empty(0, np.int32))
    assert ps.tolist() == [i for i in range(n) for _ in range(repeat)]
    assert len(tok_off) == n + 1
    assert tok_off[124] - tok_off[123] == 200_000
    vocab: dict = {}
    want = [vocab.setdefault(t, len(vocab)) for w in words for t in w.split()]
    assert ids.tolist() == want


def test_trec_ids_get_first_seen_ids_through_growth():
    rng = random.Random(14)
    lines = []
    seen = set()
    for q in range(300):
        qid = f"q{q % 250}" if q % 7 else f"query-{q:09d}"
        for r in range(400):  # 120,000 lines, doc ids of 1 to 20 bytes: the table grows
            doc = f"d{rng.randrange(10 ** rng.randint(0, 19))}"
            if (qid, doc) in seen:
                continue
            seen.add((qid, doc))
            lines.append(f"{qid} Q0 {doc} {r + 1} {-r} run\n")
    data = "".join(lines).encode()
    cols = read_trec_run(data, intern_docs=True)
    want_q, qkeys = first_seen(line.split()[0] for line in lines)
    want_d, dkeys = first_seen(line.split()[2] for line in lines)
    assert cols.query_ids == qkeys and cols.doc_ids == dkeys
    assert np.asarray(cols.query_index).tolist() == want_q
    assert np.asarray(cols.doc_index).tolist() == want_d


def test_trec_ids_must_be_utf8_where_tokens_need_not():
    with pytest.raises(TrecFormatError, match="line 2"):
        read_trec_qrels(b"q1 0 d1 1\nq1 0 d\xff\xfe 1\n")
