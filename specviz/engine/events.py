"""Turn one verification step's tensors into TokenEvents (a Jacobi step: one packed read, chain_pack -> chain_record;
a tree step: one batched .tolist() per field), no per-vocab work."""
from __future__ import annotations

import torch

from specviz.core.records import Groups, Sibling, TokenEvent
from specviz.core.sampling import entropies, entropy, normalised_entropy, tv


def simple_event(pos: int, token: int, decision: str, q: torch.Tensor, cfg, rnd) -> TokenEvent:
    """An ar or bonus token sampled straight from q (rnd: the run's randomness, engine/randomness.py, which says
    what a sampled token's `target_sample` field is)."""
    return TokenEvent(pos=pos, token=token, decision=decision, p_target=float(q[token]),
                      entropy=float(entropy(q)), entropy_norm=float(entropy(q, cfg.h_norm)),
                      target_sample=rnd.target_sample(token))


def simple_pack(q: torch.Tensor, token: torch.Tensor, cfg) -> torch.Tensor:
    """A token sampled straight from q (V,) (token: 0-d long), with q(token) and q's entropies when recording (cfg
    given), as one float64 vector where q lives: simple_record reads it back."""
    token = token.to(q.device)
    if cfg is None:
        return token.to(torch.float64).view(1)
    h = entropy(q)
    return _stacked([token, q[token], h, normalised_entropy(h, q, cfg.h_norm)], q.shape[-1])   # widened once


def simple_record(pos: int, vals: list, decision: str, cfg, rnd) -> tuple[int, list]:
    """(token, [its TokenEvent]) from simple_pack's values (no event when cfg is None)."""
    token = int(vals[0])
    if cfg is None:
        return token, []
    return token, [TokenEvent(pos=pos, token=token, decision=decision, p_target=vals[1], entropy=vals[2],
                              entropy_norm=vals[3], target_sample=rnd.target_sample(token))]


def chain_pack(x: torch.Tensor, p: torch.Tensor, q: torch.Tensor, res, cfg) -> torch.Tensor:
    """Every number a Jacobi step's record needs, as one float64 vector where q lives (chain_record reads it back
    after the step's one read): the new token (-1: none), the drafts x, and when recording (cfg given) the judged
    slots' fields and q(new token), with its law's entropies for a bonus token. res: a lazy verify.ChainResult."""
    new = res.new_token if torch.is_tensor(res.new_token) else torch.tensor(res.new_token)
    parts = [new.to(q.device, torch.float64).view(1), x.to(torch.float64)]
    k = res.judged
    if cfg is not None and k:
        qk, pk, j = q[:k], p[:k], res.j
        h = entropy(qk)
        fields = [j.p_x[:k], j.q_x[:k], j.accept_prob[:k], j.exact_prob[:k], j.tv_cost[:k], j.relaxed[:k],
                  res.u[:k], h, normalised_entropy(h, qk, cfg.h_norm), tv(pk, qk)]
        if res.coupled is not None:
            fields += [res.coupled[:k], res.target[:k]]
        parts.append(_stacked(fields, q.shape[-1]))
    if cfg is not None and torch.is_tensor(res.new_token):
        qi = q[res.accepted]
        parts.append(qi[new.view(1)].double())
        if res.bonus:                              # a resampled token's entropies are its rejected slot's event's
            hi = entropy(qi)
            parts += [hi.double().view(1), normalised_entropy(hi, qi, cfg.h_norm).double().view(1)]
    return torch.cat(parts)


def _stacked(fields: list, vocab: int) -> torch.Tensor:
    """Equal-length fields (float32 / float64 numbers, bool flags, long tokens below vocab) as one float64 vector,
    field after field: stacked in float32 when every number is float32 and every token < 2^24 (each value exact
    there) and widened once, not one conversion per field."""
    narrow = vocab <= 1 << 24 and all(f.dtype != torch.float64 for f in fields)
    wide = torch.float32 if narrow else torch.float64
    return torch.stack([f if f.dtype == wide else f.to(wide) for f in fields]).view(-1).to(torch.float64)


