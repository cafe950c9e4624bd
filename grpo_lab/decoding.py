"""A decode loop on the trained model itself: the rollout path of ``RunConfig(generation="loop")`` (issue 84).

Sampling with ``model.generate`` pays, at every new token, for the library's generic machinery (its attention
masks rebuilt, its cache grown by concatenation, its logits processors); vLLM pays for a second copy of the model and
a weight hand-over after every optimizer step. On a 135M model on a CPU that overhead is most of a step. This loop
calls the model's own decoder layers (so a LoRA adapter, trained or not, acts exactly as in training: the policy
that samples is the policy that trains, and nothing is handed over) with:

- a **static KV cache**: one buffer per layer, written in place (no concatenation);
- one **additive attention mask** built once per call (left padding of the prompts, then the causal part), sliced
  per step;
- the rotary embedding of each step's positions computed once for every layer;
- **batched** over every row of a generation round (all prompts × G completions in one forward per token).

Sampling is the plain categorical draw of TRL's default (temperature; ``top_k``/``top_p`` when set), from
``torch``'s generator (one seed drives it, as for ``model.generate``). It returns each sampled token's log-prob under
the sampling distribution, as vLLM does. ``tests/test_decoding.py`` holds the canary: the log-probs of sampled
completions equal a full forward pass of the same model within float32 noise.

Architectures: the decoder-only models whose layers take ``(hidden, attention_mask, position_embeddings,
past_key_values)`` and whose model has ``rotary_emb`` (Llama, Qwen2, Mistral, SmolLM2; :func:`supports`); any other
is refused by name, never decoded approximately.
"""

from __future__ import annotations

import math


SUPPORTED = ("LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM")


