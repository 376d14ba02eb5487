#!/usr/bin/env python3
"""Train a tiny llama-style language model on CPU and save a series of checkpoints.

This script is the source of truth of the training run that ``README.md`` ("Training
dynamics") and ``docs/survey.md`` ("Training runs") describe; the checkpoints it writes
are kept out of git. Everything it needs ships with the environment:

* **Corpus**: the English text of the Python documentation topics that CPython ships
  in its standard library (``pydoc_data.topics.topics``: the language reference and
  library topics shown by ``help()``; about 465 kB for Python 3.11). Keys are taken in
  sorted order and joined by blank lines; the text is read as UTF-8 bytes (a byte-level
  model, vocabulary 256, so no tokenizer is needed). The last 10 % is held out for the
  evaluation loss. The corpus's sha256 is recorded in ``RUN/corpus.json``.
* **Model**: ``transformers.LlamaConfig`` / ``LlamaForCausalLM`` (RoPE, RMSNorm, SwiGLU,
  grouped-query attention), initialized by transformers' own initializer (Gaussian,
  ``initializer_range`` 0.02: the query and key maps at step 0 are iid Gaussian).
* **Training**: AdamW, linear warm-up then cosine decay, random windows drawn by a
  seeded generator, one torch thread (bit-reproducible on one machine).

Output (the layout of Hugging Face ``Trainer``)::

    RUN/checkpoint-<step>/config.json
    RUN/checkpoint-<step>/model.safetensors
    RUN/checkpoint-<step>/trainer_state.json   (global_step, num_input_tokens_seen,
                                                log_history with train and eval losses)
    RUN/corpus.json                           (corpus source, size, sha256, split)

Usage::

    python scripts/train_tiny_llama.py RUN [--steps 300] [--checkpoints 10] ...

Default run (4 layers, d_model 128, 8 query / 4 key-value heads of dimension 16,
300 steps of 16 x 128 bytes): about 2-4 minutes on one core.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path


def corpus_bytes() -> tuple[bytes, str]:
    """The training text (UTF-8 bytes) and a description of its source."""
    import pydoc_data.topics as topics

    keys = sorted(topics.topics)
    text = "\n\n".join(topics.topics[k] for k in keys)
    source = (f"pydoc_data.topics.topics of Python {sys.version.split()[0]} "
              f"({len(keys)} topics, sorted keys joined by blank lines)")
    return text.encode("utf-8"), source


def checkpoint_steps(total: int, count: int) -> list[int]:
    """``count`` distinct steps from 0 to ``total``, denser early (square-root spacing).

    >>> checkpoint_steps(300, 10)
    [0, 4, 15, 33, 59, 93, 133, 181, 237, 300]
    """
    if count < 2:
        return [total]
    steps = sorted({round(total * (i / (count - 1)) ** 2) for i in range(count)})
    return steps


def learning_rate(step: int, total: int, peak: float, warmup: int) -> float:
    """Linear warm-up to ``peak`` over ``warmup`` steps, then cosine decay to 10 %."""
    if step < warmup:
        return peak * (step + 1) / warmup
    frac = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * frac)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", type=Path, help="output directory of the run")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--checkpoints", type=int, default=10)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)

    import numpy as np
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    data, source = corpus_bytes()
    split = int(len(data) * 0.9)
    train = torch.tensor(np.frombuffer(data[:split], dtype=np.uint8).astype(np.int64))
    held = torch.tensor(np.frombuffer(data[split:], dtype=np.uint8).astype(np.int64))
    run: Path = args.run
    run.mkdir(parents=True, exist_ok=True)
    (run / "corpus.json").write_text(json.dumps({
        "source": source, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
        "train_bytes": split, "eval_bytes": len(data) - split,
    }, indent=1), encoding="utf-8")

    config = LlamaConfig(
        vocab_size=256, hidden_size=args.d_model, intermediate_size=int(2.75 * args.d_model),
        num_hidden_layers=args.layers, num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads, head_dim=args.d_model // args.heads,
        max_position_embeddings=args.seq, rope_theta=10000.0, tie_word_embeddings=False,
        initializer_range=0.02, bos_token_id=None, eos_token_id=None, pad_token_id=None,
    )
    config._name_or_path = "tiny-llama-pydoc"
    model = LlamaForCausalLM(config)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95),
                            weight_decay=0.1)
    gen = torch.Generator().manual_seed(args.seed + 1)
    eval_gen = torch.Generator().manual_seed(args.seed + 2)
    eval_starts = torch.randint(0, len(held) - args.seq - 1, (32,), generator=eval_gen)

    def batch(source: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        return torch.stack([source[s:s + args.seq + 1] for s in starts.tolist()])

    @torch.no_grad()
    def eval_loss() -> float:
        model.eval()
        x = batch(held, eval_starts)
        loss = float(model(input_ids=x, labels=x).loss)
        model.train()
        return loss

    saves = set(checkpoint_steps(args.steps, args.checkpoints))
    log: list[dict[str, float | int]] = []
    tokens = 0
    t0 = time.perf_counter()

    def save(step: int) -> None:
        out = run / f"checkpoint-{step}"
        model.save_pretrained(out, safe_serialization=True)
        ev = eval_loss()
        log.append({"step": step, "eval_loss": ev, "num_input_tokens_seen": tokens})
        state = {"global_step": step, "max_steps": args.steps,
                 "num_input_tokens_seen": tokens, "log_history": list(log),
                 "train_batch_size": args.batch, "seq_len": args.seq}
        (out / "trainer_state.json").write_text(json.dumps(state, indent=1), encoding="utf-8")
        print(f"step {step:4d}  eval loss {ev:.3f} nats/byte  tokens {tokens}  "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)

    model.train()
    for step in range(args.steps + 1):
        if step in saves:
            save(step)
        if step == args.steps:
            break
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, args.steps, args.lr, args.warmup)
        starts = torch.randint(0, len(train) - args.seq - 1, (args.batch,), generator=gen)
        x = batch(train, starts)
        loss = model(input_ids=x, labels=x).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        tokens += int(x.shape[0] * args.seq)
        if (step + 1) % 10 == 0:
            log.append({"step": step + 1, "loss": float(loss.detach())})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
