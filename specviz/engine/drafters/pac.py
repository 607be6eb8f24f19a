"""SJD-PAC (Kang et al., CVPR 2026; released sampler KangJialiang/SJD-PAC, scheduler/sjd_pac_iteration_lumina_mgpt.py):
Speculative Jacobi Decoding with Proactive drafting and Adaptive Continuation, exact by construction (P1-P3).

Every forward feeds `window` nodes: the newest committed token (the root), a K-ary tree over the next D-1 positions
(the same K candidate tokens under every parent of a level), and a single chain hanging off the first-candidate path
out to the node budget: path length M = D + window - (K^D - 1)/(K - 1). The tree is verified level by level with P3
(candidates in order against the running residual; the first accepted wins), then the resampled or bonus token.

Proactive drafting: the K candidates of a level are drawn without replacement from that position's law b, so
candidate j's law given the earlier ones is norm(b with candidates 0..j-1 removed) (what P3 needs).
Adaptive continuation: positions past the rejection keep what this forward learnt about them. Along the rejected
first candidate's chain, each old draft x (law pi) is coupled to the stale target law l computed under it (keep x
with probability min(1, l(x)/pi(x)), else draw norm([l - pi]+)): the released sampler's "verify the old draft against
the stale law, keep it if it passes, resample the rejected ones" is this maximal coupling, and its marginal is l,
so l is candidate 0's law. Positions with no stale law draw uniformly over the codebook, law uniform (exact, P1).
"""
from __future__ import annotations

import torch

from specviz.core.sampling import draw, sample
from specviz.engine.drafters import jacobi
from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.drafters.pactree import (  # noqa: F401  (pac.Carry, pac.build_tree, ... as before)
    Carry,
    LevelsAhead,
    build_tree,
    continuation,
)


def tree_nodes(width: int, depth: int) -> int:
    """Nodes of the full K-ary part, root included: 1 + K + ... + K^(D-1)."""
    return sum(width ** i for i in range(depth))


def path_length(window: int, width: int, depth: int) -> int:
    """M = D + (window - tree_nodes): nodes on the longest (first-candidate) path, root included."""
    return depth + window - tree_nodes(width, depth)


def sibling_laws(base: torch.Tensor, tokens: list[int]) -> list[torch.Tensor]:
    """Laws of candidates drawn without replacement from base (V,): law_j = norm(base with tokens[:j] zeroed)."""
    return level_laws([(tokens, base)])[0]


def level_laws(levels: list) -> list[list[torch.Tensor]]:
    """sibling_laws of every level (tokens, base law (V,)) at once, to the same bits: one row per candidate, the
    earlier candidates' cells zeroed in one write, each row divided by its own sum (rows of one (k, V) tensor)."""
    bases, rows, cols, at = [law for toks, law in levels for _ in toks], [], [], 0
    for toks, _ in levels:
        for j in range(1, len(toks)):
            rows, cols = rows + [at + j] * j, cols + list(toks[:j])
        at += len(toks)
    if not bases:
        return [[] for _ in levels]
    b = torch.stack(bases)
    if rows:
        b[rows, cols] = 0.0
    it = iter((b / b.sum(-1, keepdim=True)).unbind(0))
    return [[next(it) for _ in toks] for toks, _ in levels]


def draw_candidates(first: int, base: torch.Tensor, width: int, gen: torch.Generator) -> list[int]:
    """Candidate 0 (given, with marginal law base) then up to width-1 more drawn without replacement from base (V,);
    stops early when base has no mass left."""
    toks, rest = [first], base.clone()
    rest[first] = 0.0
    while len(toks) < width and float(rest.sum()) > 1e-9:
        toks.append(int(sample(rest / rest.sum(), gen)))
        rest[toks[-1]] = 0.0
    return toks


