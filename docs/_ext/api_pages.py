"""Sphinx extension: writes the API reference pages (``api/*.rst``) before each build.

One page per public module, listing that module's ``__all__``, so a new public function
appears in the reference without editing the docs. Names ``qafast`` itself exports are
documented under ``qafast.`` (how users call them), on the page of the module that defines
them; the rest under their module.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

#: (module, page title), in the order of the reference's table of contents
MODULES = (
    ("qafast.ranking", "Ranking measures"),
    ("qafast.compat", "pytrec_eval drop-in"),
    ("qafast.answers", "Answer metrics"),
    ("qafast.squad_eval", "SQuAD"),
    ("qafast.hotpot_eval", "HotpotQA"),
    ("qafast.multilingual_eval", "MLQA, CMRC 2018 and DRCD"),
    ("qafast.drop_eval", "DROP"),
    ("qafast.coqa_eval", "CoQA"),
    ("qafast.tydi_eval", "TyDi QA"),
    ("qafast.quac_eval", "QuAC"),
    ("qafast.dpr_eval", "DPR retrieval accuracy"),
    ("qafast.triviaqa_eval", "TriviaQA"),
    ("qafast.msmarco_eval", "MS MARCO passage ranking"),
    ("qafast.nq_eval", "Natural Questions"),
    ("qafast.kilt_eval", "KILT"),
    ("qafast.factoid", "Factoid QA and BioASQ"),
    ("qafast.dbqa", "Answer-sentence selection (NLPCC-DBQA)"),
    ("qafast.curves", "Average precision from curves"),
    ("qafast.concepts", "Open-ended commonsense answers (OpenCSR)"),
    ("qafast.events", "Event mentions in tweets"),
    ("qafast.comparison", "Comparing systems"),
    ("qafast.fusion", "Fusing runs"),
    ("qafast.gdeval_eval", "gdeval.pl (TREC Web track)"),
    ("qafast.ndeval_eval", "ndeval (TREC diversity)"),
    ("qafast.diversity", "Diversity qrels for evaluate"),
    ("qafast.cwl_eval", "cwl_eval (C/W/L user models)"),
    ("qafast.dask", "Dask"),
    ("qafast.errors", "Errors"),
    ("qafast.stream", "In the training loop"),
    ("qafast.integrations.torch", "torch.distributed"),
    ("qafast.integrations.hf", "Hugging Face"),
    ("qafast.integrations.torchmetrics", "torchmetrics"),
    ("qafast.integrations.pytrec_eval", "BEIR and MTEB (pytrec_eval)"),
    ("qafast.integrations.ir_measures", "ir_measures and PyTerrier"),
    ("qafast.io.trec", "Reading TREC files"),
    ("qafast.io.squad", "Reading SQuAD files"),
    ("qafast.io.bioasq", "Reading BioASQ files"),
    ("qafast.io.dbqa", "Reading NLPCC-DBQA files"),
    ("qafast.io.drfact", "Reading OpenCSR / DrFact files"),
    ("qafast.io.conll", "Reading event-mention files"),
    ("qafast.io.arrow", "Reading Arrow tables and Parquet files"),
    ("qafast.io.irds", "Reading ir_datasets datasets"),
)


def _heading(text: str, char: str) -> list[str]:
    return [text, char * len(text), ""]


def _directive(obj) -> str:
    if inspect.isclass(obj):
        return "autoclass"
    if callable(obj):
        return "autofunction"
    return "autodata"


def module_page(name: str, title: str) -> str:
    import qafast

    module = importlib.import_module(name)
    top = set(qafast.__all__)
    out = _heading(title, "=")
    out += [f".. automodule:: {name}", "   :no-members:", ""]
    for public in module.__all__:
        try:
            obj = getattr(module, public)
        except ImportError as exc:  # built on first access from an optional package
            out += [(f".. note:: ``{name}.{public}`` needs an optional package ({exc.name or exc}) "
                    "that is not installed where these docs were built."), ""]
            continue
        where = "qafast" if public in top and getattr(qafast, public, None) is obj else name
        out += [f".. currentmodule:: {where}", "", f".. {_directive(obj)}:: {public}"]
        if _directive(obj) == "autodata" and len(repr(obj)) > 120:
            out.append("   :no-value:")  # a long set or table: its docstring says what it holds
        if inspect.isclass(obj):
            out.append("   :members:")
            if issubclass(obj, BaseException):
                out.append("   :show-inheritance:")
        out.append("")
    return "\n".join(out)


def index_page() -> str:
    import qafast

    out = _heading("API reference", "=")
    out += [".. automodule:: qafast", "   :no-members:", "",
            "Everything ``import qafast`` exports, and the page that documents it:", ""]
    defined_in = {}
    for name, _ in MODULES:
        module = importlib.import_module(name)
        for public in getattr(module, "__all__", ()):
            defined_in.setdefault(public, name)
    rows = [".. list-table::", "   :header-rows: 1", "", "   * - Name", "     - Module"]
    for public in qafast.__all__:
        if public.startswith("__"):
            continue
        module = defined_in[public]
        rows += [f"   * - :py:obj:`qafast.{public}`",
                 f"     - :doc:`{module.split('.', 1)[1]} <{module}>`"]
    out += rows + ["", ".. toctree::", "   :maxdepth: 1", ""]
    out += [f"   {name}" for name, _ in MODULES]
    return "\n".join(out) + "\n"


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _write(app) -> None:
    api = Path(app.srcdir) / "api"
    api.mkdir(exist_ok=True)
    _write_if_changed(api / "index.rst", index_page())
    for name, title in MODULES:
        _write_if_changed(api / f"{name}.rst", module_page(name, title))


def setup(app):
    app.connect("builder-inited", _write)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
