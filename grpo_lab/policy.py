"""Small policies built locally, with no model hub (introduced in notebook 05).

``char_tokenizer()`` is a character-level ``PreTrainedTokenizerFast``;
``tiny_causal_lm()`` a randomly initialised Qwen2-style causal LM built from a config.
They let the TRL integration, its tests and the CPU course run without downloading
anything. transformers is imported lazily so ``import grpo_lab`` stays light.
"""

from __future__ import annotations

import string

SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")
CHARS = string.digits + string.ascii_letters + " \n.,:;?!$#%+-*/=()'\"\\{}_"


def char_tokenizer():
    """A character-level fast tokenizer: one token per character of :data:`CHARS`, plus specials.

    Unknown characters map to ``<unk>``; decoding fuses characters back without spaces.
    """
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(list(SPECIAL_TOKENS) + list(dict.fromkeys(CHARS)))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tok.decoder = decoders.Fuse()
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<bos>", eos_token="<eos>",
                                 unk_token="<unk>")
    hf.padding_side = "left"  # generation pads on the left
    return hf


def tiny_causal_lm(tokenizer=None, hidden_size: int = 64, num_layers: int = 2, num_heads: int = 4,
                   max_positions: int = 256, seed: int = 0):
    """A randomly initialised Qwen2-style causal LM sized for a CPU (about 0.1M parameters by default)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = tokenizer or char_tokenizer()
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers, num_attention_heads=num_heads, num_key_value_heads=num_heads,
        max_position_embeddings=max_positions, tie_word_embeddings=True, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model
