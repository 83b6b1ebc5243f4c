"""The output head of a decoder at decode time, composed from the ops in mini_head.ops.

h = rms_norm(x) * norm_weight is rounded to the input dtype (as the model's last norm returns it);
the logits h @ w_head.T stay in float32, and the log-probabilities over the vocabulary are float32.
The reference rounds at the same point.
"""

import torch

from mini_head.ops.linear import linear_f32
from mini_head.ops.logsoftmax import log_softmax
from mini_head.ops.rmsnorm import rms_norm


def head_logprobs(x: torch.Tensor, norm_weight: torch.Tensor, w_head: torch.Tensor, eps: float) -> torch.Tensor:
    """log_softmax(rms_norm(x) * norm_weight @ w_head.T) for x (M, H) and w_head (V, H); (M, V) float32."""
    h = rms_norm(x, norm_weight, eps)
    logits = linear_f32(h, w_head)
    return log_softmax(logits)