def uniforms_needed(carry, width: int) -> int:
    """The most uniforms a level's candidates can use from the papers' generator: candidate 0 (two when coupled with
    the carried draft: keep or move, then the fallback draw), then one per further candidate."""
    return (2 if carry is not None and carry.law is not None and carry.x >= 0 else 1) + width - 1


def papers_levels(carries: list, uniform: torch.Tensor, widths: list[int],
                  gen: torch.Generator) -> list[tuple[list[int], torch.Tensor]]:
    """Every level's (candidates, law) of one propose in ONE read, with today's stream: the uniforms the levels can
    need drawn in one batch, applied in order where the laws live (levels_t: a level whose law runs out of mass uses
    fewer, counted without a read), then the generator rewound and advanced by exactly what was used."""
    state = gen.get_state()
    us = torch.rand(sum(uniforms_needed(c, w) for c, w in zip(carries, widths)), generator=gen)
    vals = levels_t(carries, uniform, widths, us).tolist()                   # the propose's one read
    gen.set_state(state)
    return levels_of(vals, carries, uniform, widths, gen)


def carried_laws(carries: list, uniform: torch.Tensor) -> list:
    """Each level's law: its carry's stale target law, or the uniform law where none was carried."""
    return [uniform if c is None or c.law is None else c.law for c in carries]


def levels_t(carries: list, uniform: torch.Tensor, widths: list[int], us: torch.Tensor) -> torch.Tensor:
    """papers_levels' draws with its uniforms us given, left where the laws live: [uniforms used, then widths[d]
    tokens of each level d (-1: none, its law out of mass)] as one long vector. Level d: candidate 0 from
    first_candidate's cases, then widths[d] - 1 more without replacement (draw_candidates): levels_rows' one job."""
    return levels_rows([(carries, widths, 0)], uniform, us)


