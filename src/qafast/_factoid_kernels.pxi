# factoid kernels, included by _kernels.pyx (placeholder until the family lands).
