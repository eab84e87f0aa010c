# TREC run / qrels text parsing, included by _kernels.pyx (one compiled module).
