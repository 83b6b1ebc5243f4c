"""The one outlier rule: the score's (scoring/stats.py) and the judge's bound (bound.claim)
drop the same samples, so no sample the score ignores can satisfy the bound."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def drop_outliers(samples: Sequence[float] | np.ndarray) -> np.ndarray:
    """The samples inside [Q1 - 1.5 IQR, Q3 + 1.5 IQR], in their original order."""
    values = np.asarray(samples, dtype=np.float64)
    if values.size < 4:
        return values
    q1, q3 = np.percentile(values, [25, 75])
    spread = 1.5 * (q3 - q1)
    return values[(values >= q1 - spread) & (values <= q3 + spread)]
