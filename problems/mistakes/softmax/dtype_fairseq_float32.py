"""Source: https://github.com/facebookresearch/fairseq/blob/032a404d389307a0e8f7dd2a0d501c78afa78f39/fairseq/utils.py
Expect: dtype
Why: fairseq.utils.softmax always passes dtype=torch.float32, so bfloat16/float16/float64 inputs come back as float32 (fairseq casts back with type_as at its call sites).
"""
import torch
import torch.nn.functional as F


def softmax(logits, axis=-1):
    return F.softmax(logits, dim=axis, dtype=torch.float32)
