"""The outlier rule replayed on a no-op's every call (bench/noop_chunks.py's files, each call's
samples kept, paired by set): per timed case, the speedup and the bound's claim as each side's
samples read alone (the rule to session 44) and as pairs (outliers.paired_kept), the claim over
the candidate's own sum (what an honest no-op's clock sees, less the slack). Runs on the CPU:

    PYTHONPATH=src/python python3 bench/outlier_replay.py chunks.json [more.json ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from arena.harness.bound import claim
from arena.harness.outliers import drop_outliers, paired_kept


def replay(baseline: list[float], candidate: list[float]) -> dict[str, float]:
    """One case's figures under both rules."""
    base, cand = np.asarray(baseline), np.asarray(candidate)
    alone = (drop_outliers(base), drop_outliers(cand))
    kept = paired_kept(base, cand)
    return {
        "calls": float(base.size),
        "dropped_alone": float(2 * base.size - alone[0].size - alone[1].size),
        "dropped_pairs": float(base.size - kept[0].size),
        "speedup_alone": float(alone[0].mean() / alone[1].mean()),
        "speedup_paired": float(kept[0].sum() / kept[1].sum()),
        "claim_alone": float(cand.size * alone[1].mean() / cand.sum()),  # over the candidate's own sum
        "claim_paired": float(claim(base, cand) / cand.sum()),
        "spread": float(base.max() / np.median(base)),  # the heaviest call over the median one
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    print(f"{'file / run / case':60} calls drop(alone/pairs) speedup(alone/paired) claim(alone/paired) spread")
    for path in args.files:
        for run, entry in enumerate(json.loads(path.read_text())):
            for name, case in entry["cases"].items():
                if "baseline_us" not in case:
                    continue
                r = replay(case["baseline_us"], case["candidate_us"])
                print(
                    f"{path.stem + ' ' + str(run) + ' ' + name:60} {r['calls']:5.0f} {r['dropped_alone']:4.0f}/"
                    f"{r['dropped_pairs']:<4.0f} {r['speedup_alone']:.4f}/{r['speedup_paired']:.4f} "
                    f"{r['claim_alone']:.4f}/{r['claim_paired']:.4f} {r['spread']:.2f}"
                )


if __name__ == "__main__":
    main()