def _inner(model):
    """The transformers model under a peft wrapper (or the model itself)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def supports(model) -> str | None:
    """Why :class:`DecodeLoop` cannot decode ``model`` (one line), or None."""
    inner = _inner(model)
    name = type(inner).__name__
    if name not in SUPPORTED:
        return f"{name} is not one of the architectures the decode loop runs ({', '.join(SUPPORTED)})"
    if getattr(inner.config, "sliding_window", None) and getattr(inner.config, "use_sliding_window", False):
        return f"{name} with a sliding window"
    return None


class _StaticCache:
    """One preallocated K/V buffer per layer, ``[rows, kv_heads, length, head_dim]``, written in place at the
    current step's positions; ``update`` (what the model's attention calls) returns every position so far."""

    def __init__(self, layers: int, rows: int, heads: int, length: int, dim: int, dtype, device):
        import torch

        self.k = [torch.zeros(rows, heads, length, dim, dtype=dtype, device=device) for _ in range(layers)]
        self.v = [torch.zeros(rows, heads, length, dim, dtype=dtype, device=device) for _ in range(layers)]
        self.at, self.n = 0, 0  # the step's first position and its number of positions

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        end = self.at + self.n
        self.k[layer_idx][:, :, self.at:end] = key_states
        self.v[layer_idx][:, :, self.at:end] = value_states
        return self.k[layer_idx][:, :, :end], self.v[layer_idx][:, :, :end]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.at + self.n


class DecodeLoop:
    """Sampling from ``model`` (a causal LM, with or without a peft adapter) by its own decoder layers."""

    def __init__(self, model, tokenizer):
        why = supports(model)
        if why:
            raise ValueError(f"generation='loop' cannot decode this model: {why}")
        self.model, self.tokenizer = model, tokenizer
        inner = _inner(model)
        self.inner, self.body = inner, inner.model
        cfg = inner.config
        self.heads = cfg.num_attention_heads
        self.kv_heads = getattr(cfg, "num_key_value_heads", None) or self.heads
        self.dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.heads
        eos = getattr(inner.generation_config, "eos_token_id", None)
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        if tokenizer.eos_token_id is not None:
            eos.append(tokenizer.eos_token_id)
        self.eos = sorted(set(eos))
        pad = tokenizer.pad_token_id
        self.pad = pad if pad is not None else self.eos[0]

    def __call__(self, prompts: list, max_new_tokens: int, temperature: float = 1.0, top_k: int = 0,
                 top_p: float = 1.0, generator=None) -> tuple[list, list, list]:
        """``(completion token ids, their log-probs, truncated)`` for each prompt (a list of token ids): one
        completion per prompt, stopped at an end-of-sequence token (kept, as vLLM keeps it) or at
        ``max_new_tokens`` (``truncated``). ``temperature=0``: greedy. Arguments no sampler could mean are refused by
        name before any token (issue 105): a negative, NaN or vanishing temperature (below
        :data:`MIN_TEMPERATURE` the scaled logits overflow float32 and every draw is NaN), ``max_new_tokens`` below
        1, ``top_k`` below 0, ``top_p`` outside (0, 1]."""
        import torch

        check_sampling(max_new_tokens, temperature, top_k, top_p)
        model = self.model
        was_training = model.training
        model.eval()
        try:
            with torch.inference_mode():
                return self._decode(prompts, max_new_tokens, temperature, top_k, top_p, generator)
        finally:
            model.train(was_training)

    def score(self, prompt: list, completion: list) -> list:
        """The log-prob of each token of ``completion`` after ``prompt``, fed one token at a time through the loop's
        own decode path (the canary compares it with a forward of the model)."""
        import torch

        forced = iter(completion)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode():
                _, logps, _ = self._decode([list(prompt)], len(completion), 1.0, 0, 1.0, None,
                                           force=lambda: next(forced))
        finally:
            self.model.train(was_training)
        return logps[0]

    def _decode(self, prompts, max_new_tokens, temperature, top_k, top_p, generator, force=None):
        import torch

        rows = len(prompts)
        if rows == 0:
            return [], [], []
        longest = max(len(p) for p in prompts)
        total = longest + max_new_tokens
        param = next(self.body.parameters())
        device, dtype = param.device, param.dtype
        ids = torch.full((rows, longest), self.pad, dtype=torch.long, device=device)
        real = torch.zeros((rows, total), dtype=torch.bool, device=device)  # which positions hold a token
        for i, p in enumerate(prompts):
            ids[i, longest - len(p):] = torch.as_tensor(p, dtype=torch.long, device=device)
            real[i, longest - len(p):longest] = True
        start = longest - torch.as_tensor([len(p) for p in prompts], device=device)  # each row's first position
        cache = _StaticCache(len(self.body.layers), rows, self.kv_heads, total, self.dim, dtype, device)
        neg = torch.finfo(dtype).min
        causal = torch.ones(total, total, dtype=torch.bool, device=device).tril()
        own = torch.eye(total, dtype=torch.bool, device=device)  # a padding position sees itself: no row all -inf

        def forward(tokens, at):
            n = tokens.shape[1]
            cache.at, cache.n = at, n
            positions = torch.arange(at, at + n, device=device)[None, :] - start[:, None]  # rotary: from 0 a row
            hidden = self.body.embed_tokens(tokens)
            cos_sin = self.body.rotary_emb(hidden, positions.clamp_min(0))
            allowed = causal[at:at + n, :at + n][None, :, :] & real[:, None, :at + n] | own[at:at + n, :at + n]
            mask = torch.zeros(rows, 1, n, at + n, dtype=dtype, device=device).masked_fill(~allowed[:, None], neg)
            for layer in self.body.layers:
                out = layer(hidden, attention_mask=mask, position_embeddings=cos_sin, past_key_values=cache,
                            position_ids=positions, use_cache=True)
                hidden = out[0] if isinstance(out, tuple) else out
            hidden = self.body.norm(hidden[:, -1:])
            return self.inner.lm_head(hidden)[:, -1].float()

        # the prompt's positions once per distinct prompt (TRL repeats each prompt G times): its K/V and last
        # logits copied to every row that repeats it, as vLLM's prefix cache shares them
        first: dict = {}
        for i, p in enumerate(prompts):
            first.setdefault(tuple(p), i)
        if len(first) < rows:
            lead = torch.as_tensor(list(first.values()), device=device)
            which = torch.as_tensor([list(first).index(tuple(p)) for p in prompts], device=device)
            full_start, full_real = start, real
            start, real = start[lead], real[lead].clone()
            small = _StaticCache(len(self.body.layers), len(lead), self.kv_heads, longest, self.dim, dtype, device)
            cache, big = small, cache
            rows_all, rows = rows, len(lead)
            logits = forward(ids[lead], 0)[which]
            for layer in range(len(self.body.layers)):
                big.k[layer][:, :, :longest] = small.k[layer][which]
                big.v[layer][:, :, :longest] = small.v[layer][which]
            cache, start, real, rows = big, full_start, full_real, rows_all
        else:
            logits = forward(ids, 0)
        eos = torch.as_tensor(self.eos, device=device)
        done = torch.zeros(rows, dtype=torch.bool, device=device)
        tokens, logps = [], []
        for step in range(max_new_tokens):
            if force is not None:  # teacher forcing (score): the given token, its log-prob under the model
                token = torch.full((rows,), int(force()), dtype=torch.long, device=device)
                logp = torch.log_softmax(logits, -1).gather(1, token[:, None]).squeeze(1)
            else:
                token, logp = _draw(logits, temperature, top_k, top_p, generator)
            token = torch.where(done, torch.full_like(token, self.pad), token)
            tokens.append(token)
            logps.append(logp)
            real[:, longest + step] = ~done  # a finished row's later positions stay masked
            done = done | (torch.isin(token, eos) if force is None else done)
            if bool(done.all()) or step == max_new_tokens - 1:
                break
            logits = forward(token[:, None], longest + step)
        tokens = torch.stack(tokens, 1).tolist()
        logps = torch.stack(logps, 1).tolist()
        out_ids, out_lp, cut = [], [], []
        for row, lp in zip(tokens, logps):
            end = None if force is not None else next((j + 1 for j, t in enumerate(row) if t in self.eos), None)
            out_ids.append(row[:end] if end else row)
            out_lp.append(lp[:end] if end else lp)
            cut.append(end is None)
        return out_ids, out_lp, cut


MIN_TEMPERATURE = 1e-3  # below it (but above 0, greedy) logits / temperature overflow float32: every draw NaN


def check_sampling(max_new_tokens, temperature, top_k, top_p) -> None:
    """The decode loop's arguments, checked by name (:meth:`DecodeLoop.__call__`)."""
    from ._checks import as_int, as_number

    as_int("max_new_tokens", max_new_tokens, minimum=1)
    t = as_number("temperature", temperature, low=0.0)
    if 0 < t < MIN_TEMPERATURE:
        raise ValueError(f"temperature must be 0 (greedy) or at least {MIN_TEMPERATURE:g}, got {temperature!r}: "
                         "smaller, the scaled logits overflow float32 and every draw is NaN")
    as_int("top_k", top_k, minimum=0)
    as_number("top_p", top_p, low=0.0, high=1.0, low_open=True)


