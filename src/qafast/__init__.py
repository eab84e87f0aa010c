"""qafast: fast, exact evaluation of question answering and retrieval systems."""

__version__ = "0.1.0.dev0"