def levels_rows(jobs: list, uniform: torch.Tensor, us: torch.Tensor) -> torch.Tensor:
    """levels_t of several jobs (carries, widths, start: where its uniforms begin in us), their vectors one after
    another, the same values. One row per level of a job; a level's uniforms follow what the job's earlier levels
    used, known where the laws live only after a wide level's draws (a law out of mass uses fewer), so the rows go
    in stages that end at a wide level: every row's candidate 0 of a stage in one draw, then its wide rows' further
    candidates one draw per candidate for all of them (_wide)."""
    dev, us = uniform.device, us.to(uniform.device)
    rows = [(j, d, cs[d], ws[d], law) for d in range(max((len(ws) for _, ws, _ in jobs), default=0))
            for j, (cs, ws, _) in enumerate(jobs) if d < len(ws) for law in carried_laws(cs[d:d + 1], uniform)]
    if not rows:
        return torch.zeros(len(jobs), dtype=torch.long, device=dev)
    wide_levels = {d for _, d, _, w, _ in rows if w > 1}
    cpl = [int(c is not None and c.law is not None and c.x >= 0) for _, _, c, _, _ in rows]
    cp = [i for i, k in enumerate(cpl) if k]
    laws, keep = torch.stack([r[4] for r in rows]), torch.full((len(rows),), -1.0, device=dev)   # -1: never kept
    xs, firsts = torch.tensor([rows[i][2].x if k else 0 for i, k in enumerate(cpl)], device=dev), laws
    if cp:                                   # candidate 0 coupled with the old draft: keep it, else the fallback's draw
        kp, fallback = jacobi.coupling(xs[cp], torch.stack([rows[i][2].pi for i in cp]).to(dev), laws[cp])
        at = torch.tensor(cp, device=dev)
        firsts, keep = laws.index_put((at,), fallback), keep.index_put_((at,), kp)
    static, width, n = [s for _, _, s in jobs], max(w for *_, w, _ in rows), len(us)
    short, vals, where, lo = None, [], {}, 0      # short (jobs,): uniforms left unused by laws out of mass, so far
    while lo < len(rows):
        hi = next(i + 1 for i in range(lo, len(rows)) if i + 1 == len(rows) or rows[i][1] in wide_levels and
                  rows[i + 1][1] > rows[i][1])                       # the stage ends at a level with a wide row
        cols, wide = [], []
        for i in range(lo, hi):                  # where each row's uniforms would start had no law run out of mass
            j, w = rows[i][0], rows[i][3]
            cols.append([min(static[j] + t, n - 1) for t in [0, cpl[i]] + [cpl[i] + 1 + m for m in range(width - 1)]])
            static[j] += w + cpl[i]
            wide += [i - lo] if w > 1 else []
        idx = torch.tensor(cols, device=dev)
        u = us[idx if short is None else idx - short[[r[0] for r in rows[lo:hi]]][:, None]]
        first = draw(firsts[lo:hi], u[:, 1])
        if any(cpl[lo:hi]):
            first = torch.where(u[:, 0] < keep[lo:hi], xs[lo:hi], first)
        vals.append(first)
        where.update({i: (sum(v.numel() for v in vals[:-1]) + i - lo, None) for i in range(lo, hi)})
        if wide:
            pick = slice(wide[0], None) if wide == list(range(wide[0], hi - lo)) else wide
            toks = _wide(laws[lo:hi][pick], first[pick], u[pick, 2:], [rows[lo + i][3] for i in wide])
            at = sum(v.numel() for v in vals)
            where.update({lo + i: (where[lo + i][0], at + k * (width - 1)) for k, i in enumerate(wide)})
            vals.append(toks.flatten())
            gone, jt = (toks < 0).sum(1), [rows[lo + i][0] for i in wide]      # out of mass, and past a row's width
            if any(rows[lo + i][3] < width for i in wide):
                gone = gone - torch.tensor([width - rows[lo + i][3] for i in wide], device=dev)
            if jt == list(range(len(jobs))):
                short = gone if short is None else short + gone
            else:
                short = (short if short is not None else torch.zeros(len(jobs), dtype=torch.long, device=dev)
                         ).index_add(0, torch.tensor(jt, device=dev), gone)
        lo = hi
    order = []
    for j in range(len(jobs)):
        order.append(-len(jobs) + j)
        for i in (i for i, r in enumerate(rows) if r[0] == j):
            c0, more = where[i]
            order += [c0] + ([] if more is None else list(range(more, more + rows[i][3] - 1)))
    used = torch.tensor([s - job[2] for s, job in zip(static, jobs)], device=dev)
    return torch.cat(vals + [used if short is None else used - short])[order]


def _wide(rest: torch.Tensor, first: torch.Tensor, u: torch.Tensor, widths: list) -> torch.Tensor:
    """The further candidates (rows, max width - 1) of wide rows: row i's laws (rest, a copy) without its candidate 0
    `first`, then widths[i] - 1 draws without replacement with the uniforms u[i] in order (-1: its law out of mass;
    a law out of mass stays so, so its draws are a prefix and use the first uniforms)."""
    rows = torch.arange(len(rest), device=rest.device)
    rest[rows, first] = 0.0
    toks, masses = [], []
    for k in range(u.shape[1]):
        masses.append(rest.sum(-1, keepdim=True))
        toks.append(draw(rest / masses[-1], u[:, k]))   # out of mass (even 0 / 0): a token in range, dropped below
        rest[rows, toks[-1]] = 0.0                       # zeroed drawn or not: a law out of mass stays out of it
    alive = torch.cat(masses, 1) > 1e-9
    if min(widths) < u.shape[1] + 1:                  # rows narrower than the stage's widest: their draws end early
        alive &= torch.tensor([[k + 1 < w for k in range(u.shape[1])] for w in widths], device=rest.device)
    return torch.where(alive, torch.stack(toks, 1), -1)


