"""The probes: random token sequences from the model's own vocabulary and a seed.

No data set is read. The tokens come from the model's tokenizer (the files of its
package, or the vocabulary stored in a GGUF file's metadata): every id of the vocabulary
except the special and added tokens (``[CLS]``, ``<|im_start|>``, ...) and reserved
placeholders (``[unused17]``, ``<unused3>``, ``<|reserved_special_token_5|>``) -- the
*token pool*. Each sequence is framed the way the tokenizer frames text (the tokens it
adds before and after, e.g. ``[CLS] ... [SEP]`` or a BOS token; SmolLM2 adds none), so
the model sees what it sees on ordinary input. Two probes, each with its own stream of
the seed (:func:`qkforms.stats.bootstrap.rng_for`, keys ``"behaviour-probe"`` and the
probe's name):

* ``random``: ``sequences`` bodies of ``length`` distinct pool tokens;
* ``repeated``: ``sequences`` bodies ``r + r`` with ``r`` of ``repeat`` distinct pool
  tokens (the standard induction construction: the second copy can be predicted only by
  looking back at the first).

Examples
--------
>>> import numpy as np
>>> from qkforms.behaviour.probes import Framing, make_probes
>>> probes = make_probes(np.arange(10, 100), Framing((1,), (2,)), seed=0, sequences=2,
...                      length=6, repeat=3, causal=True)
>>> rep = probes["repeated"]
>>> rep.ids.shape, rep.layout.body_start, rep.ids[0, 0], rep.ids[0, -1]
((2, 8), 1, np.int64(1), np.int64(2))
>>> bool(np.array_equal(rep.ids[:, 1:4], rep.ids[:, 4:7]))
True
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from qkforms.behaviour.scores import ProbeLayout
from qkforms.errors import ParameterError, format_value

__all__ = ["PROBES", "RESERVED", "Framing", "Probe", "TokenPool", "make_probes",
           "token_pool", "tokenizer_framing"]

#: the probes, in the order they run
PROBES: tuple[str, ...] = ("random", "repeated")
#: token strings that are placeholders, never seen in training text
RESERVED = re.compile(r"^(\[unused\d+\]|<unused\d+>|<\|reserved_special_token_\d+\|>)$")


@dataclass(frozen=True)
class Framing:
    """The tokens a tokenizer puts before and after a text's own tokens.

    Examples
    --------
    >>> Framing((101,), (102,)).length
    2
    """

    prefix: tuple[int, ...] = ()
    suffix: tuple[int, ...] = ()

    @property
    def length(self) -> int:
        """Tokens added around a body."""
        return len(self.prefix) + len(self.suffix)


def tokenizer_framing(tokenizer: Any, text: str = "hello world") -> Framing:
    """The prefix and suffix ``tokenizer`` adds around ``text`` (empty when it adds none).

    Examples
    --------
    >>> class Tok:
    ...     def __call__(self, text, add_special_tokens=True):
    ...         ids = [7, 8]
    ...         return {"input_ids": [101, *ids, 102] if add_special_tokens else ids}
    >>> tokenizer_framing(Tok())
    Framing(prefix=(101,), suffix=(102,))
    """
    full = [int(i) for i in tokenizer(text)["input_ids"]]
    body = [int(i) for i in tokenizer(text, add_special_tokens=False)["input_ids"]]
    for k in range(len(full) - len(body) + 1):
        if full[k:k + len(body)] == body:
            return Framing(tuple(full[:k]), tuple(full[k + len(body):]))
    return Framing()


@dataclass(frozen=True)
class TokenPool:
    """The ids the probes draw from, and what was left out.

    Examples
    --------
    >>> TokenPool(np.arange(5), {"special": 2}, "test").size
    5
    """

    ids: NDArray[np.int64]
    excluded: dict[str, int]
    rule: str

    @property
    def size(self) -> int:
        """Ids in the pool."""
        return int(self.ids.size)

    def digest(self) -> str:
        """sha256 of the pool's ids (int64, little-endian), for the manifest."""
        return hashlib.sha256(np.asarray(self.ids, dtype="<i8").tobytes()).hexdigest()


