"""Readers and writers of the file formats qafast evaluates."""

from .trec import TrecColumns, TrecFormatError, read_trec_qrels, read_trec_run

__all__ = ["TrecColumns", "TrecFormatError", "read_trec_qrels", "read_trec_run"]
