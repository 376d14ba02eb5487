"""The behaviour scores, probes and rebuilt scores on constructed inputs (no torch).

Every score is pinned on attention patterns whose answer is known by construction: a
head that attends exactly to the previous token scores 1 on ``previous_token`` (and its
mean attention distance is 1 token, its entropy 0), a uniform head has normalized
entropy 1, an induction pattern scores 1 on ``induction`` and 0 on ``duplicate_token``,
and so on.
"""

from __future__ import annotations

import numpy as np
import pytest

from qkforms.behaviour.probes import Framing, make_probes, token_pool, tokenizer_framing
from qkforms.behaviour.reconstruct import (
    ShareSums,
    allowed_pairs,
    layer_scores,
    pattern_deviation,
    softmax_pattern,
)
from qkforms.behaviour.scores import (
    SCORES,
    ProbeLayout,
    duplicate_token,
    entropy,
    entropy_norm,
    induction,
    mean_distance,
    previous_token,
    sink,
)
from qkforms.errors import ParameterError, ShapeError
from qkforms.models.records import LayerWeights

S = 12
RANDOM = ProbeLayout(length=S, body_start=0, body_length=S)
REPEATED = ProbeLayout(length=2 * 5 + 2, body_start=1, body_length=10, repeat=5)


def one_hot(targets: np.ndarray, length: int) -> np.ndarray:
    """Pattern whose query i puts all its attention on key targets[i]."""
    A = np.zeros((length, length))
    A[np.arange(length), targets] = 1.0
    return A


def previous_token_pattern(length: int = S) -> np.ndarray:
    return one_hot(np.maximum(np.arange(length) - 1, 0), length)


def test_a_previous_token_head_scores_one_and_nothing_else() -> None:
    A = previous_token_pattern()
    assert previous_token(A, RANDOM) == 1.0
    assert mean_distance(A, RANDOM) == 1.0
    assert entropy(A, RANDOM) == 0.0
    assert entropy_norm(A, RANDOM) == 0.0
    # query 1 looks at position 0: the only query whose previous token is the first one
    assert sink(A, RANDOM) == pytest.approx(1 / (S - 1))


def test_a_sink_head_scores_one_and_its_distance_is_the_mean_position() -> None:
    A = one_hot(np.zeros(S, dtype=int), S)
    assert sink(A, RANDOM) == 1.0
    assert mean_distance(A, RANDOM) == pytest.approx(np.mean(np.arange(1, S)))
    assert previous_token(A, RANDOM) == pytest.approx(1 / (S - 1))


def test_a_uniform_causal_head_has_entropy_ln_m_and_normalized_entropy_one() -> None:
    U = np.tril(np.ones((S, S))) / np.arange(1, S + 1)[:, None]
    q = np.arange(1, S)
    assert entropy(U, RANDOM) == pytest.approx(np.mean(np.log(q + 1)))
    assert entropy_norm(U, RANDOM) == pytest.approx(1.0)
    assert previous_token(U, RANDOM) == pytest.approx(np.mean(1 / (q + 1)))
    assert mean_distance(U, RANDOM) == pytest.approx(np.mean(q / 2))


def test_bidirectional_uniform_attention_sees_every_key() -> None:
    lay = ProbeLayout(length=S, body_start=0, body_length=S, causal=False)
    U = np.full((S, S), 1 / S)
    assert entropy_norm(U, lay) == pytest.approx(1.0)
    assert entropy_norm(np.tril(np.ones((S, S))) / np.arange(1, S + 1)[:, None], lay) < 1.0


def test_induction_and_duplicate_token_heads() -> None:
    L = REPEATED.length
    q = REPEATED.second_copy()
    assert q.tolist() == [6, 7, 8, 9, 10]
    ind = previous_token_pattern(L)
    ind[q] = 0.0
    ind[q, q - 4] = 1.0                     # i - T + 1: the token after the earlier copy
    dup = previous_token_pattern(L)
    dup[q] = 0.0
    dup[q, q - 5] = 1.0                     # i - T: the earlier copy itself
    assert induction(ind, REPEATED) == 1.0 and duplicate_token(ind, REPEATED) == 0.0
    assert duplicate_token(dup, REPEATED) == 1.0 and induction(dup, REPEATED) == 0.0
    # a previous-token head on the repeated probe is neither
    assert induction(previous_token_pattern(L), REPEATED) == 0.0
    assert duplicate_token(previous_token_pattern(L), REPEATED) == 0.0


