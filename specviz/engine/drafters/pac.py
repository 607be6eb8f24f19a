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

from dataclasses import dataclass

import torch

from specviz.core.sampling import draw, sample
from specviz.engine.drafters import jacobi
from specviz.engine.drafters.draft_tree import DraftTree


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
    first_candidate's cases, then widths[d] - 1 more without replacement (draw_candidates)."""
    dev = uniform.device
    us = us.to(dev)
    off, cols = torch.zeros((), dtype=torch.long, device=dev), []
    for c, w, law in zip(carries, widths, carried_laws(carries, uniform)):
        if c is not None and c.law is not None and c.x >= 0:
            x = torch.tensor([c.x], device=dev)
            keep, fallback = jacobi.coupling(x, c.pi[None].to(dev), law[None])
            u = us[off + torch.arange(2, device=dev)]
            first, off = torch.where(u[0] < keep[0], x[0], draw(fallback, u[1:])[0]), off + 2
        else:
            first, off = draw(law, us[off]), off + 1
        toks, rest = [first], law.clone()
        rest[first] = 0.0
        for _ in range(w - 1):
            mass = rest.sum()
            alive = mass > 1e-9
            t = draw(rest / torch.where(alive, mass, 1.0), us[off])
            toks.append(torch.where(alive, t, -1))
            rest.index_put_((t.view(1),), rest[t].view(1) * ~alive)          # rest[t] = 0 where drawn, no copy
            off = off + alive.long()
        cols.append(torch.stack(toks))
    return torch.cat([off.view(1)] + cols)


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


@dataclass
class Carry:
    """What the last forward leaves for one upcoming position: the old first-candidate draft x with its law pi
    (x = -1: none) and the stale target law there (None: none)."""
    x: int = -1
    pi: torch.Tensor | None = None
    law: torch.Tensor | None = None


def first_candidate(c: Carry | None, uniform: torch.Tensor, gen: torch.Generator) -> tuple[int, torch.Tensor]:
    """Candidate 0 of a position and its (marginal) law: coupled with the old draft, sampled from the stale law, or
    uniform."""
    if c is None or c.law is None:
        return int(sample(uniform, gen)), uniform
    if c.x < 0:
        return int(sample(c.law, gen)), c.law
    x = torch.tensor([c.x])
    return int(jacobi.coupled_draw(x, c.pi[None], c.law[None], gen)[0]), c.law


def build_tree(root: int, levels: list[tuple[list[int], list[torch.Tensor]]]) -> tuple[DraftTree, list[int]]:
    """levels[d-1] = (tokens, laws) of the candidates at depth d. The first min(D-1, ...) levels that hold several
    candidates branch under every node of the level above; single-candidate levels extend the first-candidate path.
    Returns the tree and its main path (node ids of the first candidates, root first)."""
    tokens, parents, depths, laws = [root], [-1], [0], [None]
    frontier, main = [0], [0]
    for d, (toks, lws) in enumerate(levels, start=1):
        under = frontier if len(toks) > 1 or len(frontier) == 1 else [main[-1]]
        nxt = []
        for par in under:
            for j, (t, law) in enumerate(zip(toks, lws)):
                nxt.append(len(tokens))
                if par == main[-1] and j == 0:
                    main.append(len(tokens))
                tokens.append(t)
                parents.append(par)
                depths.append(d)
                laws.append(law)
        frontier = nxt if len(toks) > 1 else [main[-1]]
    return DraftTree(tokens, parents, depths, laws), main


def continuation(tree: DraftTree, main: list[int], path: list[int], q: torch.Tensor) -> list[Carry]:
    """Carries for the positions after the new token, from this step's tree and laws q (N, V).
    The walk starts at the last accepted node v and follows first children (v's first child is the rejected or
    untested candidate 0 at the new token's position), jumping to the main path when a branch ends; position i
    past the new token gets the walk's node there as its old draft and q at the node before it as its stale law."""
    chain, node = [path[-1]], path[-1]
    while True:
        kids = tree.children[node]
        level = tree.depths[node] + 1
        node = kids[0] if kids else (main[level] if level < len(main) else -1)
        if node < 0:
            break
        chain.append(node)
    out = []
    for i in range(2, len(chain) + 1):                   # chain[1] sits at the new token's position
        prev = chain[i - 1]
        if i < len(chain):
            out.append(Carry(tree.tokens[chain[i]], tree.laws[chain[i]], q[prev]))
        else:
            out.append(Carry(law=q[prev]))
    return out


class LevelsAhead:
    """The next propose's candidates for every way this step's walk can end, drawn where q lives and read with the
    walk's level reads (DraftTree.rider, levelpack.Ahead), so the propose itself reads nothing. A walk ends at node v
    when v's level rejects every kid (a resampled token follows v) or v is a leaf accepted with a bonus token; both
    are decided on the level of v or of v's parent, so node's level carries the ends at node and at its leaf kids.
    The next step then starts at n + depth(v) + 1 with the carries continuation(tree, main, [.., v], q) gives; `src`
    (randomness: PapersAhead, KeyedAhead) draws them as the propose would (levels_t) and reads them back
    (levels_of)."""

    def __init__(self, drafter: "PACDrafter", tree: DraftTree, q: torch.Tensor, n: int, src):
        self.d, self.tree, self.q, self.n, self.src = drafter, tree, q, n, src
        self.got: dict = {}                                  # end node -> (next n, carries, widths, values)
        self.plans: dict = {}                                # level node -> [(end node, next n, carries, widths)]

    def pack(self, node: int) -> torch.Tensor | None:
        """The candidates of the next steps after the walk's ends decided on node's level, one float64 vector."""
        ends = [node] + [c for c in self.tree.children[node] if not self.tree.children[c]]
        plans, parts = [], []
        for v in ends:
            n_next = self.n + self.tree.depths[v] + 1
            carries, widths = self.d.plan(continuation(self.tree, self.d.main, [v], self.q), n_next)
            if widths:
                parts.append(self.src.levels_t(v, n_next, carries, self.d.uniform, widths).reshape(-1))
                plans.append((v, n_next, carries, widths, parts[-1].numel()))
        self.plans[node] = plans
        return torch.cat(parts).to(self.q.device, torch.float64) if parts else None

    def take(self, node: int, vals: list) -> None:
        """pack(node)'s values read back, kept by end node."""
        at = 0
        for v, n_next, carries, widths, size in self.plans[node]:
            self.got[v] = (n_next, carries, widths, vals[at:at + size])
            at += size

    def after(self, end: int) -> tuple | None:
        """(next n, levels_of -> the next propose's levels) of the walk ended at `end`; None when not drawn."""
        if end not in self.got:
            return None
        n_next, carries, widths, vals = self.got[end]
        src, uniform = self.src, self.d.uniform                  # not self: the drafter keeps no cycle through it
        return n_next, lambda: src.levels_of(vals, n_next, carries, uniform, widths)


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
        self.carry = continuation(tree, self.main, path, q)
        self.ready = tree.rider.after(path[-1]) if isinstance(tree.rider, LevelsAhead) else None
        tree.rider = None                                            # read: the tree and its q need not outlive it

    def ride(self, tree: DraftTree, q: torch.Tensor, n: int) -> None:
        """Before the walk of this drafter's last tree (root at n - 1) over the forward's laws q: its level reads
        carry the next candidates of every end (LevelsAhead)."""
        tree.rider = LevelsAhead(self, tree, q, n, self.rnd.candidates_ahead(tree))
