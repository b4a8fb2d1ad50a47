"""Source: https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/generation/utils.py (GenerationMixin._greedy_search: ``next_token_logits = outputs.logits[:, -1, :]``, ``next_tokens = torch.argmax(next_tokens_scores, dim=-1)``)
Expect: pass
Why: Hugging Face's greedy search step; torch.argmax gives int64 and the first of equal maxima.
"""
import torch


def greedy_next_token(logits):
    next_token_logits = logits[:, -1, :]
    return torch.argmax(next_token_logits, dim=-1)
