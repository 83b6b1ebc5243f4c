"""A block-sparse attention layer (local window, global blocks and random blocks per query block,
BigBird-style, non-causal), composed from the ops in mini_sparse_attn.ops.

The attention output is rounded to the input dtype before the output projection, which
accumulates in float32 and rounds once; the reference rounds at the same points.
"""

import math

import torch

from mini_sparse_attn.ops.attention import block_sparse_attention
from mini_sparse_attn.ops.block_index import mask_to_index
from mini_sparse_attn.ops.layout import build_layout
from mini_sparse_attn.ops.projection import project


def sparse_attention_block(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    rand_blocks: torch.Tensor,
    w_o: torch.Tensor,
    *,
    block_size: int,
    window: int,
    num_global: int,
) -> torch.Tensor:
    """y = attn @ w_o with attn = softmax(q k^T / sqrt(D) + layout mask) v over the block layout.

    q, k, v are (B, H, S, D); the sequence is cut into NB = ceil(S / block_size) blocks (the last
    may be partial). Query block i of head h sees key block j when |i - j| <= window, when i or j
    is one of the first num_global blocks, or when j is listed in rand_blocks[h, i] (H, NB, R).
    w_o is (H, D, E), the heads' outputs concatenated along H * D; y is (B, S, E).
    """
    B, H, S, D = q.shape
    num_blocks = rand_blocks.shape[1]
    if num_blocks != -(-S // block_size):
        raise ValueError(f"rand_blocks has {num_blocks} query blocks; S={S} needs {-(-S // block_size)}")
    layout = build_layout(rand_blocks, window, num_global)
    counts, columns = mask_to_index(layout)
    attn = block_sparse_attention(q, k, v, counts, columns, block_size, 1.0 / math.sqrt(D))
    E = w_o.shape[2]
    return project(attn.view(B * S, H * D), w_o.view(H * D, E)).view(B, S, E)
