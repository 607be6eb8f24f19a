"""The draft tree of one verification step, drawn: every proposed node as a thumbnail of its code's decoded patch,
edges parent -> child, the accepted path, the rejected and never-judged siblings, CASCADE's interchangeable (I, same
level) and convergent (C, consecutive levels) links in two colours (links within one level as nested arcs, one per
member), each level's TV cost with its share of the step's budget. The legend of every box colour drawn and both
links is HTML beside the picture (`legend_html`), so the picture is only the tree and its text is large for its size (a
lecture hall reads it at 16 CSS px when the picture is shown at 16 / TEXT of its natural width: `shown_size`).
`tree_layout` reads the trace into a named record; `draw_tree` draws exactly that record, `legend` what it shows.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Callable

from PIL import Image, ImageDraw

from specviz.core.records import JUDGED, TARGET_SAMPLED, Groups
from specviz.render import draw
from specviz.render.verdict import num

# px of the picture: every word on it is drawn at TEXT px, each row of leaves is one line of words tall (a thumbnail
# with a 3 px border), so that shown with its text at 16 CSS px (16 / TEXT of its natural size) the tallest tree of
# the app's defaults fits a 1280x720 screen beside the replay picture (tests/render/test_tree_picture.py::
# test_a_tree_at_16_px_fits_a_lecture_hall_screen)
TEXT, THUMB, COL, ROW, PAD, HEAD = 22, 26, 215, 32, 16, 62
EDGE_RGB, PATH_RGB, UNJUDGED_RGB = (150, 154, 164), (26, 127, 55), (190, 193, 200)
LINK_RGB = {"I": draw.GROUP_RGB[1], "C": draw.GROUP_RGB[2]}     # as the groups map: I green, C orange
LINK_LABEL = {"I": "interchangeable I(n): same level, cos ≥ τ_pos", "C": "convergent C(n): consecutive levels, "
              "cos ≥ τ_seq"}
BOX_ORDER = ("root", "exact", "relaxed", "rejected", "resampled", "bonus", "")     # legend order of box colours
BOX_LABEL = {"root": "root: the last committed token", "": "never judged (the walk ended first)",
             "resampled": "resampled from the residual", "bonus": "bonus token (every draft accepted)"}
I_BEND, I_STEP = 18, 14             # px: a same-level link's arc, and how much further out per row it spans


@dataclass(frozen=True)
class TreeNode:
    node: int                   # id within the step (0 = the root: the last committed token)
    parent: int                 # -1 for the root
    level: int                  # tree depth (root 0)
    pos: int                    # image position its token would fill
    token: int
    decision: str               # exact | relaxed | rejected | "" (never judged) | root | resampled | bonus
    x: int = 0                  # box centre in the picture
    y: int = 0


@dataclass(frozen=True)
class LevelCost:
    level: int
    pos: int
    tv_cost: float              # TV(o, q) of the level's whole sibling walk
    share: float | None         # tv_cost / the step's TV budget (None: the rule has no budget)


@dataclass(frozen=True)
class TreeLayout:
    step: int
    nodes: tuple                # TreeNode, the root first; the step's sampled token last (node id -2)
    edges: frozenset            # (parent, child)
    path: tuple                 # accepted node ids, root first, then the sampled token (-2)
    links: dict                 # "I" | "C" -> frozenset of (focus node, member) pairs
    focus: tuple                # the judged nodes whose groups are drawn
    levels: tuple               # LevelCost per judged level
    budget: float | None        # the step's TV budget (CASCADE), None otherwise

    def node(self, n: int) -> TreeNode:
        return next(x for x in self.nodes if x.node == n)


SAMPLED = -2                    # id of the step's resampled / bonus token in the picture


def tree_layout(trace, step: int) -> TreeLayout | None:
    """The draft tree of trace.steps[step], or None when that step drafted no tree (AR, Jacobi windows)."""
    st = trace.steps[step]
    drafted = list(st.drafted)
    if not drafted or not any(e.parent >= 0 for e in st.events):        # tree events know their parent node
        return None
    judged = {e.node: e for e in st.events if e.decision in JUDGED and e.node >= 0}
    root_pos = min(d.pos for d in drafted) - 1
    sampled = next((e for e in st.events if e.decision in TARGET_SAMPLED), None)
    path = [0] + [n for n, e in sorted(judged.items(), key=lambda kv: kv[1].level) if e.decision != "rejected"]
    raw = [TreeNode(0, -1, 0, root_pos, trace.tokens[root_pos] if 0 <= root_pos < len(trace.tokens) else -1,
                    "root")]
    raw += [TreeNode(d.node, d.parent, d.pos - root_pos, d.pos, d.token, judged[d.node].decision if d.node in judged
                     else "") for d in drafted]
    edges = {(d.parent, d.node) for d in drafted}
    if sampled is not None:
        raw.append(TreeNode(SAMPLED, path[-1], sampled.level, sampled.pos, sampled.token, sampled.decision))
        edges.add((path[-1], SAMPLED))
        path.append(SAMPLED)
    focus = focus_nodes(judged, path)
    ext = {n: e.groups or Groups() for n, e in judged.items()}          # the events' `groups` extension
    links = {"I": frozenset((n, m) for n in focus for m in ext[n].interchangeable),
             "C": frozenset((n, m) for n in focus for m in ext[n].convergent)}
    budget = max((g.budget_left for g in ext.values() if g.budget_left > 0), default=None)
    costs = {}
    for e in judged.values():
        costs.setdefault(e.level, (e.pos, e.tv_cost))
    levels = tuple(LevelCost(lv, p, c, c / budget if budget else None) for lv, (p, c) in sorted(costs.items()))
    return TreeLayout(st.step, _place(raw), frozenset(edges), tuple(path), links, focus, levels, budget)


def focus_nodes(judged: dict, path: list) -> tuple:
    """Whose groups to draw (all of them at once is a hairball): the accepted nodes, else the step's last judged
    node (the rejection that ended it)."""
    on_path = tuple(n for n in path if n in judged)
    return on_path or ((max(judged, key=lambda n: (judged[n].level, n)),) if judged else ())


def _place(nodes: list) -> tuple:
    """A tidy tree: leaves one row apart in depth-first order (children by node id, the sampled token last), each
    inner node centred on its children, columns by level."""
    kids: dict[int, list] = {}
    for n in nodes:
        kids.setdefault(n.parent, []).append(n)
    y: dict[int, float] = {}
    leaf = [0]

    def visit(n) -> float:
        below = sorted(kids.get(n.node, []), key=lambda k: (k.node == SAMPLED, k.node))
        if below:
            ys = [visit(k) for k in below]
            y[n.node] = (ys[0] + ys[-1]) / 2
        else:
            y[n.node], leaf[0] = leaf[0], leaf[0] + 1
        return y[n.node]

    for root in kids.get(-1, []):
        visit(root)
    return tuple(TreeNode(**{**n.__dict__, "x": PAD + THUMB // 2 + n.level * COL,
                             "y": HEAD + THUMB // 2 + round(y[n.node] * ROW)}) for n in nodes)


def size(layout: TreeLayout) -> tuple[int, int]:
    """Wide enough for every node's words and every level's header, as tall as the tree."""
    f, fb = draw.font(TEXT), draw.font(TEXT, True)
    right = [n.x + THUMB // 2 + 5 + f.getlength(_label(n)) for n in layout.nodes]
    right += [PAD + lv * COL - 4 + max(fb.getlength(h), f.getlength(t)) for lv, h, t in _headers(layout)]
    return max(round(max(right)) + PAD, 420), _tree_bottom(layout)


def _label(n: TreeNode) -> str:
    return f"#{n.node} · {n.token}" if n.node > 0 else str(n.token)


def _headers(layout: TreeLayout) -> list[tuple[int, str, str]]:
    """(level, header, its TV line) per level: its position, then its TV cost with the share of the budget."""
    cost, out = {lc.level: lc for lc in layout.levels}, []
    for lv in sorted({n.level for n in layout.nodes}):
        pos = min(n.pos for n in layout.nodes if n.level == lv)
        lc = cost.get(lv)
        tv = "" if lc is None else f"TV {num(lc.tv_cost, 3)}" + ("" if lc.share is None else f" · {lc.share:.0%}")
        out.append((lv, f"level {lv} · pos {pos}" if lv else f"root · pos {pos}", tv))
    return out


def shown_size(layout: TreeLayout, text_px: float = 16) -> tuple[float, float]:
    """The CSS px the picture takes when shown so that its text is `text_px` high."""
    w, h = size(layout)
    return w * text_px / TEXT, h * text_px / TEXT


def _tree_bottom(layout: TreeLayout) -> int:
    return max(n.y for n in layout.nodes) + THUMB // 2 + PAD


@dataclass(frozen=True)
class LegendItem:
    kind: str                   # "box": a node's border colour; "line": a link or the accepted path
    rgb: tuple
    text: str


def legend(layout: TreeLayout) -> list[LegendItem]:
    """What the picture's legend says, in order: the box colour of every kind of node drawn (root, each decision,
    never judged), then the I links, the C links and the accepted path (with whose groups the links are)."""
    drawn = {n.decision for n in layout.nodes}
    out = [LegendItem("box", node_rgb(k), BOX_LABEL.get(k) or draw.DECISION_LABEL[k]) for k in BOX_ORDER if k in drawn]
    whose = f"node{'s' if len(layout.focus) > 1 else ''} {', '.join(map(str, layout.focus))}" if layout.focus \
        else "no judged node"
    out += [LegendItem("line", LINK_RGB[kind], text) for kind, text in LINK_LABEL.items()]
    return out + [LegendItem("line", PATH_RGB, f"accepted path; links: the groups of {whose}")]


LEVEL_NOTE = "Above each level: its position and TV, the cost of its sibling walk (and its share of the step's budget)."


def legend_html(layout: TreeLayout) -> str:
    """The legend as HTML (it wraps to its column): one swatch and its words per item, then what the level headers
    say."""
    def swatch(it: LegendItem) -> str:
        rgb = "rgb({}, {}, {})".format(*it.rgb)
        shape = f"border: 4px solid {rgb}; background: #eceef2; width: 10px; height: 10px" if it.kind == "box" \
            else f"border-top: {5 if it.rgb == PATH_RGB else 3}px solid {rgb}; width: 26px; height: 0"
        return (f"<span class='sv-leg-item'><span class='sv-swatch' style='display: inline-block; {shape}; "
                f"margin: 0 6px 2px 0; vertical-align: middle'></span>{escape(it.text)}</span>")
    return f"<div class='sv-tree-legend'>{' '.join(swatch(it) for it in legend(layout))} " \
           f"<span class='sv-leg-item sv-leg-note'>{escape(LEVEL_NOTE)}</span></div>"


def draw_tree(layout: TreeLayout, patch: Callable[[int], Image.Image] | None = None) -> Image.Image:
    """The picture of `layout`; `patch(token)` gives a code's decoded patch (None: a numbered grey box)."""
    img = Image.new("RGB", size(layout), (255, 255, 255))
    d = ImageDraw.Draw(img)
    f, fb = draw.font(TEXT), draw.font(TEXT, True)
    for lv, head, tv in _headers(layout):
        d.text((PAD + lv * COL - 4, 4), head, font=fb, fill=(24, 26, 31))
        d.text((PAD + lv * COL - 4, 31), tv, font=f, fill=(88, 92, 102))
    on_path = set(zip(layout.path, layout.path[1:]))
    for a, b in sorted(layout.edges):
        na, nb = layout.node(a), layout.node(b)
        d.line((na.x + THUMB // 2, na.y, nb.x - THUMB // 2, nb.y), fill=PATH_RGB if (a, b) in on_path else EDGE_RGB,
               width=5 if (a, b) in on_path else 2)
    for kind, pairs in layout.links.items():
        for a, b in sorted(pairs):
            d.line(link_points(layout, a, b), fill=LINK_RGB[kind], width=3, joint="curve")
    for n in layout.nodes:
        box = (n.x - THUMB // 2, n.y - THUMB // 2, n.x + THUMB // 2, n.y + THUMB // 2)
        if patch is not None and n.token >= 0:
            img.paste(patch(n.token).convert("RGB").resize((THUMB, THUMB), Image.NEAREST), box[:2])
        else:
            d.rectangle(box, fill=(236, 238, 242))
        d.rectangle(box, outline=node_rgb(n.decision), width=3)
        d.text((n.x + THUMB // 2 + 5, n.y - 13), _label(n), font=f, fill=(24, 26, 31))
    return img


def link_points(layout: TreeLayout, a: int, b: int) -> tuple:
    """The polyline of link a -> b: between consecutive levels centre to centre; within one level an arc out to the
    left of the column whose apex lies further out the more rows it spans, so links from one node to several
    members of its level stay apart (one line each, not one merged line)."""
    na, nb = layout.node(a), layout.node(b)
    if na.level != nb.level:
        return (na.x, na.y, nb.x, nb.y)
    bend = I_BEND + round(I_STEP * abs(nb.y - na.y) / ROW)
    edge = na.x - THUMB // 2
    return (edge, na.y, edge - bend, (na.y + nb.y) // 2, edge, nb.y)


def node_rgb(decision: str) -> tuple:
    if decision in draw.DECISION_RGB:
        return draw.DECISION_RGB[decision]
    return (24, 26, 31) if decision == "root" else UNJUDGED_RGB
