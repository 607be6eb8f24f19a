"""ZipAR (He et al., ICML 2025; released code ThisisBillhe/ZipAR): decoding across the image, several rows at once.

The first row is decoded token by token (as the released code does: `generate` runs plain AR over row 0); row 1
starts once row 0 is complete and every later row r + 1 once row r has w tokens; each forward then decodes one
token for every active row, drawn from the target's law at its position through the run's randomness (under keyed
noise each token races its own (seed, position) key). No draft, no acceptance test: every token is an `ar` decision.
Forwards, the prefill included: W for one row, else 2W + (H - 2)·min(w, W) (`forwards`); w >= W is AR.

What a forward sees (docs/methods.md §10): every decided token, and nothing else but its own input. A token decided
in forward f has its K/V written in forward f + 1 (it is fed there: as its row's next input, or alone when its row is
done), where every scratch row sees it; committed K/V rows are visible to every query (the model boundary has no
mask over them), so a token sees the decided tokens of the rows below it too, which the released code's mask
(causal by position) hides. A new row's first token needs the token at the end of the row above, usually
undecided: the released code feeds a stand-in there, the newest token of the row two above, at that position; here
it is seen by itself only and never kept (the released code overwrites it later; our cache keeps decided tokens).

`Board` is the grid both wavefront methods (this one and pjd.py) keep: the decided tokens, per row how many from
its left edge, the tokens whose K/V is not yet written, and the raster prefix the decode loop is handed.
"""
from __future__ import annotations

import torch

from specviz.engine.events import simple_pack, simple_record
from specviz.engine.families import Family, StepOut


def forwards(h: int, w_grid: int, w: int) -> int:
    """ZipAR's target forwards (prefill included) on an h x w_grid grid with window w: row 0 takes forwards
    0 .. w_grid - 1; row r >= 1 decodes column c at forward w_grid + (r - 1)·w' + c, w' = min(w, w_grid), so the
    last token is decided at forward 2·w_grid + (h - 2)·w' - 1."""
    return w_grid if h == 1 else 2 * w_grid + (h - 2) * min(w, w_grid)


class Board:
    """The decided tokens of an (h, w) grid decoded row by row, each row from its left edge."""

    def __init__(self, h: int, w: int):
        self.h, self.w = h, w
        self.tok = [-1] * (h * w)
        self.count = [0] * h                  # decided tokens of each row, from column 0
        self.unfed: list[int] = []            # decided positions whose K/V is not written yet
        self.prefix = 0                       # the raster prefix handed to the decode loop

    def put(self, pos: int, token: int) -> None:
        self.tok[pos] = token
        self.count[pos // self.w] += 1
        self.unfed.append(pos)

    def decided(self, pos: int) -> bool:
        return self.tok[pos] >= 0

    def advance(self) -> list[int]:
        """The tokens that extend the decided raster prefix (what decode appends to `committed`)."""
        start = self.prefix
        while self.prefix < len(self.tok) and self.tok[self.prefix] >= 0:
            self.prefix += 1
        return self.tok[start:self.prefix]

    def feeds(self, wants: list[int], stand_in) -> tuple[list[int], list[int], list[bool]]:
        """The scratch rows of one forward: every unfed decided token, plus for each wanted input position that is
        not decided a stand-in token (stand_in(pos)). -> (tokens, positions, real) in raster order."""
        rows = {p: (self.tok[p], True) for p in self.unfed}
        for p in wants:
            if p not in rows:
                rows[p] = (stand_in(p), False)
        order = sorted(rows)
        return [rows[p][0] for p in order], order, [rows[p][1] for p in order]


def sees(real: list[bool]) -> torch.Tensor:
    """(N, N) bool: row i sees itself and every real (decided) fed token; a stand-in is seen by itself only."""
    return torch.eye(len(real), dtype=torch.bool) | torch.tensor(real)[None, :]


class ZipAR(Family):
    """One forward: one scratch row per active row (its last decided token, or a stand-in for a new row's first
    input) plus the decided tokens not yet fed; one draw per active row."""
    drafts = False

    def __init__(self, ctx, drafter_factory=None):
        super().__init__(ctx)
        h, w = ctx.model.grid
        self.board = Board(h, w)
        self.span = min(int(ctx.cfg.zipar_w), w)

    def start(self, committed, hidden0):
        self.board.put(0, committed[0])
        self.board.advance()

    def active(self) -> list[int]:
        """Rows that decode a token in the next forward, top first."""
        b, out = self.board, []
        for r in range(b.h):
            need = b.w if r == 1 else self.span       # row 1 waits for row 0 to be complete (the released code)
            if b.count[r] < b.w and (r == 0 or b.count[r - 1] >= need):
                out.append(r)
        return out

    def stand_in(self, pos: int) -> int:
        """The input fed at the undecided end of row r - 1 for row r's first token: the newest token of row r - 2."""
        b = self.board
        above = pos // b.w - 1
        return b.tok[above * b.w + b.count[above] - 1]

    def step(self, state, committed):
        c, b = self.ctx, self.board
        rows = self.active()
        wants = [r * b.w + b.count[r] - 1 for r in rows]             # the input before each row's next position
        tokens, positions, real = b.feeds(wants, self.stand_in)
        logits, _ = c.forward(state, torch.tensor(tokens), torch.tensor(positions), sees(real))
        q = self.laws(logits)
        c.model.commit(state, torch.tensor([i for i, ok in enumerate(real) if ok], dtype=torch.long))
        b.unfed = []
        at, packs = {p: i for i, p in enumerate(positions)}, []
        cfg = c.cfg if c.record else None
        for want in wants:
            law = q[at[want]]
            packs.append(simple_pack(law, c.rnd.draw(want + 1, law[None])[0], cfg))
        vals, width, events = torch.cat(packs).tolist(), len(packs[0]), []         # the step's one read
        for i, want in enumerate(wants):
            token, evs = simple_record(want + 1, vals[i * width:(i + 1) * width], "ar", cfg, c.rnd)
            b.put(want + 1, token)
            events += evs
        return StepOut(b.advance(), events)
