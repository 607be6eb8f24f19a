"""Turn one verification step's tensors into TokenEvents (one batched .tolist() per field, no per-vocab work)."""
from __future__ import annotations

import torch

from specviz.core.records import Groups, Sibling, TokenEvent
from specviz.core.sampling import entropies, entropy, tv


def keyed_token(cfg, token: int) -> int | None:
    """A sampled token's `target_sample` field: itself under keyed noise (it is the race's x*), else None (absent)."""
    return token if getattr(cfg, "noise", "papers") == "keyed" else None


def simple_event(pos: int, token: int, decision: str, q: torch.Tensor, cfg) -> TokenEvent:
    """An ar or bonus token sampled straight from q."""
    return TokenEvent(pos=pos, token=token, decision=decision, p_target=float(q[token]),
                      entropy=float(entropy(q)), entropy_norm=float(entropy(q, cfg.h_norm)),
                      target_sample=keyed_token(cfg, token))


def chain_events(n: int, x: torch.Tensor, p: torch.Tensor, q: torch.Tensor, res, new: list, cfg) -> list:
    """Events of a Jacobi step that started at position n (drafts x at n, n+1, ...)."""
    k = res.judged
    out = []
    if k:
        rows = torch.arange(k)
        xs = x[:k]
        qk, pk = q[:k], p[:k]
        h, hn, d = entropy(qk).tolist(), entropy(qk, cfg.h_norm).tolist(), tv(pk, qk).tolist()
        px, qx = pk[rows, xs].tolist(), qk[rows, xs].tolist()
        j = res.j
        b, ex, cost = j.accept_prob[:k].tolist(), j.exact_prob[:k].tolist(), j.tv_cost[:k].tolist()
        rel, u = j.relaxed[:k].tolist(), res.u[:k].tolist()
        toks = xs.tolist()
        cp, star = (res.coupled, res.target) if res.coupled is not None else ([None] * k, [None] * k)
        for i in range(k):
            dec = "rejected" if i >= res.accepted else ("relaxed" if rel[i] else "exact")
            out.append(TokenEvent(pos=n + i, token=toks[i], decision=dec, level=i + 1, node=i + 1, p_draft=px[i],
                                  p_target=qx[i], accept_prob=b[i], exact_prob=ex[i], u=u[i], entropy=h[i],
                                  entropy_norm=hn[i], tv=d[i], tv_cost=cost[i], point_mass=px[i] == 1.0,
                                  tv_residual=d[i], coupled_prob=cp[i], target_sample=star[i]))
    if res.new_token >= 0:
        i = res.accepted
        if res.bonus:
            ev = TokenEvent(pos=n + i, token=res.new_token, decision="bonus", level=i + 1,
                            p_target=float(q[i, res.new_token]), entropy=float(entropy(q[i])),
                            entropy_norm=float(entropy(q[i], cfg.h_norm)),
                            target_sample=keyed_token(cfg, res.new_token))
        else:
            r = out[i]
            ev = TokenEvent(pos=r.pos, token=res.new_token, decision="resampled", level=r.level, node=r.node,
                            p_target=float(q[i, res.new_token]), entropy=r.entropy, entropy_norm=r.entropy_norm,
                            tv=r.tv, tv_cost=r.tv_cost, tv_residual=r.tv_residual,
                            target_sample=keyed_token(cfg, res.new_token))
        out.append(ev)
    return out


def tree_events(root_pos: int, tree, q: torch.Tensor, walk, cfg) -> list:
    """Events of a tree step rooted at root_pos (walk: verify.TreeWalk): every judged candidate, then the resampled
    or bonus token. A candidate judged with groups (CASCADE) carries the `groups` extension."""
    judged, path, new_tok, bonus = walk.judged, walk.path, walk.new_token, walk.bonus
    out = []
    ent = {}                                  # node -> entropies of q at its children's position, once per node
    for s in judged:
        par = tree.parents[s.node]
        if par not in ent:
            ent[par] = entropies(q[par], cfg.h_norm)
        h, hn = ent[par]
        dec = "rejected" if not s.accepted else ("relaxed" if s.relaxed else "exact")
        g = s.group
        sib = [Sibling(m, tree.tokens[m], float(q[par, tree.tokens[m]]), g.cos.get(m, 0.0),
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
        out.append(TokenEvent(pos=pos, token=new_tok, decision="bonus" if bonus else "resampled",
                              level=len(path), p_target=q[last, new_tok].item(), entropy=h, entropy_norm=hn,
                              tv_cost=0.0 if bonus else cost, target_sample=keyed_token(cfg, new_tok)))
    return out