def _draw(logits, temperature: float, top_k: int, top_p: float, generator):
    """One token per row from ``logits`` ``[rows, vocab]`` and its log-prob under the distribution sampled from
    (after temperature, top-k and top-p: what vLLM's ``processed_logprobs`` report); temperature 0: greedy."""
    import torch

    if temperature == 0:
        token = logits.argmax(-1)
        return token, torch.log_softmax(logits, -1).gather(1, token[:, None]).squeeze(1)
    scaled = logits / temperature
    if top_k and top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k, dim=-1).values[:, -1:]
        scaled = scaled.masked_fill(scaled < kth, -math.inf)
    if top_p < 1.0:
        order = torch.sort(scaled, descending=True, dim=-1)
        cum = torch.softmax(order.values, -1).cumsum(-1)
        cut = cum - torch.softmax(order.values, -1) > top_p  # keep the smallest prefix whose mass reaches top_p
        scaled = scaled.scatter(1, order.indices, order.values.masked_fill(cut, -math.inf))
    logp = torch.log_softmax(scaled, -1)
    # inverse-CDF sampling: one uniform per row against the cumulative probabilities (torch.multinomial draws an
    # exponential per vocabulary entry, 24 ms a step for 16 rows of SmolLM2's 49,152 tokens); the same distribution
    cdf = logp.exp().cumsum(-1)
    u = torch.rand(cdf.shape[0], 1, generator=generator, device=cdf.device, dtype=cdf.dtype) * cdf[:, -1:]
    token = torch.searchsorted(cdf, u, right=True).squeeze(1).clamp_max(cdf.shape[1] - 1)
    return token, logp.gather(1, token[:, None]).squeeze(1)
