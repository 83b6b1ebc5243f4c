"""Reference for mini_sparse_attn's sparse_attention_block: float32 math (float64 for float64
inputs), with the attention output rounded to the input dtype at the same point as
mini_sparse_attn/attention_block.py. The block mask is expanded to a token mask, one head at a
time."""

import torch


def sparse_attention_block(q, k, v, rand_blocks, w_o, *, block_size, window, num_global):
    dtype = q.dtype
    acc = torch.promote_types(dtype, torch.float32)
    B, H, S, D = q.shape
    NB = rand_blocks.shape[1]
    E = w_o.shape[2]
    i = torch.arange(NB, device=q.device)
    base = ((i[:, None] - i[None, :]).abs() <= window) | (i[:, None] < num_global) | (i[None, :] < num_global)
    token_block = torch.arange(S, device=q.device) // block_size
    attn = torch.empty((B, S, H, D), dtype=acc, device=q.device)
    for h in range(H):
        layout = base.clone()
        layout[i[:, None].expand(-1, rand_blocks.shape[2]), rand_blocks[h].long()] = True
        token_mask = layout[token_block][:, token_block]
        scores = torch.matmul(q[:, h].to(acc), k[:, h].to(acc).transpose(-1, -2)) / D**0.5
        probs = torch.softmax(scores.masked_fill(~token_mask, float("-inf")), dim=-1)
        attn[:, :, h] = torch.matmul(probs, v[:, h].to(acc))
    attn = attn.to(dtype).to(acc).reshape(B * S, H * D)
    return torch.matmul(attn, w_o.to(acc).reshape(H * D, E)).reshape(B, S, E).to(dtype)
