"""One tree level's numbers in one read (verify.verify_tree): level_pack stacks, where q lives, everything a level
of the walk can need after its decisions (the level's numbers, its uniforms, the tokens the walk could sample there
and their laws' values); LevelValues reads them back from the one list."""
from __future__ import annotations

import torch

from specviz.core.sampling import draw, entropy, normalised_entropy


def level_pack(tree, kids: list, q: torch.Tensor, q_cur: torch.Tensor, laws: list, lvl, tvs: list, leaves: list,
               u: torch.Tensor, norm: str) -> torch.Tensor:
    """One level's numbers as one float64 vector where q lives (LevelValues reads it): per kid b, exact, p(x),
    r(x) (r: the law it is judged against), TV(p, q), TV(p, r); the level's cost; the k + 1 uniforms u; H(q_cur)
    and its normalised value; the token resampled from the level's end law with u[k] and q_cur there; per bonus
    leaf (kid index j in `leaves`) the bonus token drawn from its law with u[j + 1], its q and its entropies."""
    dev, k = q.device, len(kids)
    u = u.to(dev)
    xs = torch.tensor([tree.tokens[c] for c in kids], dtype=torch.long, device=dev)
    f64 = [torch.as_tensor(lvl.b, dtype=torch.float64, device=dev), torch.as_tensor(lvl.exact, dtype=torch.float64,
                                                                                     device=dev)]
    if k:
        p, r = torch.stack(laws), torch.stack(lvl.targets)
        rows = torch.arange(k, device=dev)
        tv_q = torch.stack([torch.as_tensor(t[0], dtype=torch.float64, device=dev) for t in tvs])
        tv_r = torch.stack([torch.as_tensor(t[1], dtype=torch.float64, device=dev) for t in tvs])
        f64 += [p[rows, xs], r[rows, xs], tv_q, tv_r]
    h = entropy(q_cur)
    end = draw(lvl.end, u[k])
    f64 += [torch.as_tensor(lvl.cost, device=dev).view(1), u, h.view(1), normalised_entropy(h, q_cur, norm).view(1),
            end.view(1), q_cur[end].view(1)]
    if leaves:
        ql = q[torch.tensor([kids[j] for j in leaves], device=dev)]
        hl = entropy(ql)
        bon = draw(ql, u[torch.tensor(leaves, device=dev) + 1])
        f64 += [bon, ql[torch.arange(len(leaves), device=dev), bon], hl, normalised_entropy(hl, ql, norm)]
    return torch.cat([t.to(torch.float64).reshape(-1) for t in f64])


class LevelValues:
    """level_pack's values read back (vals: the list; k kids, n bonus leaves)."""

    def __init__(self, vals: list, k: int, n: int):
        it = iter(vals)

        def take(m):
            return [next(it) for _ in range(m)]
        self.b, self.exact = take(k), take(k)
        self.px, self.rx = take(k), take(k)
        tvs = take(2 * k)
        self.tvq, self.tvr = tvs[:k], tvs[k:]
        (self.cost,), self.u = take(1), take(k + 1)
        self.h = tuple(take(2))
        end, q_end = take(2)
        self.end = (int(end), q_end)
        bon, self.bonus_q, hl, hn = take(n), take(n), take(n), take(n)
        self.bonus, self.leaf_h = [int(t) for t in bon], list(zip(hl, hn))