def chain_record(n: int, vals: list, k_all: int, res, cfg, rnd) -> tuple[list, list]:
    """(new tokens, TokenEvents) of a Jacobi step that started at position n from chain_pack's values (drafts at n,
    n+1, ...; no events when cfg is None)."""
    new_tok, toks = int(vals[0]), [int(t) for t in vals[1:1 + k_all]]
    new = toks[:res.accepted] + ([new_tok] if new_tok >= 0 else [])
    if cfg is None:
        return new, []
    k, off, out = res.judged, 1 + k_all, []
    if k:
        width = 12 if res.coupled is not None else 10
        f = [vals[off + i * k: off + (i + 1) * k] for i in range(width)]
        off += width * k
        px, qx, b, ex, cost, rel, u, h, hn, d = f[:10]
        cp, star = (f[10], [int(t) for t in f[11]]) if width == 12 else ([None] * k, [None] * k)
        for i in range(k):
            dec = "rejected" if i >= res.accepted else ("relaxed" if rel[i] else "exact")
            out.append(TokenEvent(pos=n + i, token=toks[i], decision=dec, level=i + 1, node=i + 1, p_draft=px[i],
                                  p_target=qx[i], accept_prob=b[i], exact_prob=ex[i], u=u[i], entropy=h[i],
                                  entropy_norm=hn[i], tv=d[i], tv_cost=cost[i], point_mass=px[i] == 1.0,
                                  tv_residual=d[i], coupled_prob=cp[i], target_sample=star[i]))
    if new_tok >= 0:
        i, q_new = res.accepted, vals[off]
        if res.bonus:
            h_new, hn_new = vals[off + 1:off + 3]
            ev = TokenEvent(pos=n + i, token=new_tok, decision="bonus", level=i + 1, p_target=q_new, entropy=h_new,
                            entropy_norm=hn_new, target_sample=rnd.target_sample(new_tok))
        else:
            r = out[i]
            ev = TokenEvent(pos=r.pos, token=new_tok, decision="resampled", level=r.level, node=r.node,
                            p_target=q_new, entropy=r.entropy, entropy_norm=r.entropy_norm,
                            tv=r.tv, tv_cost=r.tv_cost, tv_residual=r.tv_residual,
                            target_sample=rnd.target_sample(new_tok))
        out.append(ev)
    return new, out


def sibling_masses(judged: list, tree, q: torch.Tensor) -> dict:
    """{(parent, m): q at the parent's children position on member m's token} for every candidate m of every judged
    node's group (CASCADE's Sibling records), gathered where q lives and read in one read (empty: no read)."""
    keys = list(dict.fromkeys((tree.parents[s.node], m) for s in judged for m in s.group.cos))
    if not keys:
        return {}
    rows = torch.tensor([a for a, _ in keys], device=q.device)
    cols = torch.tensor([tree.tokens[m] for _, m in keys], device=q.device)
    return dict(zip(keys, q[rows, cols].tolist()))


def tree_events(root_pos: int, tree, q: torch.Tensor, walk, cfg, rnd) -> list:
    """Events of a tree step rooted at root_pos (walk: verify.TreeWalk): every judged candidate, then the resampled
    or bonus token. A candidate judged with groups (CASCADE) carries the `groups` extension."""
    judged, path, new_tok, bonus = walk.judged, walk.path, walk.new_token, walk.bonus
    out, sib_q = [], walk.masses if walk.masses is not None else sibling_masses(judged, tree, q)   # the walk's read
    ent = dict(walk.entropies)                # node -> entropies of q at its children's position, once per node
    for s in judged:
        par = tree.parents[s.node]
        if par not in ent:
            ent[par] = entropies(q[par], cfg.h_norm)
        h, hn = ent[par]
        dec = "rejected" if not s.accepted else ("relaxed" if s.relaxed else "exact")
        g = s.group
        sib = [Sibling(m, tree.tokens[m], sib_q[par, m], g.cos.get(m, 0.0),
                       g.child_cos.get(m, -1.0), tree.depths[m], tree.parents[m]) for m in g.cos]
        groups = Groups.unless_default(
            similarity=max(g.cos.values(), default=0.0),
            interchangeable=list(g.inter), convergent=list(g.conv), siblings=sib,
            budget_left=s.budget_left, scale=s.scale)
        out.append(TokenEvent(pos=root_pos + s.level, token=tree.tokens[s.node], decision=dec, level=s.level,
                              node=s.node, p_draft=s.p_x, p_target=s.q_x, accept_prob=s.b, exact_prob=s.exact,
                              u=s.u, entropy=h, entropy_norm=hn, tv=s.tv, tv_cost=s.tv_cost,
                              point_mass=s.point_mass, moved=s.extra, tv_residual=s.tv_residual, parent=par,
                              groups=groups, coupled_prob=s.coupled, target_sample=s.target_sample))
    if new_tok >= 0:
        last = path[-1]
        pos = root_pos + len(path)
        # the level's TV, once: every judged sibling at this position carries the same cost of the level's walk
        cost = next((e.tv_cost for e in reversed(out) if e.pos == pos), 0.0)
        h, hn = ent[last] if last in ent else entropies(q[last], cfg.h_norm)
        q_new = q[last, new_tok].item() if walk.new_q is None else walk.new_q
        out.append(TokenEvent(pos=pos, token=new_tok, decision="bonus" if bonus else "resampled",
                              level=len(path), p_target=q_new, entropy=h, entropy_norm=hn,
                              tv_cost=0.0 if bonus else cost, target_sample=rnd.target_sample(new_tok)))
    return out