def test_scores_are_batched_and_average_over_queries() -> None:
    A = np.stack([previous_token_pattern(), one_hot(np.zeros(S, dtype=int), S)])[None]
    out = previous_token(np.concatenate([A, A]), RANDOM)      # (2 sequences, 2 heads)
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out[:, 0], 1.0)
    np.testing.assert_allclose(out[:, 1], 1 / (S - 1))
    half = 0.5 * previous_token_pattern() + 0.5 * one_hot(np.zeros(S, dtype=int), S)
    assert previous_token(half, RANDOM) == pytest.approx(0.5 + 0.5 / (S - 1))


def test_the_framing_prefix_is_not_a_query_but_position_zero_is_the_sink() -> None:
    lay = ProbeLayout(length=6, body_start=2, body_length=3)   # [p, p, b, b, b, s]
    assert lay.queries().tolist() == [2, 3, 4]
    A = one_hot(np.array([0, 0, 0, 0, 0, 0]), 6)
    assert sink(A, lay) == 1.0
    assert previous_token(previous_token_pattern(6), lay) == 1.0


def test_layout_and_pattern_errors() -> None:
    with pytest.raises(ParameterError):
        ProbeLayout(length=4, body_start=3, body_length=2)
    with pytest.raises(ParameterError):
        ProbeLayout(length=9, body_start=0, body_length=9, repeat=4)
    with pytest.raises(ParameterError):
        RANDOM.second_copy()
    with pytest.raises(ShapeError):
        previous_token(np.eye(5), RANDOM)


def test_every_score_has_a_probe_and_a_displacement_rule() -> None:
    assert list(SCORES) == ["previous_token", "induction", "duplicate_token", "sink",
                            "mean_distance", "entropy", "entropy_norm"]
    assert {s.probe for s in SCORES.values()} == {"random", "repeated"}
    assert [SCORES[s].displacement_for(64) for s in ("previous_token", "induction",
                                                     "duplicate_token", "sink")] == \
        [1, 63, 64, None]


# ----------------------------------------------------------------------------- probes


class FakeTokenizer:
    """The tokenizer interface the probes use: BOS/EOS framing, special and added ids."""

    all_special_ids = [0, 1, 2]

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        body = [10 + len(w) for w in text.split()]
        return {"input_ids": [1, *body, 2] if add_special_tokens else body}

    def __len__(self) -> int:
        return 40

    def get_added_vocab(self) -> dict[str, int]:
        return {"<tool>": 3}

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return ["[unused0]" if i == 4 else f"t{i}" for i in ids]


def test_token_pool_leaves_out_special_added_and_reserved_tokens() -> None:
    pool = token_pool(FakeTokenizer(), 32)
    assert pool.ids.tolist() == list(range(5, 32))
    assert pool.excluded == {"special": 3, "added": 1, "reserved": 1, "beyond_embedding": 8}
    assert len(pool.digest()) == 64
    assert token_pool(None, 5, special_ids=[0, None, 4]).ids.tolist() == [1, 2, 3]


def test_framing_is_what_the_tokenizer_adds_around_text() -> None:
    assert tokenizer_framing(FakeTokenizer()) == Framing((1,), (2,))


def test_probes_are_seeded_framed_distinct_and_repeated() -> None:
    pool = np.arange(100, 160)
    a = make_probes(pool, Framing((1,), (2,)), seed=3, sequences=4, length=20, repeat=7,
                    causal=True)
    b = make_probes(pool, Framing((1,), (2,)), seed=3, sequences=4, length=20, repeat=7,
                    causal=True)
    c = make_probes(pool, Framing((1,), (2,)), seed=4, sequences=4, length=20, repeat=7,
                    causal=True)
    for name in ("random", "repeated"):
        np.testing.assert_array_equal(a[name].ids, b[name].ids)
        assert a[name].digest() == b[name].digest() != c[name].digest()
    rnd, rep = a["random"], a["repeated"]
    assert rnd.ids.shape == (4, 22) and rep.ids.shape == (4, 16)
    assert (rnd.ids[:, 0] == 1).all() and (rnd.ids[:, -1] == 2).all()
    for row in rnd.ids[:, 1:-1]:
        assert len(set(row.tolist())) == 20 and set(row.tolist()) <= set(pool.tolist())
    np.testing.assert_array_equal(rep.ids[:, 1:8], rep.ids[:, 8:15])
    for row in rep.ids[:, 1:8]:
        assert len(set(row.tolist())) == 7
    assert rep.layout.second_copy().tolist() == list(range(8, 15))
    with pytest.raises(ParameterError, match="fewer than"):
        make_probes(np.arange(5), Framing(), seed=0, sequences=1, length=6, repeat=2,
                    causal=True)


# -------------------------------------------------------------------- rebuilt scores


