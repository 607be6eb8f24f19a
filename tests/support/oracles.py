"""Reference oracles: small literal ports of the released acceptance and residual code (our code, their semantics).

One slot at a time, 1-D laws, loops and slicing as in the released files, each function citing file and line
(commits: tyshiwo1/Accelerating-T2I-AR-with-SJD b389cfb, junhyukso/GSD 4216c7c, jadohu/LANTERN 3a56e45). Only the
tests import this; they check specviz's reproduction modes against it (tests/engine/test_oracles.py, docs/methods.md
§8.3).
Naming follows each repository: SJD/GSD call the target law `advanced_prob` and the draft law `draft_prob`;
LANTERN calls the target probability `px` and the draft probability `qx`.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


# ------------------------------------------------------------------------------------------------------------ SJD
def sjd_accept(advanced_prob: torch.Tensor, draft_prob: torch.Tensor, cls_idx: int) -> float:
    """scheduler/jacobi_iteration_lumina_mgpt.py:278-286: accept iff r < (q(x) / p(x)).clamp(max=1)."""
    return float((advanced_prob[cls_idx] / draft_prob[cls_idx]).clamp(max=1))


def sjd_residual(advanced_prob: torch.Tensor, draft_prob: torch.Tensor) -> torch.Tensor:
    """scheduler/jacobi_iteration_lumina_mgpt.py:203-207 and 232: softmax(log([q - p]+)). The processors re-applied
    at :225-229 keep it (the residual's support lies inside the post-top-k support of q)."""
    pos_delta_logits = (advanced_prob - draft_prob).clamp(min=0).log()
    return F.softmax(pos_delta_logits, dim=-1)


# ------------------------------------------------------------------------------------------------------------ GSD
def gsd_sims(embed_weight: torch.Tensor, rows: int = 10000) -> torch.Tensor:
    """GSD scheduler/jacobi_iteration_lumina_mgpt.py:1197-1199: squared L2 between input embeddings, rows 0..9999."""
    a = embed_weight[:rows]
    return (torch.sum(a ** 2, dim=-1, keepdim=True) + torch.sum(a.T ** 2, dim=0, keepdim=True)) - 2 * a @ a.T


def gsd_accept(advanced_logits: torch.Tensor, advanced_prob: torch.Tensor, draft_prob: torch.Tensor, cls_idx: int,
               head_img_sims: torch.Tensor, p_thr: float = 0.15, d_thr: float = 0.5, lo: int = 7,
               hi: int = 7) -> float:
    """GSD scheduler/jacobi_iteration_lumina_mgpt.py:305-337 (window [cur - 7, cur + 7) of the ascending sort;
    lo / hi generalise the 7s). Returns the acceptance probability; a NaN ratio (`r < nan` is False) is 0.
    The sort is made stable here (the released CUDA sort leaves ties in an unspecified order)."""
    logit_sort = advanced_logits.sort(dim=-1, stable=True).indices
    cur_idx = torch.nonzero(logit_sort == cls_idx)
    logit_sort_idx = logit_sort[cur_idx - lo:cur_idx + hi]
    try:
        adv_super_prob = advanced_prob[logit_sort_idx]
        draft_super_prob = draft_prob[logit_sort_idx]
        is_in_p_thr = ((adv_super_prob - advanced_prob[cls_idx]).abs() < p_thr).float()
        if logit_sort_idx.max().item() <= 10000:                # raises on an empty window: lossless fallback
            is_in_d_thr = (head_img_sims[cls_idx][logit_sort_idx] < d_thr).float()
        else:
            is_in_d_thr = 1.
        final_mask = (is_in_p_thr * is_in_d_thr).float()
        adv_super_prob = (adv_super_prob * final_mask).sum()
        draft_super_prob = (draft_super_prob * final_mask).sum()
        final_p = (adv_super_prob / draft_super_prob).clamp(max=1)
    except Exception:
        final_p = (advanced_prob[cls_idx] / draft_prob[cls_idx]).clamp(max=1)
    return 0.0 if torch.isnan(final_p) else float(final_p)


gsd_residual = sjd_residual     # GSD :208-212 and :239-240: the same softmax(log([q - p]+)) as SJD


# -------------------------------------------------------------------------------------------------------- LANTERN
def lantern_px(gtp: torch.Tensor, xi: int, nearest_latents: torch.Tensor, lantern_k: int,
               lantern_delta: float) -> tuple[float, int]:
    """models/ea_model_llamagen.py:742-758 (same at ea_model_lumina_mgpt.py:661-677): the relaxed target probability
    px of candidate xi and `indices` (-1: nothing aggregated). lantern_delta > 1 is LANTERN++'s λ."""
    px = gtp[xi]
    nearest_probs = gtp[nearest_latents[xi, :lantern_k]].reshape(lantern_k, 1)
    cumsum_nearest_probs = torch.cumsum(nearest_probs, dim=0)
    if lantern_delta > 1.0:
        indices = (cumsum_nearest_probs <= (lantern_delta - 1) * px).nonzero(as_tuple=True)[0]
    else:
        indices = (cumsum_nearest_probs <= lantern_delta).nonzero(as_tuple=True)[0]
    indices = -1 if indices.numel() == 0 else int(indices[-1])
    if indices != -1:
        px = px + cumsum_nearest_probs[indices]
    return float(px), indices


def lantern_reject(gtp: torch.Tensor, xi: int, q_draft: torch.Tensor | None, indices: int,
                   nearest_latents: torch.Tensor, lantern_k: int, variant: str) -> torch.Tensor:
    """The running target after candidate xi is rejected. q_draft None = EAGLE-2 (qx = 1.0):
    llamagen :768-779 and lumina :704-717 zero gtp[xi] and, if aggregated, gtp[nearest[xi, :k+1]].
    q_draft given = EAGLE-1 (the drafter law, siblings already tried zeroed and renormalised by the caller):
    llamagen :646-661 zeroes the DRAFT law on the neighbours, lumina :704-710 the TARGET; then gtp = [gtp - q]+.
    All zero -> ones; normalise."""
    gtp = gtp.clone()
    nbrs = nearest_latents[xi, :lantern_k + 1]
    if q_draft is None:
        gtp[xi] = 0
        if indices != -1:
            gtp[nbrs] = 0
    else:
        q = q_draft.clone()
        if indices != -1:
            if variant == "llamagen":
                q[nbrs] = 0
            else:
                gtp[nbrs] = 0
        gtp = gtp - q
        gtp[gtp < 0] = 0
    if gtp.sum() == 0:
        gtp = torch.ones_like(gtp)
    return gtp / gtp.sum()