def levels_of(vals: list, carries: list, uniform: torch.Tensor, widths: list[int],
              gen: torch.Generator) -> list[tuple[list[int], torch.Tensor]]:
    """levels_t's values read back as each level's (candidates, law), the generator (where the levels' uniforms
    start) advanced by the uniforms they used."""
    torch.rand(int(vals[0]), generator=gen)
    out, at = [], 1
    for w, law in zip(widths, carried_laws(carries, uniform)):
        out.append(([int(t) for t in vals[at:at + w] if t >= 0], law))
        at += w
    return out


def first_candidate(c: Carry | None, uniform: torch.Tensor, gen: torch.Generator) -> tuple[int, torch.Tensor]:
    """Candidate 0 of a position and its (marginal) law: coupled with the old draft, sampled from the stale law, or
    uniform."""
    if c is None or c.law is None:
        return int(sample(uniform, gen)), uniform
    if c.x < 0:
        return int(sample(c.law, gen)), c.law
    x = torch.tensor([c.x])
    return int(jacobi.coupled_draw(x, c.pi[None], c.law[None], gen)[0]), c.law


class PACDrafter:
    """SJD-PAC's drafter (protocols.ProactiveDrafter): builds its proactive tree as a TreeDrafter does, but learns
    from the forward's laws (`carry_on`, the adaptive continuation), not from committed features. families.SJDPAC
    runs it through the tree step it shares with TreeFamily."""

    def __init__(self, cfg, vocab: int, n_pos: int, rnd, device: str | torch.device = "cpu"):
        self.width, self.depth = cfg.pac_width, cfg.pac_depth
        self.m = path_length(cfg.window, self.width, self.depth)
        self.n_pos, self.rnd = n_pos, rnd                            # rnd: the run's randomness (randomness.py)
        self.uniform = torch.full((vocab,), 1.0 / vocab, device=device)   # where the model's laws live (levels_t)
        self.carry: list[Carry] = []
        self.main: list[int] = []                                    # the last tree's first-candidate path
        self.ready: tuple | None = None                              # LevelsAhead.after of the last walk's end

    def propose(self, n: int) -> list[tuple[list[int], list[torch.Tensor]]]:
        """Candidates (tokens, laws) for positions n, n+1, ... (at most M-1 of them)."""
        ready, self.ready = self.ready, None
        if ready is not None and ready[0] == n:
            levels = ready[1]()                             # read with the last walk (LevelsAhead)
        else:
            carries, widths = self.plan(self.carry, n)
            levels = self.rnd.candidate_levels(n, carries, self.uniform, widths)
        return list(zip([toks for toks, _ in levels], level_laws(levels)))

    def plan(self, carry: list, n: int) -> tuple[list, list[int]]:
        """The carries and widths of the levels a propose at n draws (at most M-1, none past the image)."""
        k = min(self.m - 1, self.n_pos - n)
        return [carry[d] if d < len(carry) else None for d in range(k)], [self.width if d < self.depth - 1 else 1
                                                                           for d in range(k)]

    def build(self, root_token: int, root_pos: int) -> DraftTree:
        tree, self.main = build_tree(root_token, self.propose(root_pos + 1))
        return tree

    def carry_on(self, tree: DraftTree, path: list[int], q: torch.Tensor) -> None:
        """After the walk (path: accepted node ids) over this drafter's last tree, with the forward's laws q (N, V)."""
        rows = tree.rider.rows if isinstance(tree.rider, LevelsAhead) and tree.rider.rows is not None else q
        self.carry = continuation(tree, self.main, path, rows)
        self.ready = tree.rider.after(path[-1]) if isinstance(tree.rider, LevelsAhead) else None
        tree.rider = None                                            # read: the tree and its q need not outlive it

    def ride(self, tree: DraftTree, q: torch.Tensor, n: int) -> None:
        """Before the walk of this drafter's last tree (root at n - 1) over the forward's laws q: its level reads
        carry the next candidates of every end (LevelsAhead)."""
        tree.rider = LevelsAhead(self, tree, q, n, self.rnd.candidates_ahead(tree))
