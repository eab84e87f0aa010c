"""Qrels and runs from ir_datasets: a dataset object or a registered id, read as the same
files read by qafast itself; a dataset without qrels or scored documents named. Nothing
downloads: each dataset is registered from small local files."""

import sys
import uuid
from typing import NamedTuple

import pytest

import qafast
from qafast.errors import InputError, InputTypeError

ir_datasets = pytest.importorskip("ir_datasets")
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import BaseQrels, TrecQrels, TrecScoredDocs
from ir_datasets.util import LocalDownload

QRELS = ("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq1 0 dé 3\nq2 0 d4 -1\nq3 0 d\x00 1\n"
         "q10 0 d1 1\n")
RUN = ("q1 Q0 d2 1 0.5 bm25\nq1 Q0 dé 2 0.5 bm25\nq1 Q0 d9 3 0.25 bm25\n"
       "q2 Q0 d4 1 3.0 bm25\nq2 Q0 d3 2 -1.5 bm25\nq10 Q0 d1 1 1e-3 bm25\n")
MEASURES = ["map", "ndcg@10", "P@1", "recall@100", "mrr@10", "bpref", "infAP"]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS, encoding="utf-8")
    (tmp_path / "run.txt").write_text(RUN, encoding="utf-8")
    return tmp_path


@pytest.fixture
def register():
    """register(dataset) -> a fresh id; the ids are removed from the registry afterwards."""
    names = []

    def add(dataset):
        name = f"qafast-test/{uuid.uuid4().hex}"
        ir_datasets.registry.register(name, dataset)
        names.append(name)
        return name

    yield add
    for name in names:
        ir_datasets.registry._registered.pop(name, None)


def test_a_dataset_and_its_id_give_what_the_files_give(files, register):
    dataset = Dataset(TrecQrels(LocalDownload(files / "qrels.txt"), {}),
                      TrecScoredDocs(LocalDownload(files / "run.txt")))
    name = register(dataset)
    qrels_file = qafast.Qrels.from_file(files / "qrels.txt")
    run_file = qafast.Run.from_file(files / "run.txt")
    expected = qafast.evaluate(qrels_file, run_file, MEASURES, per_query=True)
    for source in (dataset, name, ir_datasets.load(name)):
        qrels = qafast.Qrels.from_ir_datasets(source)
        run = qafast.Run.from_ir_datasets(source)
        assert qrels.to_dict() == qrels_file.to_dict()
        assert list(run.to_dict().items()) == list(run_file.to_dict().items())
        assert qafast.evaluate(qrels, run, MEASURES, per_query=True) == expected
    assert repr(qafast.Qrels.from_ir_datasets(name)) == (
        f"Qrels(4 queries, 7 documents, from qrels of ir_datasets {name!r})")


def test_three_column_qrels_and_records_with_their_fields_in_another_order(files, register):
    (files / "qrels3.txt").write_text("q1 d1 1\nq1 d2 0\n")
    three = qafast.Qrels.from_ir_datasets(
        Dataset(TrecQrels(LocalDownload(files / "qrels3.txt"), {}, format_3col=True)))
    assert three.to_dict() == {"q1": {"d1": 1, "d2": 0}}

    class Judgment(NamedTuple):   # named fields, not in query, doc, grade order
        relevance: int
        note: str
        doc_id: str
        query_id: str

    class Judgments(BaseQrels):
        def qrels_iter(self):
            yield from (Judgment(2, "x", "a", "q"), Judgment(0, "y", "b", "q"))

    assert qafast.Qrels.from_ir_datasets(Dataset(Judgments())).to_dict() == {
        "q": {"a": 2, "b": 0}}
    assert qafast.Qrels.from_ir_datasets(Judgments()).to_dict() == {"q": {"a": 2, "b": 0}}


def test_many_records_are_read_a_block_at_a_time(files, monkeypatch):
    from qafast.io import irds

    monkeypatch.setattr(irds, "BLOCK", 2)   # blocks of 2, 2, 2 and 1 records
    qrels = qafast.Qrels.from_ir_datasets(Dataset(TrecQrels(LocalDownload(files / "qrels.txt"),
                                                            {})))
    assert qrels.to_dict() == qafast.Qrels.from_file(files / "qrels.txt").to_dict()


def test_an_empty_file_gives_an_empty_qrels(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    qrels = qafast.Qrels.from_ir_datasets(Dataset(TrecQrels(LocalDownload(tmp_path / "empty.txt"),
                                                            {})))
    assert len(qrels) == 0


def test_a_dataset_without_them_an_unknown_id_and_other_objects_are_named(files, register):
    name = register(Dataset(TrecQrels(LocalDownload(files / "qrels.txt"), {})))
    with pytest.raises(InputError, match=rf"ir_datasets '{name}' has no scoreddocs "
                                         r"\(it provides qrels\)"):
        qafast.Run.from_ir_datasets(name)
    run_only = Dataset(TrecScoredDocs(LocalDownload(files / "run.txt")))
    with pytest.raises(InputError, match=r"has no qrels \(it provides scoreddocs\)"):
        qafast.Qrels.from_ir_datasets(run_only)
    with pytest.raises(InputError, match="ir_datasets has no dataset 'qafast-test/none'"):
        qafast.Qrels.from_ir_datasets("qafast-test/none")
    for bad in ({"q": {"d": 1}}, 3, None):
        with pytest.raises(InputTypeError, match="ir_datasets dataset or the id"):
            qafast.Qrels.from_ir_datasets(bad)


def test_what_ir_datasets_cannot_parse_and_what_qafast_refuses_name_the_dataset(files,
                                                                                register):
    (files / "bad.txt").write_text("q1 0 d1 1\nq1 0 d2 high\n")
    name = register(Dataset(TrecQrels(LocalDownload(files / "bad.txt"), {})))
    with pytest.raises(InputError, match=rf"qrels of ir_datasets '{name}': ir_datasets could "
                                         r"not read it: ValueError") as info:
        qafast.Qrels.from_ir_datasets(name)
    assert isinstance(info.value.__cause__, ValueError)
    (files / "twice.txt").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d1 2 1.0 r\n")
    name = register(Dataset(TrecScoredDocs(LocalDownload(files / "twice.txt"))))
    with pytest.raises(InputError, match=rf"scoreddocs of ir_datasets '{name}': query 'q1' "
                                         r"retrieves document 'd1' twice"):
        qafast.Run.from_ir_datasets(name)
    # a file that is not there is the file system's error, as ir_datasets gives it
    with pytest.raises(OSError):
        qafast.Qrels.from_ir_datasets(Dataset(TrecQrels(
            LocalDownload(files / "absent.txt", mkdir=False), {})))


def test_an_id_without_ir_datasets_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    with pytest.raises(ImportError, match=r"qafast\[ir_datasets\]"):
        qafast.Qrels.from_ir_datasets("msmarco-passage/dev/small")
