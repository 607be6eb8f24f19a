"""CASCADE's two-read walk (engine/budgetwalk.py): its groups formed where the cosines live (groups.Groups.masks) are
the host's groups (groups.Groups.__call__) at every threshold, ties included; and its walks, papers' and keyed,
equal the level-by-level walk (each level read as it is reached, its groups asked on the host, its budget test
against the host's float of what the walk has spent): the same path, tokens, decisions, numbers, groups, Sibling
masses and generator, bit for bit, on point-mass and sampled trees, both readings, budgets that scale levels and
wide groups. Plain functions without fixtures: tests/mutation/mutants_cascade_ahead.py uses them as detectors."""
import math
from types import SimpleNamespace

import pytest
import torch

from specviz.core.noise import READINGS, VERSION
from specviz.engine import budgetwalk, groups, keyed, rules, treewalk
from specviz.engine.drafters.draft_tree import DraftTree

V = 10


def cfg(tau: float, sets: str = "paper"):
    return SimpleNamespace(cascade_sets=sets, tau_pos=tau, tau_seq=tau)


def tree_of(seed: int, sampled: bool) -> DraftTree:
    """A four-level tree of 16 nodes: root 0, three kids, the first two with kids of their own, and so on; tokens
    drawn with repeats (so some levels are not distinct point masses); sampled: every node a recorded law."""
    g = torch.Generator().manual_seed(seed)
    parents = [-1, 0, 0, 0, 1, 1, 1, 2, 2, 4, 4, 5, 7, 9, 9, 11]
    depths = [0]
    for p in parents[1:]:
        depths.append(depths[p] + 1)
    tokens = torch.randint(0, V, (16,), generator=g).tolist()
    laws = [None] + ([row for row in (torch.randn(15, V, generator=g) * 2).softmax(-1)] if sampled else [None] * 15)
    if sampled:
        for i in range(1, 16):
            laws[i] = laws[i].clone()
            laws[i][tokens[i]] += 0.3
            laws[i] /= laws[i].sum()
    return DraftTree(tokens, parents, depths, laws)


def q_of(tree: DraftTree, seed: int) -> torch.Tensor:
    """Target laws leaning on each node's kids' tokens, so walks go deep now and then."""
    g = torch.Generator().manual_seed(1000 + seed)
    q = (torch.randn(len(tree.tokens), V, generator=g) * 1.5).softmax(-1)
    for i, kids in enumerate(tree.children):
        for c in kids[:2]:
            q[i, tree.tokens[c]] += 0.4
    return q / q.sum(-1, keepdim=True)


def hidden_of(tree: DraftTree, seed: int) -> torch.Tensor:
    """Hidden states with some rows repeated (cosine 1: groups at any threshold) and the rest random."""
    g = torch.Generator().manual_seed(2000 + seed)
    h = torch.randn(len(tree.tokens), 4, generator=g)
    h[5], h[8], h[12] = h[2], h[3], h[6]
    return h


def _walks(tree, q, hidden, conf, budget, seed, noise):
    """(the two-read walk, the level-by-level walk, the papers' generators after each)."""
    out = []
    for reference in (False, True):
        fn = groups.cascade_groups(tree, hidden, conf)
        mp = pytest.MonkeyPatch()
        if reference:
            mp.setattr(budgetwalk, "walkable", lambda t, node=0: [node])       # one level a read, tested
            mp.setattr(budgetwalk, "path_lefts", lambda t, nodes, budget, used, *_: {nodes[0]: budget - used})
            fn = (lambda f: lambda n, kids: f(n, kids))(fn)                     # groups asked on the host
        gen = torch.Generator().manual_seed(seed)
        try:
            if noise == "papers":
                walk = treewalk.verify_tree(tree, q, rules.lossless, gen, fn, budget, lambda d: d < 4)
            else:
                walk = keyed.keyed_tree(tree, q, rules.lossless, READINGS[VERSION](seed, V), 3, fn, budget,
                                        lambda d: d < 4)
        finally:
            mp.undo()
        out.append((walk, torch.rand(3, generator=gen).tolist()))
    return out


def two_read_walks_equal_level_by_level():
    """The detector: walks over 5 trees x both noises x both readings x thresholds x budgets, every field equal;
    the cases include walks of three levels and more and walks with a scaled level above a walked one."""
    deep = scaled_above = 0
    for seed in range(5):
        tree = tree_of(seed, sampled=seed % 3 == 2)
        q, hidden = q_of(tree, seed), hidden_of(tree, seed)
        for noise in ("papers", "keyed"):
            for sets in ("paper", "siblings"):
                for tau in (0.5, -1.0):
                    for budget in (0.03, 0.15, 2.0):
                        (a, ga), (b, gb) = _walks(tree, q, hidden, cfg(tau, sets), budget, seed, noise)
                        assert a == b and ga == gb, (seed, noise, sets, tau, budget)
                        levels = sorted({s.level for s in a.judged})
                        deep += len(levels) >= 3
                        scale = {s.level: s.scale for s in a.judged}
                        scaled_above += any(scale[lv] < 1.0 for lv in levels[:-1])
    assert deep > 10 and scaled_above > 5, (deep, scaled_above)


