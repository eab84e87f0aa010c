"""CMRC 2018's runs of non-Chinese text tokenized without nltk: qafast.reference.answers.
plain_word_tokens must give nltk.word_tokenize's tokens whenever it answers, answer for the
plain runs CMRC data is made of, and spare scoring such data the import of nltk."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import qafast
from qafast.reference import answers as spec

#: where the qafast under test was imported from: src/ in a checkout, site-packages where CI
#: installed a build (the checkout's src/ then has no compiled module)
SRC = Path(qafast.__file__).resolve().parents[1]


def _word_tokenize():
    """nltk.word_tokenize, or None where nltk or its punkt_tab data is missing."""
    try:
        import nltk

        nltk.word_tokenize("ok")
    except Exception:  # noqa: BLE001 - nltk or its punkt_tab data missing
        return None
    return nltk.word_tokenize


WORD_TOKENIZE = _word_tokenize()
needs_punkt = pytest.mark.skipif(WORD_TOKENIZE is None,
                                 reason="comparing with nltk needs nltk and its punkt_tab data")

# Pieces chosen to sit on both sides of the class boundary: word characters of several
# scripts (CJK-adjacent ones too: full-width Latin, kana, hangul, CJK extension A), letters
# whose case mappings reach ASCII (long s, Kelvin sign, dotless i), non-decimal digits, the
# contractions with and without apostrophes, decimal points and periods, every punctuation
# mark the class admits and some it does not, several kinds of whitespace.
PIECES = [
    *"abcdeimnorstwyz0123456789", "é", "ß", "ä", "ñ", "α", "я", "ｘ", "ア", "한", "\u3400",
    "٣", "²", "½", "ſ", "\u212a", "ı", "_",
    "cannot", "gimme", "gonna", "gotta", "lemme", "wanna", "whaddya", "d'ye", "more'n",
    "'tis", "'twas", "n't", "'s", "'ll",
    "3.5", "1,000", "u.s.", "mr.", ".", "..", ",", ", ", "%", "$", ";", "@", "#", "&",
    "(", ")", "[", "]", "{", "}", "<", ">", "?", "!", "'", '"', "''", "«", "\u2013", "--",
    " ", " ", "  ", "\t", "\n", "\u3000", "\xa0",
]
RUNS = st.lists(st.sampled_from(PIECES), min_size=1, max_size=10).map("".join)

# Only what the class admits: these runs must all be answered without nltk.
PLAIN_PIECES = [
    *"abcdeimnorstwyz0123456789", "é", "ä", "α", "я", "ｘ", "ア", "한", "\u3400", "٣",
    "cannot", "gimme", "gonna", "gotta", "lemme", "wanna", "3.5", "1,000", "u.s", ",", ", ",
    "%", "$", ";", "@", "#", "&", "(", ")", "[", "]", "{", "}", "<", ">", " ", "  ",
]
PLAIN_RUNS = st.tuples(st.lists(st.sampled_from(PLAIN_PIECES), min_size=1, max_size=10),
                       st.sampled_from(["", "?", "!", "! ", " ?  "])).map(
    lambda t: "".join(t[0]) + t[1])


@needs_punkt
@settings(max_examples=1500, deadline=None)
@given(RUNS)
@example(",,a")
@example(",,")
@example("a,,1")
@example("cannot,1")
@example("wanna,1")
@example("i wanna")
@example("3.5%!")
@example("u.s.")
@example("\u212aannot")
@example("ſ")
def test_plain_tokens_are_nltks_whenever_given(run):
    got = spec.plain_word_tokens(run)
    if got is not None:
        assert got == WORD_TOKENIZE(run)
    assert spec.nltk_tokens(run) == WORD_TOKENIZE(run)


@settings(max_examples=500, deadline=None)
@given(PLAIN_RUNS)
def test_plain_runs_are_answered_without_nltk(run):
    got = spec.plain_word_tokens(run)
    assert got is not None
    if WORD_TOKENIZE is not None:
        assert got == WORD_TOKENIZE(run)


@pytest.mark.parametrize("run, tokens", [
    ("nba", ["nba"]),
    (" 2018 the ", ["2018", "the"]),
    ("3.5%", ["3.5", "%"]),
    ("$1,000, or", ["$", "1,000", ",", "or"]),
    (",,a", [",", ",a"]),
    ("a,,", ["a", ",", ","]),
    ("cannot,1", ["can", "not", ",1"]),
    ("wanna,1", ["wanna,1"]),
    ("i wanna go", ["i", "wan", "na", "go"]),
    ("gonna gotta lemme gimme", ["gon", "na", "got", "ta", "lem", "me", "gim", "me"]),
    ("x(y)", ["x", "(", "y", ")"]),
    ("nba!", ["nba", "!"]),
])
def test_plain_tokens_worked_examples(run, tokens):
    assert spec.plain_word_tokens(run) == tokens


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("run", [
    "mr. (smith)", "a. -b", "a!b", "a! b", "??", "a ?!", "a--b", "a\tb", "a\nb", "x_y", "ſtis",
    "\u212aannot", "a\u2013b", "a...", "\u0069\u0307", "a.. ", "a?.", "a.'", 'a."', "'tis",
    " 'a", "x''", "a'b'c", "a',", '""', "a.\u3000", "\u2018a\u2019",
])
def test_runs_outside_the_class_go_to_nltk(run, wide):
    assert spec.plain_word_tokens(run, wide=wide) is None


@pytest.mark.parametrize("run", ["u.s.", "it's", '"a"', "a.)", "don't", "mr. smith"])
def test_the_narrow_class_leaves_quotes_and_final_periods_to_nltk(run):
    model = spec._PunktModel(frozenset({"mr"}), frozenset(), frozenset(), {})
    with mock.patch.object(spec, "_punkt_english", lambda: model):
        assert spec.plain_word_tokens(run, wide=False) is None
        assert spec.plain_word_tokens(run, wide=True) is not None


# The wide class: final periods, apostrophes and double quotes, checked against the nltk
# releases it is taken for (another installed release gets the narrow class).
WIDE_NLTK = spec._installed_nltk_takes_wide_class()
needs_wide_nltk = pytest.mark.skipif(
    WORD_TOKENIZE is None or not WIDE_NLTK,
    reason="the wide class is checked against the nltk releases it is taken for")

WIDE_PIECES = [
    *"adnstyzAST1", "mr", "inc", "no", "u.s", "p.m", "é", "я", "ſ", "_",
    "cannot", "CANNOT", "gonna", "wanna", "d", "D'YE", "more'n", "'tis", "'TWAS", "n't",
    "N'T", "'s", "'S", "'ll", "'LL", "'Ll", "'re", "'ve", "'m", "'d", "'", "'", "''",
    '"', '"', '"', ".", ".", ".", "..", ",", ",", ")", "]", "}", ">", "(", "[", "<", "{", "?",
    "!", ";", "$", "%", " ", " ", " ", "  ", "\t", "3.5", "1,000",
]
WIDE_ENDS = ["", ".", ". ", ".)", ". )", ".) ", ".]}", ".>", " .", "'.", '".', ",.", ").",
             "?", "! "]
WIDE_RUNS = st.tuples(st.lists(st.sampled_from(WIDE_PIECES), max_size=9),
                      st.sampled_from(WIDE_ENDS)).map(lambda t: "".join(t[0]) + t[1]).filter(
    lambda run: run != "")


@needs_wide_nltk
@settings(max_examples=3000, deadline=None)
@given(WIDE_RUNS)
@example("cannot'tis")
@example("don't's")
@example("it's'll")
@example("x's.y'")
@example('""a')
@example("d'ye's")
@example("wanna'")
@example("mr.)")
def test_wide_tokens_are_nltks_whenever_given(run):
    got = spec.plain_word_tokens(run, wide=True)
    if got is not None:
        assert got == WORD_TOKENIZE(run)
    assert spec.nltk_tokens(run) == WORD_TOKENIZE(run)


# (joined with spaces: two words with an apostrophe each make one word without them)
WIDE_PLAIN_PIECES = [
    *"adnstyz1", "é", "я", "ア", "mr", "inc", "u.s", "3.5", "1,000", "don't", "it's", "we'll",
    "o'neill", "james' ", "d'ye", "more'n", "cannot'tis", ' "', '" ', "(", ")", ",", " ", "  ",
]
WIDE_PLAIN_RUNS = st.tuples(
    st.lists(st.sampled_from(WIDE_PLAIN_PIECES), min_size=1, max_size=10),
    st.sampled_from(["", ".", ". ", ".)", "?", "!"])).map(lambda t: " ".join(t[0]) + t[1])


@settings(max_examples=500, deadline=None)
@given(WIDE_PLAIN_RUNS)
def test_wide_runs_are_answered_without_nltk(run):
    got = spec.plain_word_tokens(run, wide=True)
    assert got is not None
    if WORD_TOKENIZE is not None and WIDE_NLTK:
        assert got == WORD_TOKENIZE(run)


# Periods inside the text, followed by spaces and more text: Punkt's sentence breaks, decided
# from the English model's four parameters. The model is drawn with the text, so that every
# rule meets abbreviations, collocations, sentence starters and each orthographic context,
# and both sides are given the same model: qafast's reading of it, nltk's PunktParameters.
PUNKT_WORDS = ["mr", "dr", "e.g", "u.s", "no", "p.m", "jan", "st", "vs", "inc", "smith",
               "the", "he", "x", "j", "k", "a", "1", "12", "3.5", "1,000", "1st", "2nd", "é",
               "Mr", "Smith", "The", "He", "J", "K", "Jan", "E.G", "ℂ", "Ǆ", "ǅ"]
PUNKT_TYPES = sorted({w.lower() for w in PUNKT_WORDS} | {"##number##", "j.", "k.", "mr."})
PUNKT_PIECES = [*PUNKT_WORDS, *PUNKT_WORDS, ". ", ". ", ". ", ".  ", " ", " ", ".", "...",
                ". . .", ",", "(", ")", '"', "'s", "?", "!", ". !", ".?", "-", ";", ".)"]
PUNKT_RUNS = st.lists(st.sampled_from(PUNKT_PIECES), min_size=1, max_size=10).map("".join)
PUNKT_MODELS = st.fixed_dictionaries({
    "abbreviations": st.sets(st.sampled_from(PUNKT_TYPES)),
    "collocations": st.sets(st.tuples(st.sampled_from(PUNKT_TYPES),
                                      st.sampled_from(PUNKT_TYPES)), max_size=6),
    "sentence_starters": st.sets(st.sampled_from(PUNKT_TYPES), max_size=6),
    "orthography": st.dictionaries(st.sampled_from(PUNKT_TYPES), st.integers(0, 127)),
})


def _sentence_tokens_with(model: dict, run: str) -> list:
    """nltk.word_tokenize(run) with the English Punkt model replaced by ``model``: Punkt's
    sentences, each through the same word tokenizer word_tokenize uses."""
    from nltk.tokenize import _treebank_word_tokenizer
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(model["abbreviations"])
    params.collocations = set(model["collocations"])
    params.sent_starters = set(model["sentence_starters"])
    for word, flags in model["orthography"].items():
        params.ortho_context[word] = flags
    return [token for sentence in PunktSentenceTokenizer(params).tokenize(run)
            for token in _treebank_word_tokenizer.tokenize(sentence)]


def _qafast_model(model: dict):
    return spec._PunktModel(frozenset(model["abbreviations"]), frozenset(model["collocations"]),
                            frozenset(model["sentence_starters"]), dict(model["orthography"]))


@needs_wide_nltk
@settings(max_examples=2500, deadline=None)
@given(PUNKT_MODELS, PUNKT_RUNS)
@example({"abbreviations": {"mr"}, "collocations": set(), "sentence_starters": set(),
          "orthography": {}}, "mr. smith")
@example({"abbreviations": set(), "collocations": {("j", "k.")}, "sentence_starters": set(),
          "orthography": {}}, "j. k. rowling")
@example({"abbreviations": {"mr"}, "collocations": set(), "sentence_starters": {"the"},
          "orthography": {"the": 2}}, "mr. The")
@example({"abbreviations": {"k"}, "collocations": set(), "sentence_starters": set(),
          "orthography": {"j.": 2}}, "a. J. k. J.")
def test_sentence_breaks_are_punkts_whenever_given(model, run):
    with mock.patch.object(spec, "_punkt_english", lambda: _qafast_model(model)):
        got = spec.plain_word_tokens(run, wide=True)
    if got is not None:
        assert got == _sentence_tokens_with(model, run)


PUNKT_PLAIN_WORDS = ["mr", "e.g", "u.s", "no", "p.m", "smith", "the", "j", "k", "1", "3.5",
                     "1st", "Smith", "J", "ℂ"]
PUNKT_PLAIN_RUNS = st.lists(st.tuples(st.sampled_from(PUNKT_PLAIN_WORDS),
                                      st.sampled_from([". ", ".  ", " ", ". ("])),
                            min_size=1, max_size=6).map(
    lambda pairs: "".join(w + sep for w, sep in pairs).rstrip(" (") + "x")
PUNKT_PLAIN_ENDS = ["", ".", ". ", ".)", "?", ". !", ".!"]


@needs_wide_nltk
@settings(max_examples=500, deadline=None)
@given(PUNKT_MODELS, PUNKT_PLAIN_RUNS, st.sampled_from(PUNKT_PLAIN_ENDS))
def test_sentence_breaks_are_decided_without_nltk(model, run, end):
    """Words, abbreviations, initials and numbers with periods between them are all decided
    (but where a bracket follows the period, or a period before a mark is in the
    run right after one)."""
    undecided = ". (" in run or (end in (".)", ".!") and re.search(r"\. +\S*$", run) is not None)
    run += end
    with mock.patch.object(spec, "_punkt_english", lambda: _qafast_model(model)):
        got = spec.plain_word_tokens(run, wide=True)
    if undecided:
        assert got is None
    else:
        assert got is not None
        assert got == _sentence_tokens_with(model, run)


def _installed_abbreviations() -> list:
    """Some abbreviations of the installed English Punkt model (none if it has none)."""
    model = spec._punkt_english()
    return sorted(model.abbreviations)[:200] if model is not None else []


INSTALLED_PIECES = [*_installed_abbreviations(), "mr", "smith", "j", "k", "1", "3.5", "1st",
                    "no", ". ", ". ", ". ", " ", ".", "...", ","]


@needs_wide_nltk
@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(INSTALLED_PIECES), min_size=1, max_size=10).map("".join))
@example("mr. smith")
@example("j. k. rowling")
@example("e.g. nba")
@example("3 p.m. start")
@example("no. 1")
def test_installed_model_sentence_breaks_are_nltks(run):
    """With the installed nltk and its English model, read from its files by qafast."""
    got = spec.plain_word_tokens(run)
    if got is not None:
        assert got == WORD_TOKENIZE(run)
    assert spec.nltk_tokens(run) == WORD_TOKENIZE(run)


@pytest.mark.parametrize("run", ["mr. (smith)", "mr. -x", "a.. b", "mr. x.)", "x'. y",
                                 "mr. x.!", "mr.!!", "mr. x.?", "a,mr. x", "#mr. x",
                                 "a . b", "mr.\tx"])
def test_periods_punkt_is_not_decided_for_go_to_nltk(run):
    model = spec._PunktModel(frozenset({"mr"}), frozenset(), frozenset(), {})
    with mock.patch.object(spec, "_punkt_english", lambda: model):
        assert spec.plain_word_tokens(run, wide=True) is None


def test_no_punkt_model_leaves_inner_periods_to_nltk():
    with mock.patch.object(spec, "_punkt_english", lambda: None):
        assert spec.plain_word_tokens("mr. smith", wide=True) is None
        assert spec.plain_word_tokens("mr.", wide=True) == ["mr", "."]


@needs_punkt
def test_the_data_roots_are_nltks():
    """qafast's search order is nltk.data.path as nltk starts it; once the user changes that
    list in the process, the breaks are left to nltk."""
    import nltk

    assert list(spec._nltk_data_roots()) == nltk.data.path
    with mock.patch.object(nltk.data, "path", [*nltk.data.path, "/elsewhere"]):
        assert spec._nltk_data_roots() is None
        assert spec._punkt_english() is None


def _write_model(root: Path, abbreviations=("mr", "e.g"), orthography="smith\t4\n") -> Path:
    model = root / "tokenizers" / "punkt_tab" / "english"
    model.mkdir(parents=True)
    (model / "abbrev_types.txt").write_text("".join(a + "\n" for a in abbreviations))
    (model / "collocations.tab").write_text("j\tk.\n")
    (model / "sent_starters.txt").write_text("the\n")
    (model / "ortho_context.tab").write_text(orthography)
    # nltk reads data only from directories and files no other account can write to
    for d in (root, root / "tokenizers", root / "tokenizers" / "punkt_tab", model):
        d.chmod(0o755)
    for f in model.iterdir():
        f.chmod(0o644)
    return model


def test_the_model_is_read_as_nltk_reads_it(tmp_path):
    root = tmp_path / "data"
    model = _write_model(root)
    got = spec._load_punkt_model((str(tmp_path / "missing"), str(root)))
    assert got.abbreviations == {"mr", "e.g"}
    assert got.collocations == {("j", "k.")}
    assert got.sentence_starters == {"the"}
    assert got.orthography == {"smith": 4}
    # what nltk might read otherwise, or refuse, is left to it
    (model / "ortho_context.tab").write_text("smith\t4\r\n")
    spec._load_punkt_model.cache_clear()
    assert spec._load_punkt_model((str(root),)) is None
    (model / "ortho_context.tab").write_text("smith 4\n")
    spec._load_punkt_model.cache_clear()
    assert spec._load_punkt_model((str(root),)) is None
    (model / "ortho_context.tab").write_text("")
    model.chmod(0o777)
    spec._load_punkt_model.cache_clear()
    assert spec._load_punkt_model((str(root),)) is None
    model.chmod(0o755)
    archive = tmp_path / "first.zip"
    archive.write_bytes(b"")
    spec._load_punkt_model.cache_clear()
    assert spec._load_punkt_model((str(archive), str(root))) is None
    assert spec._load_punkt_model((str(root),)).orthography == {}
    spec._load_punkt_model.cache_clear()


@needs_wide_nltk
def test_nltk_finds_the_model_qafast_reads(tmp_path):
    """NLTK_DATA names a model of its own: nltk and qafast, each in a fresh interpreter,
    split the same texts, and qafast without importing nltk."""
    root = tmp_path / "data"
    _write_model(root)
    runs = ["mr. smith", "e.g. x", "j. k. rowling", "a. b", "x. The", "no. 1", "dr. Smith"]
    code = ("import json, sys\n"
            "from qafast.reference import answers\n"
            f"got = [answers.plain_word_tokens(r) for r in {runs!r}]\n"
            "print(json.dumps(['nltk' in sys.modules, got]))\n"
            "import nltk\n"
            f"print(json.dumps([nltk.word_tokenize(r) for r in {runs!r}]))\n")
    env = {"NLTK_DATA": str(root)}
    out = _run_isolated(code, tmp_path, env)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[-2:]
    imported, got = json.loads(first)
    assert not imported
    assert got == json.loads(second)
    assert got[0] == ["mr.", "smith"] and got[3] == ["a.", "b"]  # an abbreviation, an initial


@pytest.mark.parametrize("run, tokens", [
    ("u.s.", ["u.s", "."]),
    ("apple inc. )", ["apple", "inc", ".", ")"]),
    ("don't", ["do", "n't"]),
    ("it's smith's", ["it", "'s", "smith", "'s"]),
    ("we'll", ["we", "'ll"]),
    ("it's.don't", ["it's.do", "n't"]),
    ("james' car", ["james", "'", "car"]),
    ("o'neill", ["o'neill"]),
    ("d'ye more'n", ["d", "'ye", "more", "'n"]),
    ("cannot'tis", ["can", "not", "'t", "is"]),
    ('"nba" said', ["``", "nba", "''", "said"]),
    ('("x" y)', ["(", "``", "x", "''", "y", ")"]),
    ('x"y"', ["x", "''", "y", "''"]),
    ('a,"b', ["a", ",", "''", "b"]),
    ("wanna.", ["wan", "na", "."]),
])
def test_wide_tokens_worked_examples(run, tokens):
    assert spec.plain_word_tokens(run, wide=True) == tokens


def _run_isolated(code: str, tmp_path: Path, env: dict | None = None
                  ) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter that imports the qafast under test (``env``: more
    environment variables)."""
    env = dict(os.environ, **(env or {}), PYTHONPATH=os.pathsep.join(
        [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def _cmrc_files(tmp_path: Path, golds: dict, preds: dict) -> tuple:
    data = [{"context_id": "c", "qas": [{"query_id": q, "answers": a}
                                        for q, a in golds.items()]}]
    d, p = tmp_path / "data.json", tmp_path / "pred.json"
    d.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    p.write_text(json.dumps(preds, ensure_ascii=False), encoding="utf-8")
    return str(d), str(p)


PLAIN_GOLDS = {"q1": ["2018年NBA总决赛", "北京 3.5%"], "q2": ["中国（China）"],
               "q3": ["1,000 美元", "iPhone 6s"], "q4": ["第一"]}
PLAIN_PREDS = {"q1": "2018年NBA!", "q2": "中国 the", "q3": "$1,000美元", "q4": "第 1"}


# English the wide class holds: final periods, contractions, possessives, double quotes
WIDE_GOLDS = {"q1": ["美国（U.S.）", "苹果 Apple Inc."], "q2": ["\"NBA\"总决赛"],
              "q3": ["他说 don't", "Smith's 书"], "q4": ["o'neill 先生"]}
WIDE_PREDS = {"q1": "U.S.", "q2": "\"NBA\" 总决赛。", "q3": "don't", "q4": "O'Neill"}


# English with periods inside the text: abbreviations, initials, numbers, ordinals
PUNKT_GOLDS = {"q1": ["Mr. Smith 先生", "J. K. Rowling"],
               "q2": ["e.g. NBA", "下午 3 p.m. start"],
               "q3": ["No. 1 球员", "第 1st. 名"], "q4": ["U.S. Steel 公司"]}
PUNKT_PREDS = {"q1": "j. k. rowling", "q2": "e.g. nba.", "q3": "no. 1",
               "q4": "Apple Inc. 和 U.S. Steel"}


@pytest.mark.parametrize("golds, preds", [
    (PLAIN_GOLDS, PLAIN_PREDS),
    pytest.param(WIDE_GOLDS, WIDE_PREDS, marks=pytest.mark.skipif(
        not spec._installed_nltk_takes_wide_class(),
        reason="the installed nltk is not one the wide class is taken for")),
    pytest.param(PUNKT_GOLDS, PUNKT_PREDS, marks=pytest.mark.skipif(
        not spec._installed_nltk_takes_wide_class() or spec._punkt_english() is None,
        reason="needs an nltk release the wide class is taken for and its punkt_tab data")),
])
def test_scoring_plain_cmrc_runs_does_not_import_nltk(tmp_path, golds, preds):
    """The command and the function both: nltk is not imported, and the numbers are those
    computed with nltk present where it is."""
    d, p = _cmrc_files(tmp_path, golds, preds)
    code = (
        "import json, sys\n"
        "from qafast._program import main\n"
        f"rc = main(['cmrc', {d!r}, {p!r}])\n"
        f"rc2 = main(['drcd', {d!r}, {p!r}])\n"
        "import qafast\n"
        f"data = json.load(open({d!r}, encoding='utf-8'))\n"
        f"preds = json.load(open({p!r}, encoding='utf-8'))\n"
        "r = qafast.cmrc(data, preds)\n"
        "print(rc, rc2, 'nltk' in sys.modules, r['F1'], r['EM'])\n")
    out = _run_isolated(code, tmp_path)
    assert out.returncode == 0, out.stderr
    last = out.stdout.splitlines()[-1].split()
    assert last[:3] == ["0", "0", "False"]
    if WORD_TOKENIZE is not None:
        from qafast.reference import multilingual as ml_spec

        data = json.loads(Path(d).read_text(encoding="utf-8"))
        want = ml_spec.cmrc(data, preds)
        assert [float(x) for x in last[3:]] == [want["F1"], want["EM"]]


def test_a_run_outside_the_class_still_needs_nltk(tmp_path):
    """With nltk made unimportable, plain runs score and a run with a period qafast leaves
    to Punkt (one before a bracket) gives the clear error naming nltk."""
    d, p = _cmrc_files(tmp_path, {"q1": ["mr. (smith)"]}, {"q1": "mr. (smith)"})
    code = (
        "import sys\n"
        "sys.modules['nltk'] = None\n"
        "from qafast.reference import answers\n"
        "assert answers.nltk_tokens('2018 nba!') == ['2018', 'nba', '!']\n"
        "from qafast._program import main\n"
        f"sys.exit(main(['cmrc', {d!r}, {p!r}]))\n")
    out = _run_isolated(code, tmp_path)
    assert out.returncode == 2
    assert "nltk" in out.stderr and "mr. (smith)" in out.stderr
