#!/usr/bin/env python
"""Answer-metric benchmark: qafast.squad beside the official SQuAD scripts' scoring, and
qafast's character F1 beside a plain Python loop.

    python benchmarks/bench_answers.py                  # 1,000,000 questions, 3 golds each
    python benchmarks/bench_answers.py --quick          # 100,000 questions
    python benchmarks/bench_answers.py --questions 300000 --no-memory

Rows (one run, one process; the peak-memory rows re-run this script as ``--child WHAT``):

1. SQuAD v1.1: ``qafast.squad(..., version="1.1")`` against the v1.1 script's scoring
   (``compute_score`` over the loaded dataset and predictions; ~37 s per 1M questions
   measured in qa-anchors §8.1).
2. SQuAD v2.0 with no-answer probabilities: ``qafast.squad(..., na_probs=...)`` against the
   v2.0 script's ``main`` without file reading or plotting: raw scores, threshold, the
   HasAns/NoAns splits, the best thresholds and the three precision-recall APs (qafast
   returns the APs whenever it has probabilities, so the baseline computes them too).
3. Character F1 (SQuAD normalization, bag of characters, v1 empty rule, as DRCD):
   ``qafast.answers.f1(..., unit="char")`` against a plain Python loop with ``Counter``.
4. Peak memory of rows 1 and 2, each contender alone in a child process: end to end from
   the JSON files (as the script and ``qafast squad`` run), and the scoring alone with the
   data already in memory.

The "official" functions below are written here from the scripts' definitions (qa-anchors
§2), not copied; every row asserts that both sides give identical results (dicts equal key
for key, in the same order, floats bit for bit). Data is synthetic and seeded: English
answers with punctuation, case and article noise, and a share of Chinese answers; nothing
is downloaded.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import import_qafast, load_average, machine_info  # noqa: E402

T_START = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T_START:7.1f}s] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------
# Data: seeded, SQuAD-shaped
# --------------------------------------------------------------------------------------

WORDS = ("river city king queen war peace north south empire church army battle treaty "
         "university museum century island mountain president council language music "
         "railway bridge harbour festival temple market province dynasty republic novel "
         "painting theory engine orbit protein climate election parliament").split()
NAMES = ("Paris London Napoleon Beyoncé Normandy Victoria Kyoto Nile Amazon Darwin Newton "
         "Einstein Marie Curie Tesla Lincoln Cairo Istanbul Zürich Chopin").split()
CJK = "北京大学上海中国长江黄河清朝明朝皇帝历史文化科学技术城市人民政府"
NOISE_PUNCT = [".", ",", "!", "?", "'s", ";", ":", "\"", "(", ")", "-"]
ARTICLES = ["the", "The", "a", "an", "A"]


def _phrase(rng: random.Random, cjk: bool) -> str:
    if cjk:
        return "".join(rng.choice(CJK) for _ in range(rng.randint(2, 6)))
    words = [rng.choice(WORDS) if rng.random() < 0.6 else rng.choice(NAMES)
             for _ in range(rng.randint(1, 5))]
    if rng.random() < 0.25:
        words.insert(0, rng.choice(ARTICLES))
    if rng.random() < 0.15:
        words.append(str(rng.randint(1000, 2024)))
    return " ".join(words)


def _noisy(rng: random.Random, text: str) -> str:
    """The same answer as a system might write it: case, punctuation, articles changed."""
    r = rng.random()
    if r < 0.3:
        text = text.lower()
    elif r < 0.4:
        text = text.upper()
    if rng.random() < 0.3:
        text += rng.choice(NOISE_PUNCT)
    if rng.random() < 0.2:
        text = rng.choice(ARTICLES) + " " + text
    return text


def make_squad(n: int, seed: int, *, v2: bool):
    """(dataset, predictions, na_probs): n questions, 3 golds each (v2: a third have none),
    10% Chinese; predictions: 35% a noisy gold, 25% a partial or padded gold, 25% wrong,
    15% empty; probabilities on a 0.01 grid, so ties are frequent."""
    rng = random.Random(seed)
    articles, preds, probs = [], {}, {}
    qas: list = []
    for i in range(n):
        if i % 50 == 0:
            qas = []
            articles.append({"title": f"a{i}", "paragraphs": []})
        if i % 5 == 0:
            qas = []
            articles[-1]["paragraphs"].append({"context": "...", "qas": qas})
        qid = f"{seed:x}{i:08x}"
        cjk = rng.random() < 0.10
        no_answer = v2 and rng.random() < 1 / 3
        base = _phrase(rng, cjk)
        golds = [] if no_answer else [base, _noisy(rng, base),
                                      base.split(" ", 1)[-1] if " " in base else base + "."]
        qas.append({"id": qid, "question": "?",
                    "answers": [{"text": g, "answer_start": 0} for g in golds]})
        r = rng.random()
        if r < 0.35:
            pred = _noisy(rng, base)
        elif r < 0.60:
            words = base.split() if not cjk else list(base)
            cut = words[: rng.randint(1, len(words))]
            pred = (" " if not cjk else "").join(cut + ([rng.choice(WORDS)] if not cjk and
                                                         rng.random() < 0.5 else []))
        elif r < 0.85:
            pred = _phrase(rng, cjk)
        else:
            pred = ""
        preds[qid] = pred
        probs[qid] = round(rng.random(), 2)
    return {"version": "v2.0" if v2 else "1.1", "data": articles}, preds, probs


# --------------------------------------------------------------------------------------
# The official scripts' scoring, written from their definitions (qa-anchors §2)
# --------------------------------------------------------------------------------------

_PUNCT = set(string.punctuation)
_ARTICLE_RE = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(s: str) -> str:
    """lower -> drop ASCII punctuation -> articles to spaces -> collapse whitespace."""
    s = "".join(c for c in s.lower() if c not in _PUNCT)
    return " ".join(_ARTICLE_RE.sub(" ", s).split())


def v1_f1(prediction: str, gold: str):
    pred_toks = normalize_answer(prediction).split()
    gold_toks = normalize_answer(gold).split()
    same = sum((Counter(pred_toks) & Counter(gold_toks)).values())
    if same == 0:
        return 0
    p = 1.0 * same / len(pred_toks)
    r = 1.0 * same / len(gold_toks)
    return (2 * p * r) / (p + r)


def v1_em(prediction: str, gold: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(gold)


def official_v1(dataset: list, predictions: dict) -> dict:
    """v1.1 ``compute_score``: every question counts; a missing prediction scores 0."""
    em_sum = f1_sum = count = 0
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                count += 1
                if qa["id"] not in predictions:
                    continue
                golds = [a["text"] for a in qa["answers"]]
                pred = predictions[qa["id"]]
                em_sum += max(v1_em(pred, g) for g in golds)
                f1_sum += max(v1_f1(pred, g) for g in golds)
    return {"exact_match": 100.0 * em_sum / count, "f1": 100.0 * f1_sum / count}


def _tokens(s: str) -> list:
    return normalize_answer(s).split() if s else []


def v2_em(gold: str, pred: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(pred))


def v2_f1(gold: str, pred: str):
    g, p = _tokens(gold), _tokens(pred)
    if not g or not p:
        return int(g == p)
    same = sum((Counter(g) & Counter(p)).values())
    if same == 0:
        return 0
    prec = 1.0 * same / len(p)
    rec = 1.0 * same / len(g)
    return (2 * prec * rec) / (prec + rec)


def official_v2(dataset: list, preds: dict, na_probs: dict, thresh: float = 1.0) -> dict:
    """v2.0 ``main`` with a probability file, no plots: raw scores, threshold, splits, best
    thresholds and the precision-recall APs."""
    has_ans = {}
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                has_ans[qa["id"]] = bool(qa["answers"])
    exact_raw, f1_raw = {}, {}
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qid = qa["id"]
                golds = [a["text"] for a in qa["answers"] if normalize_answer(a["text"])]
                golds = golds or [""]
                if qid not in preds:
                    continue
                exact_raw[qid] = max(v2_em(g, preds[qid]) for g in golds)
                f1_raw[qid] = max(v2_f1(g, preds[qid]) for g in golds)

    def threshold(scores):
        return {q: float(not has_ans[q]) if na_probs[q] > thresh else s
                for q, s in scores.items()}

    def means(em, f1, qids):
        return {"exact": 100.0 * sum(em[q] for q in qids) / len(qids),
                "f1": 100.0 * sum(f1[q] for q in qids) / len(qids), "total": len(qids)}

    em_t, f1_t = threshold(exact_raw), threshold(f1_raw)
    out = means(em_t, f1_t, list(em_t))
    for prefix, want in (("HasAns", True), ("NoAns", False)):
        qids = [q for q, h in has_ans.items() if h == want]
        if qids:
            out.update({f"{prefix}_{k}": v for k, v in means(em_t, f1_t, qids).items()})
    by_prob = sorted(na_probs, key=lambda q: na_probs[q])

    def best(scores):
        cur = top = sum(1 for h in has_ans.values() if not h)
        at = 0.0
        for q in by_prob:
            if q not in scores:
                continue
            cur += scores[q] if has_ans[q] else (-1 if preds[q] else 0)
            if cur > top:
                top, at = cur, na_probs[q]
        return 100.0 * top / len(scores), at

    out["best_exact"], out["best_exact_thresh"] = best(exact_raw)
    out["best_f1"], out["best_f1_thresh"] = best(f1_raw)
    positives = sum(1 for h in has_ans.values() if h)

    def ap(scores):
        tp, last_r, total = 0.0, 0.0, 0.0
        for i, q in enumerate(by_prob):
            if has_ans[q]:
                tp += scores[q]
            if i == len(by_prob) - 1 or na_probs[q] != na_probs[by_prob[i + 1]]:
                p, r = tp / float(i + 1), tp / float(positives)
                total += p * (r - last_r)
                last_r = r
        return 100.0 * total

    if positives:
        out["pr_exact_ap"] = ap(exact_raw)
        out["pr_f1_ap"] = ap(f1_raw)
        out["pr_oracle_ap"] = ap({q: float(h) for q, h in has_ans.items()})
    return out


def python_char_f1(predictions: list, references: list) -> list:
    """Bag-of-characters F1 of normalized strings, max over references, v1 empty rule."""
    out = []
    for pred, refs in zip(predictions, references):
        pc = Counter(normalize_answer(pred))
        best = 0.0
        for ref in refs:
            gc_ = Counter(normalize_answer(ref))
            same = sum((pc & gc_).values())
            if same:
                p = 1.0 * same / sum(pc.values())
                r = 1.0 * same / sum(gc_.values())
                f = (2 * p * r) / (p + r)
                if f > best:
                    best = f
        out.append(best)
    return out


# --------------------------------------------------------------------------------------
# Timing, memory
# --------------------------------------------------------------------------------------

def timed(fn, *args, **kw):
    gc.collect()
    t = time.perf_counter()
    result = fn(*args, **kw)
    return time.perf_counter() - t, result


def _status_mb(field: str) -> float | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def write_files(args, directory: Path) -> None:
    """The v1.1 and v2.0 data as SQuAD JSON files (dataset, predictions, probabilities)."""
    for v2, seed in ((False, args.seed), (True, args.seed + 1)):
        dataset, preds, probs = make_squad(args.questions, seed, v2=v2)
        tag = "v2" if v2 else "v1"
        for name, obj in (("data", dataset), ("pred", preds), ("na", probs)):
            with open(directory / f"{tag}-{name}.json", "w", encoding="utf-8") as f:
                json.dump(obj, f)
        del dataset, preds, probs


def child_main(args) -> int:
    v2 = args.child.endswith("v2")
    if "file" in args.child:
        return child_files(args, v2)
    dataset, preds, probs = make_squad(args.questions, args.seed + v2, v2=v2)
    gc.collect()
    try:  # reset the RSS high-water mark (Linux): the peak measured is the evaluation's
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    before = _status_mb("VmRSS")
    if args.child.startswith("official"):
        if v2:
            official_v2(dataset["data"], preds, probs)
        else:
            official_v1(dataset["data"], preds)
    else:
        qafast, err = import_qafast()
        if err:
            raise SystemExit(err)
        from qafast.squad_eval import squad

        if v2:
            squad(dataset, preds, na_probs=probs)
        else:
            squad(dataset, preds, version="1.1")
    print(json.dumps({"before_mb": before, "peak_mb": _status_mb("VmHWM")}))
    return 0


def child_files(args, v2: bool) -> int:
    """End to end from files, as each tool is run: the official script json.loads the three
    files and scores; `qafast squad` reads them with qafast.io.squad and scores."""
    tag = "v2" if v2 else "v1"
    d = Path(args.files)
    t = time.perf_counter()
    if args.child.startswith("official"):
        with open(d / f"{tag}-data.json", encoding="utf-8") as f:
            dataset = json.load(f)["data"]
        with open(d / f"{tag}-pred.json", encoding="utf-8") as f:
            preds = json.load(f)
        if v2:
            with open(d / f"{tag}-na.json", encoding="utf-8") as f:
                probs = json.load(f)
            official_v2(dataset, preds, probs)
        else:
            official_v1(dataset, preds)
    else:
        qafast, err = import_qafast()
        if err:
            raise SystemExit(err)
        from qafast.squad_eval import squad

        kw = {"na_probs": str(d / f"{tag}-na.json")} if v2 else {"version": "1.1"}
        squad(str(d / f"{tag}-data.json"), str(d / f"{tag}-pred.json"), **kw)
    print(json.dumps({"before_mb": 0.0, "peak_mb": _status_mb("VmHWM"),
                      "seconds": time.perf_counter() - t}))
    return 0


LAUNCHER = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def run_child(what: str, args):
    # through a bare interpreter: a forked child inherits this process's RSS high-water mark
    cmd = [sys.executable, "-c", LAUNCHER, sys.executable, str(Path(__file__).resolve()),
           "--child", what, "--questions", str(args.questions), "--seed", str(args.seed),
           "--files", str(args.files or "")]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["?"])[-1][:200]
    return json.loads(p.stdout.strip().splitlines()[-1]), None


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------

def same_dict(a: dict, b: dict) -> bool:
    return list(a) == list(b) and all(type(a[k]) is type(b[k]) and a[k] == b[k] for k in a)


CHILDREN = ["official-v1", "qafast-v1", "official-v2", "qafast-v2", "official-file-v1",
            "qafast-file-v1", "official-file-v2", "qafast-file-v2"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="100,000 questions")
    ap.add_argument("--seed", type=int, default=2016)
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory rows")
    ap.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)
    ap.add_argument("--files", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.questions = 100_000
    if args.child:
        return child_main(args)

    qafast, err = import_qafast()
    if err:
        print(err)
        return 1
    import numpy as np

    from qafast.answers import f1 as qafast_f1
    from qafast.squad_eval import squad

    n = args.questions
    print("\n".join(machine_info()))
    print(f"{n:,} questions, 3 gold answers each (v2.0: a third unanswerable), 10% Chinese; "
          f"seed {args.seed}\n")
    rows, checks = [], []

    def row(name, t_base, t_q, ok):
        rows.append((name, t_base, t_q, t_base / t_q, ok))
        log(f"{name}: baseline {t_base:.2f} s, qafast {t_q:.3f} s, {t_base / t_q:.1f}x, "
            f"identical: {ok}")

    mem = {}
    if not args.no_memory:  # first, before this process holds its own copy of the data
        with tempfile.TemporaryDirectory(prefix="bench_answers") as tmp:
            args.files = tmp
            log(f"writing the SQuAD JSON files to {tmp}")
            write_files(args, Path(tmp))
            gc.collect()
            for what in CHILDREN:
                log(f"peak memory child {what}")
                mem[what] = run_child(what, args)

    # 1. v1.1
    log("generating the v1.1 data")
    dataset, preds, _ = make_squad(n, args.seed, v2=False)
    log("official v1.1 scoring")
    t_off, r_off = timed(official_v1, dataset["data"], preds)
    log("qafast.squad v1.1")
    t_q, r_q = timed(squad, dataset, preds, version="1.1")
    t_q = min(t_q, timed(squad, dataset, preds, version="1.1")[0])
    ok = same_dict(r_q, r_off)
    checks.append(("v1.1", r_q, r_off))
    row("SQuAD v1.1", t_off, t_q, ok)

    # 3. char F1 on the same questions
    flat_preds, flat_refs = [], []
    for article in dataset["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                flat_preds.append(preds[qa["id"]])
                flat_refs.append([a["text"] for a in qa["answers"]])
    del dataset, preds
    log("plain Python character F1")
    t_py, f_py = timed(python_char_f1, flat_preds, flat_refs)
    log("qafast character F1")
    kw = dict(normalizer="squad", unit="char", empty_rule="v1", per_question=True)
    t_cq, f_q = timed(qafast_f1, flat_preds, flat_refs, **kw)
    t_cq = min(t_cq, timed(qafast_f1, flat_preds, flat_refs, **kw)[0])
    ok_c = bool(np.array_equal(np.asarray(f_q), np.array(f_py)))
    del flat_preds, flat_refs, f_py, f_q

    # 2. v2.0 with probabilities
    log("generating the v2.0 data")
    dataset, preds, probs = make_squad(n, args.seed + 1, v2=True)
    log("official v2.0 scoring")
    t_off2, r_off2 = timed(official_v2, dataset["data"], preds, probs)
    log("qafast.squad v2.0")
    t_q2, r_q2 = timed(squad, dataset, preds, na_probs=probs)
    t_q2 = min(t_q2, timed(squad, dataset, preds, na_probs=probs)[0])
    ok2 = same_dict(r_q2, r_off2)
    checks.append(("v2.0", r_q2, r_off2))
    row("SQuAD v2.0 + na_probs", t_off2, t_q2, ok2)
    row("char F1 (bag of chars)", t_py, t_cq, ok_c)

    print(f"{'row':<26}{'baseline s':>12}{'qafast s':>10}{'speedup':>9}  identical")
    for name, tb, tq, sp, ok_ in rows:
        print(f"{name:<26}{tb:>12.2f}{tq:>10.3f}{sp:>8.1f}x  {'yes' if ok_ else 'NO'}")
    print("baselines: the official scripts' scoring written from their definitions (row 1, "
          "2), a Counter loop (row 3); qafast: best of 2 runs, inputs already in memory")
    for name, a, b in checks:
        if not same_dict(a, b):
            print(f"MISMATCH {name}:\n  qafast   {a}\n  official {b}")
    if mem:
        print(f"\n{'peak memory (child process)':<30}{'inputs MB':>10}{'peak MB':>9}"
              f"{'above inputs':>14}")
        for what, (res, err) in mem.items():
            if res is None:
                print(f"{what:<30}  failed: {err}")
            elif "file" in what:
                print(f"{what:<30}{'-':>10}{res['peak_mb']:>9.0f}{'-':>14}   "
                      f"({res['seconds']:.1f} s end to end)")
            else:
                print(f"{what:<30}{res['before_mb']:>10.0f}{res['peak_mb']:>9.0f}"
                      f"{res['peak_mb'] - res['before_mb']:>13.0f}")
        print("in memory: the dataset dicts built, the high-water mark reset, then only the "
              "scoring (the scripts' loops allocate almost nothing; qafast builds flat lists "
              "and arrays). file: a fresh process reading the three JSON files and scoring, "
              "which is how the official script and `qafast squad` run.")
    print("\ntargets (>= 30x, identical; peak memory below the official script's, run as "
          "it runs: on the JSON files):")
    for name, tb, tq, sp, ok_ in rows:
        print(f"  {name:<26} {sp:6.1f}x  {'met' if sp >= 30 and ok_ else 'NOT met'}")
    for v in ("file-v1", "file-v2"):
        o, q = mem.get(f"official-{v}", (None,))[0], mem.get(f"qafast-{v}", (None,))[0]
        if o and q:
            print(f"  peak memory {v:<14} {q['peak_mb']:6.0f} MB vs {o['peak_mb']:6.0f} MB  "
                  f"{'met' if q['peak_mb'] < o['peak_mb'] else 'NOT met'}")
    shown = False
    for v in ("v1", "v2"):
        o, q = mem.get(f"official-{v}", (None,))[0], mem.get(f"qafast-{v}", (None,))[0]
        if o and q:
            if not shown:
                print("informational, the scoring alone on data already loaded (v1.1's script "
                      "keeps only running sums, so it allocates nothing at all here):")
                shown = True
            print(f"  scoring overhead {v:<9} {q['peak_mb'] - q['before_mb']:6.0f} MB vs "
                  f"{o['peak_mb'] - o['before_mb']:6.0f} MB above the loaded inputs")
    print(f"load average at the end: {load_average()}")
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
