"""PJD, Parallel Jacobi Decoding (CVPR 2026, arXiv 2606.05703; project page only, no code): SJD's Jacobi window
kept per row, several rows verified in one forward.

Row r + 1 is active once row r has >= c committed tokens (c = min(pjd_c, W)); its window never passes the row
above's frontier (it drafts only columns whose upper neighbour is committed), so a row never overtakes the one above.
One forward holds one segment per active row: its input (its last committed token; for a new row's first token a
stand-in, the newest committed token of the row above fed at that row's end, seen by its own segment only and never
kept) and its drafts. The mask is row-causal: a draft sees every committed token (the cache, and the committed
tokens fed in this forward) and the earlier drafts of its own row, nothing of other rows' drafts. Each row's chain is
judged with SJD's test u <= min(1, q_k(x)/p_{k-1}(x)) (the run's randomness: keyed races under keyed noise). The top
active row (every row above it complete, so its context is the AR one) resamples its first rejection from
norm([q - p]+) and takes the bonus token; a lower row commits only its accepted drafts (its rejection is postponed:
the slot is re-drafted from the new law and judged again next forward). Readings where the paper is silent:
docs/methods.md §10.

A row's newest committed token is never kept from the forward that judged it: it is the row's input in the next
forward (or fed alone there when its row is complete), where its K/V is written; so no position is cached twice.
"""
from __future__ import annotations

import torch

from specviz.core.records import Drafted
from specviz.engine.drafters.jacobi import JacobiDrafter
from specviz.engine.events import chain_pack, chain_record
from specviz.engine.families import Family, StepOut
from specviz.engine.zipar import Board


class RowDrafter(JacobiDrafter):
    """SJD's window (drafters/jacobi.py) for one row: it drafts positions up to `end` (exclusive): the row's end, or
    the row above's frontier while that row is incomplete."""
    end = 0

    def _fill(self, committed, n):
        k = max(0, min(self.window - 1, self.end - n))
        while len(self.x) < k:
            self.x = torch.cat([self.x, self._fresh(committed, n + len(self.x)).view(1).to(self.x.device)])
            self.host = None
        self.x, self.host = self.x[:k], (self.host[:k] if self.host is not None else None)
        self.p = self.p[:k]


class Segment:
    """One active row's part of a forward: its drafter, first draft position n, scratch rows [at, at + 1 + len(x))."""

    def __init__(self, row, drafter, n, x, p, at):
        self.row, self.drafter, self.n, self.x, self.p, self.at = row, drafter, n, x, p, at


