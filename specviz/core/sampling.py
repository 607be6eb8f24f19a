"""Logits -> probabilities and the small pure measures every rule uses. All float32 (docs/algorithms.md pitfall 3)."""
from __future__ import annotations

import math

import torch

from specviz.core import rowmemo


def target_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """(..., V) guided logits -> (..., V) float32 law: temperature, then top-k, then top-p, then softmax.
    temperature 0 is greedy: a one-hot law on the argmax."""
    logits = logits.float()
    if temperature == 0:
        return point_masses(logits.argmax(-1), logits.shape[-1])
    if temperature != 1.0:                                          # x / 1.0 is x: no pass over (N, V) for it
        logits = logits / temperature
    if 0 < top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p < 1.0:
        srt, idx = logits.sort(-1, descending=True)
        cum = srt.softmax(-1).cumsum(-1)
        drop = cum - srt.softmax(-1) >= top_p                      # keep the smallest set reaching top_p
        logits = logits.masked_fill(drop.scatter(-1, idx, drop), float("-inf"))
    return logits.softmax(-1)


def exact_at(px: torch.Tensor, qx: torch.Tensor, off: float = 0.0) -> torch.Tensor:
    """min(1, q(x)/p(x)) at cells (px, qx: p(x), q(x), any shape); 0 where p(x) = 0 (a draft its law never proposes
    is never exactly accepted). The one place min(1, q/p) is written: `rules.lossless` (which sets the cells p never
    proposes to 1, irrelevant there), every recorded exact probability (the judge, the tree levels, keyed noise), the
    re-scoring (rescore.exact_prob) and the Jacobi drafters' maximal coupling (its keep probability) come from here.
    off: the value where p(x) = 0 (`lossless` gives 1 there)."""
    return (qx / px.clamp_min(1e-30)).clamp_(max=1.0).masked_fill_(px <= 0, off)     # one op less than a where


def point_masses(x: torch.Tensor, vocab: int) -> torch.Tensor:
    """Tokens x (...) -> float32 one-hot laws (..., vocab) where x lives: one zeroed float pass and a scatter (one_hot's
    long tensor and its float copy take ~5x longer on the CPU)."""
    return torch.zeros(*x.shape, vocab, device=x.device).scatter_(-1, x[..., None], 1.0)


def entropy(q: torch.Tensor, norm: str = "raw") -> torch.Tensor:
    """H(q) in nats over the last axis; norm 'support' divides by log |supp q|, 'vocab' by log V."""
    return normalised_entropy(raw_entropy(q), q, norm)


@rowmemo.rows
def raw_entropy(q: torch.Tensor) -> torch.Tensor:
    """H(q) in nats over the last axis, once per law's rows (core/rowmemo.py: a rule and the record share it)."""
    return -(q * q.clamp_min(1e-30).log()).sum(-1)