def token_pool(tokenizer: Any, vocab_size: int, *,
               special_ids: Sequence[int | None] | None = None) -> TokenPool:
    """The token pool of a model: its vocabulary minus special, added and reserved tokens.

    Parameters
    ----------
    tokenizer : transformers tokenizer or None
        With None (a loaded model without its tokenizer), the pool is every id below
        ``vocab_size`` except ``special_ids`` (the config's BOS/EOS/PAD/... ids).
    vocab_size : int
        Rows of the model's embedding (ids at or above it are never drawn).

    Examples
    --------
    >>> token_pool(None, 6, special_ids=[0, 5]).ids.tolist()
    [1, 2, 3, 4]
    """
    if tokenizer is None:
        drop = {int(i) for i in (special_ids or []) if i is not None}
        ids = np.asarray([i for i in range(int(vocab_size)) if i not in drop], dtype=np.int64)
        return TokenPool(ids, {"special": len(drop)},
                         "every embedding id except the config's special token ids "
                         "(no tokenizer)")
    size = min(int(vocab_size), len(tokenizer))
    special = {int(i) for i in getattr(tokenizer, "all_special_ids", []) or []}
    added = {int(i) for i in (tokenizer.get_added_vocab() or {}).values()} - special
    names = tokenizer.convert_ids_to_tokens(list(range(size)))
    reserved = {i for i, t in enumerate(names) if t is not None and RESERVED.match(str(t))}
    reserved -= special | added
    drop = special | added | reserved
    ids = np.asarray([i for i in range(size) if i not in drop], dtype=np.int64)
    excluded = {"special": len(special & set(range(size))),
                "added": len(added & set(range(size))), "reserved": len(reserved),
                "beyond_embedding": max(0, len(tokenizer) - size)}
    return TokenPool(ids, excluded, "the tokenizer's vocabulary below the embedding size, "
                     "minus special, added and reserved placeholder tokens")


@dataclass(frozen=True)
class Probe:
    """One probe: token ids ``(sequences, S)`` and where their parts sit.

    Examples
    --------
    >>> p = make_probes(np.arange(50), Framing(), seed=1, sequences=1, length=4, repeat=2,
    ...                 causal=False)["random"]
    >>> p.ids.shape, p.layout.causal
    ((1, 4), False)
    """

    name: str
    ids: NDArray[np.int64]
    layout: ProbeLayout

    def digest(self) -> str:
        """sha256 of the token ids (int64, little-endian), for the manifest."""
        return hashlib.sha256(np.asarray(self.ids, dtype="<i8").tobytes()).hexdigest()


def make_probes(pool: ArrayLike, framing: Framing, *, seed: int, sequences: int,
                length: int, repeat: int, causal: bool) -> dict[str, Probe]:
    """The ``random`` and ``repeated`` probes (see the module docstring).

    Raises
    ------
    ParameterError
        Fewer than 1 sequence, bodies shorter than 2 (or copies shorter than 2), or a
        pool with fewer tokens than a body needs (tokens are distinct within a body).
    """
    # lazy: keeps python-flint out of this module's import
    from qkforms.stats.bootstrap import rng_for

    ids = np.asarray(pool, dtype=np.int64)
    if sequences < 1:
        raise ParameterError(f"probes need at least 1 sequence, got {format_value(sequences)}")
    if length < 2 or repeat < 2:
        raise ParameterError(f"probe bodies need at least 2 tokens (length "
                             f"{format_value(length)}, repeat {format_value(repeat)})")
    need = max(length, repeat)
    if ids.size < need:
        raise ParameterError(f"the token pool has {ids.size} tokens, fewer than the "
                             f"{need} distinct tokens a probe body needs")
    pre = np.asarray(framing.prefix, dtype=np.int64)
    suf = np.asarray(framing.suffix, dtype=np.int64)

    def frame(bodies: NDArray[np.int64]) -> NDArray[np.int64]:
        rows = bodies.shape[0]
        return np.concatenate([np.broadcast_to(pre, (rows, pre.size)), bodies,
                               np.broadcast_to(suf, (rows, suf.size))], axis=1)

    out: dict[str, Probe] = {}
    rng = rng_for(seed, "behaviour-probe", "random")
    bodies = np.stack([ids[rng.choice(ids.size, size=length, replace=False)]
                       for _ in range(sequences)])
    out["random"] = Probe("random", frame(bodies),
                          ProbeLayout(length + framing.length, pre.size, length, None, causal))
    rng = rng_for(seed, "behaviour-probe", "repeated")
    halves = np.stack([ids[rng.choice(ids.size, size=repeat, replace=False)]
                       for _ in range(sequences)])
    out["repeated"] = Probe("repeated", frame(np.concatenate([halves, halves], axis=1)),
                            ProbeLayout(2 * repeat + framing.length, pre.size, 2 * repeat,
                                        repeat, causal))
    return out