def test_two_read_walks_equal_level_by_level():
    two_read_walks_equal_level_by_level()


def _sets(g: groups.Groups, kids: list):
    """Each kid's group as device masks and as host groups: (device token sets, host token sets)."""
    toks = g.tree.tokens
    cand, mask = g.masks(kids)
    dev = [{int(cand[i]) for i in range(len(cand)) if mask[j, i] > 0} for j in range(len(kids))]
    host = [{toks[m] for m in g(c, kids).members} - {toks[c]} for c in kids]
    return dev, host


def device_groups_equal_host_groups():
    """The detector: for every level's kids, Groups.masks holds exactly the host group's tokens (the kid's own left
    out), at thresholds equal to a read cosine (>= keeps it), one float64 step above it (which a float32
    comparison would round back onto it) and one below, both readings."""
    ties = 0
    for seed in range(6):
        tree = tree_of(seed, sampled=False)
        hidden = hidden_of(tree, seed)
        cos = groups.cascade_groups(tree, hidden, cfg(0.0)).cos_t.tolist()
        for sets in ("paper", "siblings"):
            for node, kids in enumerate(tree.children):
                if not kids:
                    continue
                probe = groups.cascade_groups(tree, hidden, cfg(0.0, sets))
                pairs = [(c, m) for c in kids for m in probe.candidates(c, kids)] or [(node, node)]
                c0 = cos[pairs[seed % len(pairs)][0]][pairs[seed % len(pairs)][1]]
                for tau in (c0, math.nextafter(c0, math.inf), math.nextafter(c0, -math.inf), 0.5, -1.0):
                    dev, host = _sets(groups.cascade_groups(tree, hidden, cfg(tau, sets)), kids)
                    assert dev == host, (seed, sets, node, tau, dev, host)
                    ties += tau == c0 and dev != _sets(groups.cascade_groups(
                        tree, hidden, cfg(math.nextafter(c0, math.inf), sets)), kids)[1]
    assert ties > 3, ties                                       # a tie decided a membership


def test_device_groups_equal_host_groups():
    device_groups_equal_host_groups()


def test_exact_means_at_most_two_other_tokens():
    """Groups.exact: the device sums keep the host's bits when every kid's group holds at most two distinct tokens
    other than its own (paper reading, every cosine 1: a kid's group is every other node one level away or at its
    level)."""
    everything = cfg(-1.0)
    two = DraftTree([0, 1, 2], [-1, 0, 0], [0, 1, 1], [None] * 3)                 # kid 1: {2, 0}; kid 2: {1, 0}
    own = DraftTree([0, 1, 2, 1], [-1, 0, 0, 1], [0, 1, 1, 2], [None] * 4)        # node 3 repeats kid 1's token
    three = DraftTree([0, 1, 2, 3], [-1, 0, 0, 1], [0, 1, 1, 2], [None] * 4)      # kid 1: {2, 0, 3}
    for tree, want in ((two, True), (own, True), (three, False)):
        g = groups.cascade_groups(tree, torch.ones(len(tree.tokens), 2), everything)
        assert g.exact(tree.children[0]) is want, (tree.tokens, want)


def test_path_lefts_spend_each_ancestor_once_in_path_order():
    """path_lefts: a node's budget left is the budget less what the walk had spent plus every level above it on its
    path in the subtree (its own level not counted), added in the host's order."""
    tree = DraftTree([0, 1, 2, 3, 4, 5], [-1, 0, 0, 1, 3, 1], [0, 1, 1, 2, 3, 2], [None] * 6)
    costs = {1: torch.tensor(0.125), 3: torch.tensor(0.25), 5: torch.tensor(0.5)}
    lefts = budgetwalk.path_lefts(tree, [1, 3, 5], 1.0, 0.0625, costs)
    assert {c: float(v) for c, v in lefts.items()} == {1: 1.0 - 0.0625, 3: 1.0 - (0.0625 + 0.125),
                                                       5: 1.0 - (0.0625 + 0.125)}
    odd = {1: torch.tensor(0.1), 3: torch.tensor(0.2)}
    got = budgetwalk.path_lefts(tree, [1, 3], 0.7, 0.3, odd)[3]
    assert float(got) == 0.7 - (0.3 + float(odd[1].double()))              # float64 steps, as the host adds
