"""Token routing for a mixture-of-experts layer, composed from the primitives in mini_prims.prims.

The router picked K experts for each of T tokens (topk_ids, with gate weights topk_weights). Entry
i = t * K + k of the flattened (T * K) routing is dispatched to expert topk_ids[t, k]. The grouped
expert GEMM that follows needs the entries grouped by expert, each expert's run contiguous and in
increasing order of i, the run boundaries, the weights in that order, and the router statistics
(the total gate weight each expert received).
"""

import torch

from mini_prims.prims.gather import gather
from mini_prims.prims.histogram import histogram
from mini_prims.prims.radix_sort import sort_pairs
from mini_prims.prims.scan import exclusive_scan
from mini_prims.prims.segmented import segmented_sum


def route_tokens(
    topk_ids: torch.Tensor, topk_weights: torch.Tensor, E: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """For topk_ids (T, K) int32 in [0, E) and topk_weights (T, K) float32, returns
    sorted_ids (T * K,) int32: the flat entry indices grouped by expert, stably;
    expert_offsets (E + 1,) int32: expert e's entries are sorted_ids[offsets[e]:offsets[e + 1]];
    sorted_weights (T * K,) float32: the gate weight of each entry of sorted_ids;
    weight_sums (E,) float32: the sum of the gate weights routed to each expert."""
    keys = topk_ids.reshape(-1)
    weights = topk_weights.reshape(-1)
    entries = torch.arange(keys.numel(), dtype=torch.int32, device=keys.device)
    num_bits = max(1, (E - 1).bit_length())
    _, sorted_ids = sort_pairs(keys, entries, num_bits)
    expert_offsets = exclusive_scan(histogram(keys, E))
    sorted_weights = gather(weights, sorted_ids)
    weight_sums = segmented_sum(sorted_weights, expert_offsets)
    return sorted_ids, expert_offsets, sorted_weights, weight_sums
