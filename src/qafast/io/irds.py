"""Qrels and scored documents from ir_datasets, as columns.

``Qrels.from_ir_datasets`` and ``Run.from_ir_datasets`` take a dataset object, or the id of
one registered with ir_datasets (``"msmarco-passage/dev/small"``, or one a user registered
from local files), and read its qrels or its scored documents (the run a dataset ships,
such as BM25's top 1000) through the ``ir_datasets`` package (``pip install
"qafast[ir_datasets]"``). What ir_datasets needs to read them it fetches as it always does;
qafast asks it for nothing else.

:func:`read` returns three columns (query ids, document ids, grades or scores), taken from
the records ir_datasets yields a block at a time, by the fields' names (``query_id``,
``doc_id``, ``relevance`` or ``score``), or positions 0, 1, 2 for records without names; the
caller encodes them once, as for any other arrays. ir_datasets is imported only to look an
id up.
"""

from __future__ import annotations

from itertools import chain, islice
from operator import itemgetter
from typing import Any

from ..errors import InputError, InputTypeError

__all__ = ["read"]

#: records read from the iterator at a time (their fields are copied into lists, and the
#: records themselves freed, one block after another)
BLOCK = 1 << 16

_ENTITIES = ("docs", "queries", "qrels", "scoreddocs", "docpairs", "qlogs")
_VALUE_FIELD = {"qrels": "relevance", "scoreddocs": "score"}


def _ir_datasets():
    try:
        import ir_datasets
    except ImportError:
        raise ImportError("reading an ir_datasets dataset by its id needs ir_datasets: "
                          "pip install 'qafast[ir_datasets]'") from None
    return ir_datasets


def _dataset(dataset) -> tuple[Any, str]:
    """The dataset object and how messages name it."""
    if isinstance(dataset, str):
        try:
            return _ir_datasets().load(dataset), f"ir_datasets {dataset!r}"
        except KeyError:
            raise InputError(f"ir_datasets has no dataset {dataset!r} (registered ids are "
                             "listed by `ir_datasets list`)", field="dataset") from None
    dataset_id = getattr(dataset, "dataset_id", None)
    if callable(dataset_id):
        try:
            return dataset, f"ir_datasets {dataset_id()!r}"
        except Exception:  # an id it cannot give is only a worse name in messages
            pass
    return dataset, f"ir_datasets {type(dataset).__name__}"


def _has(dataset, entity: str) -> bool:
    has = getattr(dataset, f"has_{entity}", None)
    if callable(has):
        return bool(has())
    return callable(getattr(dataset, f"{entity}_iter", None))


def read(dataset, entity: str) -> tuple[list, list, list, str]:
    """``(query_ids, doc_ids, values, source)`` of a dataset's ``entity`` (``"qrels"`` or
    ``"scoreddocs"``): one row per record, in the dataset's order; ``source`` names the
    dataset in messages."""
    if not isinstance(dataset, str) and not any(
            callable(getattr(dataset, f"{name}_iter", None))
            or callable(getattr(dataset, f"has_{name}", None)) for name in _ENTITIES):
        raise InputTypeError(f"expected an ir_datasets dataset or the id of one (str), got "
                             f"{type(dataset).__name__}")
    dataset, name = _dataset(dataset)
    source = f"{entity} of {name}"
    if not _has(dataset, entity):
        provides = [e for e in _ENTITIES if _has(dataset, e)]
        raise InputError(f"{name} has no {entity} (it provides "
                         f"{', '.join(provides) or 'nothing qafast reads'})", field=entity)
    query_ids: list = []
    doc_ids: list = []
    values: list = []
    try:
        records = iter(getattr(dataset, f"{entity}_iter")())
        first = next(records, None)
        if first is not None:
            fields = getattr(first, "_fields", ())
            wanted = ("query_id", "doc_id", _VALUE_FIELD[entity])
            get = itemgetter(*(fields.index(f) for f in wanted)
                             if all(f in fields for f in wanted) else (0, 1, 2))
            rows = map(get, chain((first,), records))
            while block := list(islice(rows, BLOCK)):
                q, d, v = zip(*block)
                query_ids += q
                doc_ids += d
                values += v
    except (OSError, MemoryError):
        raise
    except Exception as e:
        # ir_datasets' own parsers raise what they meet (RuntimeError for a line of the
        # wrong width, ValueError for a grade that is not a number, ...)
        raise InputError(f"{source}: ir_datasets could not read it: "
                         f"{type(e).__name__}: {e}", field=entity) from e
    return query_ids, doc_ids, values, source