class PJD(Family):
    """Several rows of SJD in one forward under a row-causal mask; SJD's test per row."""

    def __init__(self, ctx, drafter_factory=None):
        super().__init__(ctx)
        h, w = ctx.model.grid
        cfg = ctx.cfg
        self.board = Board(h, w)
        self.c = min(int(cfg.pjd_c), w)
        self.cached: set[int] = set()             # positions whose K/V the cache holds
        self.rows = [RowDrafter(cfg.window, ctx.model.codebook_size, ctx.model.grid, cfg.init, ctx.rnd,
                                couple=bool(cfg.couple)) for _ in range(h)]

    def start(self, committed, hidden0):
        self.board.put(0, committed[0])
        self.board.advance()

    def end(self, r: int) -> int:
        """The first position row r may not draft: its end, or the row above's frontier while that is incomplete."""
        b = self.board
        return r * b.w + (b.w if r == 0 or b.count[r - 1] == b.w else b.count[r - 1])

    def active(self) -> list[int]:
        """Rows that judge drafts in the next forward, top first (the first one: every row above it complete)."""
        b = self.board
        return [r for r in range(b.h) if b.count[r] < b.w and (r == 0 or b.count[r - 1] >= self.c)
                and self.end(r) > r * b.w + b.count[r]]

    def head(self, n: int) -> tuple[int, bool]:
        """The input before position n (a row's next): (token, committed); a stand-in where it is undecided."""
        b = self.board
        if b.decided(n - 1):
            return b.tok[n - 1], True
        above = n // b.w - 1
        return b.tok[above * b.w + b.count[above] - 1], False

    def step(self, state, committed):
        c, b = self.ctx, self.board
        rows = self.active()
        tokens, positions, seg_of, fresh, segs = [], [], [], [], []
        heads = {}
        for r in rows:
            n = r * b.w + b.count[r]
            d = self.rows[r]
            d.end = self.end(r)
            x, p = d.propose(b.tok[:n], n)
            tok, real = self.head(n)
            heads[n - 1] = real
            segs.append(Segment(r, d, n, x, p, len(positions)))
            tokens += [x.new_tensor([tok]), x]                       # the drafts stay where they are: no read
            positions += list(range(n - 1, n + len(x)))
            seg_of += [len(segs) - 1] * (1 + len(x))
            fresh += [real and n - 1 not in self.cached] + [False] * len(x)
        for pos in b.unfed:                       # committed tokens no segment feeds: their K/V is written alone
            if pos not in heads:
                tokens.append(torch.tensor([b.tok[pos]])), positions.append(pos), seg_of.append(-1 - pos)
                fresh.append(True)
        dev = segs[0].x.device
        logits, _ = c.forward(state, torch.cat([t.to(dev) for t in tokens]), torch.tensor(positions),
                                    row_causal(seg_of, fresh))
        q = self.laws(logits)
        top, results = rows[0], []
        for s in segs:
            k = len(s.x)
            qs = q[s.at:s.at + k + 1]
            bonus_ok = not self.postpones(s, top) and s.n + k < s.drafter.end
            res = c.rnd.chain(qs, s.p.to(q.device), s.x.to(q.device), c.accept_fn, s.n, bonus_ok,
                              s.drafter.known(), True)                     # SJD's rule: lossless min(1, q/p)
            results.append(res)
        kept = [i for i, ok in enumerate(fresh) if ok]
        kept += [s.at + 1 + i for s, res in zip(segs, results) for i in range(self.keep(s, res, top))]
        c.model.commit(state, torch.tensor(sorted(kept), dtype=torch.long))
        self.cached.update(positions[i] for i in kept)
        b.unfed = []
        cfg = c.cfg if c.record else None
        events, drafted = [], []
        packs = []
        for s, res in zip(segs, results):
            qs = q[s.at:s.at + len(s.x) + 1]
            s.drafter.update(res.accepted - self.postpones(s, top), qs)
            packs.append(chain_pack(s.x.to(q.device), s.p.to(q.device), qs, res, cfg))
        flat = torch.cat([t for s, pack in zip(segs, packs)
                          for t in (pack, s.drafter.x.to(pack.device, torch.float64))]).tolist()   # one read
        off = 0
        for s, res, pack in zip(segs, results, packs):
            vals, off = flat[off:off + len(pack)], off + len(pack)
            s.drafter.settle(flat[off:off + len(s.drafter.x)])
            off += len(s.drafter.x)
            new, evs = chain_record(s.n, vals, len(s.x), res, cfg, c.rnd)
            if self.postpones(s, top) and len(new) > res.accepted:       # a lower row's rejection waits
                new, evs = new[:res.accepted], evs[:-1] if evs else evs
            for i, t in enumerate(new):
                b.put(s.n + i, t)
            events += evs
            if c.record:
                drafted += [Drafted(s.at + 1 + i, s.at + i, s.n + i, int(t))
                            for i, t in enumerate(vals[1:1 + len(s.x)])]
        b.unfed = [pos for pos in b.unfed if pos not in self.cached]     # accepted drafts: kept above
        return StepOut(b.advance(), events, drafted)

    @staticmethod
    def postpones(s: Segment, top: int) -> bool:
        """Whether a segment's row only commits its accepted drafts (a row below the top active one)."""
        return s.row != top

    def keep(self, s: Segment, res, top: int) -> int:
        """How many accepted drafts of a segment keep their K/V: all but the row's last committed token, which is
        fed again next forward as its row's input (so no position is cached twice, and it is seen by every row)."""
        new = not self.postpones(s, top) and (res.accepted < len(s.x) or res.bonus)
        return res.accepted if new else max(0, res.accepted - 1)


def row_causal(seg_of: list[int], fresh: list[bool]) -> torch.Tensor:
    """(N, N) bool: row i sees itself, the earlier rows of its own segment (its input and earlier drafts), and every
    committed token fed for the first time (`fresh`), whichever segment it heads."""
    seg, ok = torch.tensor(seg_of), torch.tensor(fresh)
    n = len(seg_of)
    earlier = torch.ones(n, n, dtype=torch.bool).tril()
    return (earlier & (seg[:, None] == seg[None, :])) | ok[None, :] | torch.eye(n, dtype=torch.bool)
