"""How often a norm summed in another order moves a logit of repository/mini_head past its tolerance.

    python3 bench/head_rounding_flips.py [--rows 200000] [--std 0.05 0.01]

mini_head rounds h = rms_norm(x) * norm_weight to the case dtype before h @ w_head.T. A candidate
that sums the norm in another order (or takes 1/sqrt for rsqrt) gets an rstd one float32 unit
away on some rows, and an element of h then rounds one bfloat16 unit the other way: logit v moves
by w_head[v, i] * ulp(h[i]). This draws rows as the task's bfloat16 timed cases do (H = 4096),
computes h both ways on the CPU, and counts the rows where one such flip, against the largest |w|
of 128256 vocabulary rows (about 4.4 standard deviations), passes atol 1e-3 + rtol 1e-4 x |log-prob|
(the log-probabilities are about -log(V): 11.76). No GPU: the rounding is the same in torch here.
"""

from __future__ import annotations

import argparse
import math

import torch

H, V, M_TIMED = 4096, 128256, 16
TAIL_SIGMAS = 4.4  # the largest |w| among V normal draws, in standard deviations


def flip_rates(rows: int, std: float, seed: int = 1) -> tuple[int, int]:
    """(elements of h that round the other way, rows where one moves a logit past the tolerance)."""
    torch.manual_seed(seed)
    tolerance = 1e-3 + 1e-4 * math.log(V)
    flips = bad = 0
    for _ in range(rows // 10000):
        x = torch.randn(10000, H).bfloat16().float()
        weight = (1 + 0.1 * torch.randn(H)).bfloat16().float()
        by_mean = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
        by_sum = 1.0 / torch.sqrt(x.pow(2).sum(-1, keepdim=True) / H + 1e-5)
        moved = ((x * by_mean * weight).bfloat16().float() - (x * by_sum * weight).bfloat16().float()).abs()
        flips += int((moved > 0).sum())
        bad += int((moved * TAIL_SIGMAS * std > tolerance).any(-1).sum())
    return flips, bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200000)
    parser.add_argument("--std", type=float, nargs="+", default=[0.05, 0.01], help="w_head's standard deviations")
    args = parser.parse_args()
    for std in args.std:
        flips, bad = flip_rates(args.rows, std)
        print(
            f"w_head std {std}: {args.rows} rows, {flips} elements of h flipped, {bad} rows past the tolerance "
            f"({bad / args.rows:.2e} a row, {M_TIMED * bad / args.rows:.2e} a {M_TIMED}-row call)"
        )


if __name__ == "__main__":
    main()