def _layer(rng: np.random.Generator, *, bias: bool) -> LayerWeights:
    n_q, n_kv, n, N = 4, 2, 4, 7
    return LayerWeights(0, rng.standard_normal((n_q, n, N)), rng.standard_normal((n_kv, n, N)),
                        rng.standard_normal((n_q, n)) if bias else None,
                        rng.standard_normal((n_kv, n)) if bias else None,
                        np.array([0, 0, 1, 1]))


def test_rebuilt_scores_follow_the_head_maps_biases_and_rope_one_head_at_a_time() -> None:
    rng = np.random.default_rng(0)
    lw = _layer(rng, bias=True)
    x = rng.standard_normal((2, 5, 7))
    rope = {"rope_base": 50.0}
    s, b = layer_scores(x, lw, rope=rope, scale=0.5)
    assert s.shape == b.shape == (2, 4, 5, 5)
    theta = 50.0 ** (-np.arange(2) / 2)         # n = 4: two planes, split-half pairs

    def rot(v: np.ndarray, pos: int) -> np.ndarray:
        out = v.copy()
        for i, t in enumerate(theta):
            c, sn = np.cos(pos * t), np.sin(pos * t)
            out[i], out[i + 2] = c * v[i] - sn * v[i + 2], sn * v[i] + c * v[i + 2]
        return out

    for h in range(4):
        g = int(lw.kv_index[h])
        L = lw.W_K[g].T @ lw.W_Q[h]
        for i in range(5):
            for j in range(5):
                qv = lw.W_Q[h] @ x[1, i] + lw.b_Q[h]
                kv = lw.W_K[g] @ x[1, j] + lw.b_K[g]
                assert s[1, h, i, j] == pytest.approx(0.5 * rot(kv, j) @ rot(qv, i), abs=1e-12)
                assert b[1, h, i, j] == pytest.approx(0.5 * x[1, j] @ L @ x[1, i], abs=1e-12)


def test_softmax_pattern_masks_future_keys_and_deviation_is_per_head() -> None:
    s = np.random.default_rng(1).standard_normal((1, 2, 4, 4))
    P = softmax_pattern(s, causal=True)
    assert np.all(P[..., ~allowed_pairs(4, True)] == 0.0)
    np.testing.assert_allclose(P.sum(-1), 1.0)
    np.testing.assert_allclose(softmax_pattern(s, causal=False).sum(-1), 1.0)
    Q = P.copy()
    Q[0, 1, 3, 0] += 0.25
    assert pattern_deviation(Q, P).tolist() == [0.0, 0.25]


def test_bilinear_share_is_one_without_biases_and_rope_and_drops_with_them() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 8, 7))
    lay = ProbeLayout(length=8, body_start=0, body_length=8)
    plain = ShareSums(4)
    plain.add(*layer_scores(x, _layer(np.random.default_rng(5), bias=False), rope=None,
                            scale=1.0), lay)
    full, row = plain.shares()
    np.testing.assert_allclose(full, 1.0)
    np.testing.assert_allclose(row, 1.0)
    biased = ShareSums(4)
    biased.add(*layer_scores(x, _layer(np.random.default_rng(5), bias=True), rope=None,
                             scale=1.0), lay)
    full_b, row_b = biased.shares()
    assert np.all(full_b < 1.0) and np.all(row_b < 1.0)
    assert np.all(row_b > full_b)  # per-query terms cancel within rows


def test_bilinear_share_over_batches_equals_the_direct_formula() -> None:
    rng = np.random.default_rng(3)
    lay = ProbeLayout(length=6, body_start=0, body_length=6)
    s = rng.standard_normal((5, 2, 6, 6)) * 3 + 7
    b = s + rng.standard_normal(s.shape)
    sums = ShareSums(2)
    for k in range(0, 5, 2):
        sums.add(s[k:k + 2], b[k:k + 2], lay)
    full, row = sums.shares()
    q = lay.queries()
    mask = allowed_pairs(6, True)[q]
    for h in range(2):
        S_, B_ = s[:, h][:, q], b[:, h][:, q]
        vals_s, vals_b = S_[:, mask], B_[:, mask]
        want = 1 - ((vals_s - vals_b) ** 2).sum() / ((vals_s - vals_s.mean()) ** 2).sum()
        assert full[h] == pytest.approx(want, rel=1e-12)
        num = den = 0.0
        for seq in range(5):
            for r in range(len(q)):
                keys = mask[r]
                sr = S_[seq, r, keys] - S_[seq, r, keys].mean()
                br = B_[seq, r, keys] - B_[seq, r, keys].mean()
                num += ((sr - br) ** 2).sum()
                den += (sr ** 2).sum()
        assert row[h] == pytest.approx(1 - num / den, rel=1e-12)