def target_laws(logits: torch.Tensor, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """target_probs, and (without a top-k / top-p mask, where every logit is finite) the laws' entropies offered to
    the memo from the logits (entropy_from_logits: made only for the rows a rule or the record asks for)."""
    q = target_probs(logits, temperature, top_k, top_p)
    if temperature > 0 and top_k == 0 and top_p >= 1.0 and q.dim() == 2 and len(q) > 1:     # one row: a log is less
        raw_entropy.offer(q, make=lambda lo, hi: entropy_from_logits(q[lo:hi], logits[lo:hi].float(), temperature))
    return q


def entropy_from_logits(q: torch.Tensor, logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """-Σ q log q of q = softmax(logits / temperature) (finite logits) without a log of every code: log q_v = z_v - lse
    and lse = z* - log q* at the mode, so H = -(Σ q) log q* - Σ_v q_v (z_v - z*) (every term <= 0: no cancellation;
    Σ q, not 1, so that it is the float32 vector q's own sum). One subtraction, one sum and one dot product a row
    (~3x faster than the log of every code on the CPU), within 4e-7 max(1, H) of it at V = 16,384
    (tests/engine/test_rowmemo.py)."""
    z = logits / temperature if temperature != 1.0 else logits
    return -q.sum(-1) * q.amax(-1).log() - torch.linalg.vecdot(q, z - z.amax(-1, keepdim=True))


@rowmemo.rows
def support_size(q: torch.Tensor) -> torch.Tensor:
    """|supp q| over the last axis of non-negative laws, as float32 (exact below 2^24 codes): the sum of sign(q),
    one float pass (a `q > 0` mask and its count take ~7x longer on the CPU)."""
    return q.sign().sum(-1)


def entropies(q: torch.Tensor, norm: str) -> tuple[float, float]:
    """(H(q), H(q) normalised by `norm`) of one law (V,), H computed once."""
    h = entropy(q)
    return float(h), float(normalised_entropy(h, q, norm))


def normalised_entropy(h: torch.Tensor, q: torch.Tensor, norm: str) -> torch.Tensor:
    """H(q) (already computed) normalised as `entropy` does."""
    if norm == "raw":
        return h
    if norm == "vocab":
        return h / math.log(q.shape[-1])
    # 0 for a point mass (support 1): its H is ±0, so H / log 2 is ±0, and + 0.0 makes it +0 (two ops less than a
    # where on support > 1)
    return h / support_size(q).clamp_min(2).log() + 0.0


@rowmemo.rows
def tv(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Total variation 0.5 * sum |p - q| over the last axis (once per pair of laws' rows: core/rowmemo.py)."""
    return 0.5 * (p - q).abs_().sum(-1)                   # abs in place: the difference is ours


def safe_norm(f: torch.Tensor, fallback: torch.Tensor, eps: float = 1e-12) -> tuple[torch.Tensor, torch.Tensor]:
    """Normalise rows of a non-negative f; rows with mass < eps take `fallback` instead (pitfall 1).
    Returns (law, used_fallback bool per row)."""
    mass = f.sum(-1, keepdim=True)
    empty = mass < eps
    if f.dim() < 2:
        return torch.where(empty, fallback, f / mass.clamp_min(eps)), empty.squeeze(-1)
    # the rows' where() as arithmetic, to the same bits (an empty row's f / inf is 0, then + its fallback; a full
    # row's f / mass + 0): a (L, 1) condition broadcast over (L, V) takes where()'s slow path on the CPU
    return (f / torch.where(empty, torch.inf, mass)).addcmul_(fallback, empty.to(f.dtype)), empty.squeeze(-1)


def sample(probs: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One draw per row by inverse CDF with one uniform per row: (..., V) -> (...) long. The uniforms come from the
    host generator `gen` and are applied where probs lives (no read of the draw)."""
    return draw(probs, torch.rand(probs.shape[:-1], generator=gen).to(probs.device))


def draw(law: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """`sample` with its uniforms given: rows of law (..., V) and u (...) in [0, 1) -> (...) long, by inverse CDF
    where law lives (a caller that draws its uniforms in one batch applies them here)."""
    cdf = law.cumsum(-1)
    return torch.searchsorted(cdf, u[..., None] * cdf[..., -1:], right=True).squeeze(-1).clamp_max(law.shape[-1] - 1)


# ------------------------------------------------------------------------------------ keyed noise (docs/methods.md §9)
# In the `keyed` noise mode every random number of a run is a function of (seed, position, purpose[, token]), never of
# the order a method consumes it: the target's sample at position i is the exponential race x*_i = argmin_v E_i(v)/q(v)
# (Gumbel-max with G = -log E), an exact draw from q; drafts drawn from a law p at i race the same E_i (the coupling of
# Daliri, Musco and Suresh 2024); a relaxed rule's uniform at i for token v is its own keyed number.
PURPOSES = {"race": 1, "accept": 2, "fresh": 3}
_MASK = (1 << 64) - 1


def _splitmix(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def noise_key(seed: int, pos: int, purpose: str, extra: int = 0) -> int:
    """A 63-bit generator seed that depends only on (seed, position, purpose, extra)."""
    z = _splitmix(seed & _MASK)
    for v in (pos, PURPOSES[purpose], extra):
        z = _splitmix(z ^ (v & _MASK))
    return z >> 1


def keyed_uniforms(seed: int, pos: int, purpose: str, n: int, extra: int = 0) -> torch.Tensor:
    """(n,) float32 uniforms in [0, 1), a pure function of (seed, pos, purpose, extra)."""
    return torch.rand(n, generator=torch.Generator().manual_seed(noise_key(seed, pos, purpose, extra)))


def race_noise(seed: int, pos: int, vocab: int) -> torch.Tensor:
    """(V,) standard exponentials E_pos(v) = -log(1 - u): the race every law at this position runs."""
    return -torch.log1p(-keyed_uniforms(seed, pos, "race", vocab))


def race_scores(law: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """log law - log E over the last axis (-inf off the support): its argmax is the race's winner, its descending
    order a draw without replacement (Gumbel top-k)."""
    return log_race_scores(law, e.log())


def log_race_scores(law: torch.Tensor, log_e) -> torch.Tensor:
    """race_scores given log E (a tensor, or a list of (V,) rows, one per row of law (k, V)), to the same bits."""
    log_e = torch.stack(log_e) if isinstance(log_e, list) else log_e
    return torch.where(law > 0, law.clamp_min(1e-38).log() - log_e, torch.full_like(law, float("-inf")))


def race(law: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """The race's winner argmin_v E(v)/law(v) per row: an exact draw from law (..., V) -> (...) long."""
    return race_scores(law, e).argmax(-1)


def coupled_joint(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """J_v = P(race(p) = race(q) = v) = 1 / Σ_w max(p_w/p_v, q_w/q_v) for every v (0 where p_v q_v = 0), over the
    last axis of (..., V) laws; the probability the two draws agree is Σ_v J_v, between (1-TV)/(1+TV) and 1 - TV."""
    both = (p > 0) & (q > 0)
    pv, qv = p.clamp_min(1e-38)[..., :, None], q.clamp_min(1e-38)[..., :, None]
    s = torch.maximum(p[..., None, :] / pv, q[..., None, :] / qv).sum(-1)
    return torch.where(both, 1.0 / s, torch.zeros_like(p))


def coupled_accept(p: torch.Tensor, q: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """J_x / p_x per row (L, V) x (L,) -> (L,): the chance that a draft x drawn by racing p equals the target's race
    sample, given x (the coupled acceptance probability; min(1, q/p) is the papers' one). O(V) per row."""
    rows = torch.arange(len(x), device=x.device)
    px, qx = p[rows, x], q[rows, x]
    s = torch.maximum(p / px.clamp_min(1e-38)[:, None], q / qx.clamp_min(1e-38)[:, None]).sum(-1)
    return (1.0 / (s * px.clamp_min(1e-38))).clamp_(max=1.0).masked_fill_((px <= 0) | (qx <= 0), 0.0)


def relax_excess(b: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """(b - e) / (1 - e) in [0, 1], 0 where e = 1: the chance a relaxed rule accepts a draft that is not the
    target's race sample under the keyed reading (b: the rule's acceptance, e = min(1, q/p) its lossless part)."""
    return ((b - e) / (1 - e).clamp_min(1e-30)).clamp_(0.0, 1.0).masked_fill_(e >= 1, 0.0)    # a where's values


_JOINT_FLOATS = 1 << 20               # change_prob: exact J_v for the heaviest v while |S| x V stays below this


def change_prob(p: torch.Tensor, q: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row of (L, V): P(the committed token differs from the target's race sample) = Σ_v c_v (p_v - J_v) when a
    draft raced from p is accepted with probability c_v (relax_excess) whenever it misses; an upper bound on the
    slot's TV(o, q), equal to it for a point-mass draft. J_v is exact for the _JOINT_FLOATS // V heaviest v of
    S = {v: c_v p_v > 0}; for the rest it is replaced by its lower bound p_v q_v / (p_v + q_v), which keeps the value
    an upper bound (looser). Returns (value (L,), all-exact flag (L,))."""
    width = min(max(1, _JOINT_FLOATS // p.shape[-1]), p.shape[-1])
    in_s = (c > 0) & (p > 0)
    idx = torch.where(in_s, p, -1.0).topk(width, -1).indices                # the heaviest members (and fillers)
    head = torch.zeros_like(in_s).scatter_(-1, idx, True) & in_s
    tail = in_s & ~head
    bound = (c * (p - p * q / (p + q).clamp_min(1e-38)).clamp_min(0)).where(tail, 0.0)
    ph, qh = p.gather(-1, idx), q.gather(-1, idx)
    j = torch.where(qh > 0, joint_at(p, q, idx), 0.0)
    exact = (c.gather(-1, idx) * (ph - j).clamp_min(0)).where(head.gather(-1, idx), 0.0)
    return exact.sum(-1) + bound.sum(-1), ~tail.any(-1)


def joint_at(p: torch.Tensor, q: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """J_v = 1 / Σ_w max(p_w/p_v, q_w/q_v) at the codes idx (L, H) of rows (L, V) (p_v > 0 there; other entries
    undefined), in O(V log H) a row, no (H, V) work: with r_w = q_w/p_w, max(p_w/p_v, q_w/q_v) is p_w/p_v where
    r_w <= r_v and q_w/q_v where r_w >= r_v (both where equal), so the sum is P(r <= r_v)/p_v + Q(r > r_v)/q_v, the
    masses of p and q over the codes below and above r_v: every code's r binned among the H values r_v (float64)."""
    pd, qd = p.double(), q.double()
    r = torch.where(p > 0, qd / pd.clamp_min(1e-300), torch.where(q > 0, float("inf"), 0.0))
    t, order = r.gather(-1, idx).sort(-1)
    bins = torch.searchsorted(t, r)                                   # #{v in idx: r_v < r_w}: r_w <= t_i iff <= i
    zeros = torch.zeros(*p.shape[:-1], idx.shape[-1] + 1, dtype=torch.float64, device=p.device)
    p_le = zeros.scatter_add(-1, bins, pd).cumsum(-1)[..., :-1]
    q_gt = qd.sum(-1, keepdim=True) - zeros.scatter_add(-1, bins, qd).cumsum(-1)[..., :-1]
    pv, qv = pd.gather(-1, idx).gather(-1, order), qd.gather(-1, idx).gather(-1, order)
    s = p_le / pv.clamp_min(1e-300) + q_gt / qv.clamp_min(1e-300)
    return torch.empty_like(s).scatter_(-1, order, 1.0 / s).to(p.dtype)
