"""Tree levels by exact enumeration (docs/methods_trees.md, points 1-5, 7): the law a level's sibling walk outputs,
built here from the rule formulas, against what the engine decides with and records. Small vocabularies, a few
siblings, point-mass and sampled siblings. Every test is a plain function without fixtures:
tests/mutation/mutants_tree.py
uses them as detectors.

A level's walk (verify.level_law) decides sibling j with b_j = a_j(x_j) against the running residual and resamples
from the last residual, so given the drawn siblings it outputs  Σ_j Π_{i<j}(1 - b_i) b_j δ(x_j) + Π_i(1 - b_i) r_k.
"""
import itertools
import math
from types import SimpleNamespace

import torch

from specviz.core.sampling import safe_norm, tv
from specviz.engine import events, groups, rules, treewalk, verify
from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.randomness import Papers

V = 6


def laws(n, v=V, seed=0, sharp=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, v, generator=g) * sharp).softmax(-1)


def one_level(xs, sib_laws=None):
    """Root 0 with children 1..k carrying tokens xs (point masses unless laws are given)."""
    k = len(xs)
    return DraftTree([0] + list(xs), [-1] + [0] * k, [0] + [1] * k, [None] + (sib_laws or [None] * k))


def walk_law(lvl) -> torch.Tensor:
    """What the engine's decisions output given the drawn siblings: from the b_j it compares uniforms with and the
    law it resamples from."""
    out, reach = torch.zeros_like(lvl.end), 1.0
    for b, x in zip(lvl.b, lvl.xs):
        out[x] += reach * b
        reach *= 1.0 - b
    return out + reach * lvl.end


def oracle(q, sib_laws, xs, members=None, scale=1.0):
    """The level's output law for fixed sibling laws, from the formulas (docs/algorithms.md P3, docs/design.md §3):
    a_j = min(1, r/p_j), at x_j CASCADE's min(1, (r(x_j) + s Σ_{t ∈ T_j} r(t)) / p_j(x_j)); r <- norm([r - p_j a_j]+);
    o = Σ_j R_j p_j a_j + R_k r."""
    r, reach, out = q.clone(), 1.0, torch.zeros_like(q)
    for j, (p, x) in enumerate(zip(sib_laws, xs)):
        a = torch.where(p > 0, (r / p.clamp_min(1e-30)).clamp(max=1.0), torch.ones_like(p))
        toks = sorted(set(members[j]) - {x}) if members else []
        if toks and p[x] > 0:
            a[x] = min(1.0, float((r[x] + scale * r[toks].sum()) / p[x]))
        out += reach * p * a
        reach *= 1.0 - float((p * a).sum())
        r = safe_norm((r - p * a).clamp_min(0), r)[0]
    return out + reach * r


def point(x, v=V):
    return rules.point_mass(torch.tensor(x), v)


def _level(q, xs, sib_laws=None, accept=rules.lossless, group_fn=None, left=math.inf):
    tree = one_level(xs, sib_laws)
    lvl, members = verify.judge_level(tree, tree.children[0], q, accept, group_fn, left)
    lvl.xs = list(xs)
    return lvl, members


def test_sd_point_mass_level_outputs_q():
    """(c) lossless: any point-mass siblings give exactly q, recorded cost 0."""
    for seed in range(6):
        q = laws(1, seed=seed, sharp=1.5)[0]
        for xs in ((0,), (2, 0), (1, 3, 5), (4, 2, 0, 1)):
            lvl, _ = _level(q, xs)
            assert torch.allclose(walk_law(lvl), q, atol=1e-6)
            assert lvl.cost < 1e-6


def test_sd_sampled_siblings_output_q_over_the_draws():
    """(c) EAGLE-1 siblings drawn without replacement from p, each with its conditional law: averaged over every
    ordered draw the level outputs exactly q."""
    for seed in range(3):
        q, p = laws(2, v=5, seed=seed, sharp=1.5)
        for k in (1, 2, 3):
            total = torch.zeros(5)
            for xs in itertools.permutations(range(5), k):
                cur, weight, sib = p.clone(), 1.0, []
                for x in xs:
                    sib.append(cur.clone())
                    weight *= float(cur[x])
                    cur[x] = 0
                    cur = cur / cur.sum()
                lvl, _ = _level(q, xs, sib)
                total += weight * walk_law(lvl)
            assert torch.allclose(total, q, atol=1e-5)


def everything(tau=-1.0, sets="paper"):
    """CASCADE groups where every candidate is similar enough (cos >= -1 always holds)."""
    return SimpleNamespace(tau_pos=tau, tau_seq=tau, cascade_sets=sets, h_norm="raw")


def test_cascade_point_mass_level_cost_is_the_tv_of_its_output_law():
    """(a) the recorded cost is TV(o, q) of what the decisions output, and o is the formula's law at the engine's
    scale; (b) it fits the budget; the fitted scale uses the budget up when it had to shrink."""
    q = torch.tensor([0.30, 0.25, 0.20, 0.15, 0.06, 0.04])
    tree = one_level((0, 1, 2))
    group_fn = groups.cascade_groups(tree, torch.ones(4, 3), everything())
    for left in (0.0, 0.05, 0.1, 0.2, math.inf):
        lvl, sets = _level(q, (0, 1, 2), group_fn=group_fn, left=left)
        o = walk_law(lvl)
        members = [[tree.tokens[m] for m in g.members] for g in sets]
        assert torch.allclose(o, oracle(q, [point(x) for x in (0, 1, 2)], (0, 1, 2), members, lvl.scale), atol=1e-6)
        assert abs(lvl.cost - float(tv(o, q))) < 1e-6
        assert lvl.cost <= left + 1e-6
        if lvl.scale < 1:
            assert lvl.cost >= left - 1e-4
    assert _level(q, (0, 1, 2), group_fn=group_fn)[0].cost > 0.2          # the relaxation is large when unbounded


def test_sampled_cascade_level_cost_is_its_fixed_law_tv():
    """(a) sampled siblings: the cost is the TV of the level's law with each sibling's law held at the recorded one."""
    q, p = laws(2, seed=4, sharp=1.2)
    sib = [p, safe_norm(p * (torch.arange(V) != 2), p)[0]]
    tree = one_level((2, 4), sib)
    group_fn = groups.cascade_groups(tree, torch.ones(3, 3), everything())
    for left in (0.01, 0.1, math.inf):
        lvl, sets = _level(q, (2, 4), sib, group_fn=group_fn, left=left)
        members = [[tree.tokens[m] for m in g.members] for g in sets]
        o = oracle(q, sib, (2, 4), members, lvl.scale)
        assert torch.allclose(lvl.law, o, atol=1e-6) and abs(lvl.cost - float(tv(o, q))) < 1e-6
        assert lvl.cost <= left + 1e-6


def two_levels():
    """Root; level 1: nodes 1-3 (tokens 0, 1, 2); level 2: 4-5 under 1, 6-7 under 2, 8 under 3. Point masses."""
    return DraftTree([5, 0, 1, 2, 3, 4, 0, 5, 1], [-1, 0, 0, 0, 1, 1, 2, 2, 3], [0, 1, 1, 1, 2, 2, 2, 2, 2], [None] * 9)


def run_tree(tree, q, cfg, budget, seed, hidden=None):
    hidden = torch.ones(len(tree.tokens), 3) if hidden is None else hidden
    gen = torch.Generator().manual_seed(seed)
    group_fn = groups.cascade_groups(tree, hidden, cfg) if cfg is not None else None
    return treewalk.verify_tree(tree, q, rules.lossless, gen, group_fn, budget, lambda d: True)


def test_cascade_step_budget_bounds_the_sum_of_level_tvs():
    """(b) Σ over the step's judged levels of TV(o_level, q_level) <= δ, every level's cost equal to the TV of the
    formula's law at its recorded scale, and each level allowed exactly what the earlier levels left."""
    tree = two_levels()
    group_fn = groups.cascade_groups(tree, torch.ones(9, 3), everything())
    levels_seen = 0
    for seed in range(40):
        q = laws(len(tree.tokens), seed=seed, sharp=1.0)
        for budget in (0.02, 0.1, 0.3, 1.0):
            steps = run_tree(tree, q, everything(), budget, seed).judged
            per_level = {}
            for s in steps:
                per_level.setdefault(s.level, s)
            spent = 0.0
            for lvl_no in sorted(per_level):
                s = per_level[lvl_no]
                par = tree.parents[s.node]
                kids = tree.children[par]
                members = [[tree.tokens[m] for m in group_fn(c, kids).members] for c in kids]
                o = oracle(q[par], [point(tree.tokens[c]) for c in kids], [tree.tokens[c] for c in kids], members,
                           s.scale)
                assert abs(s.tv_cost - float(tv(o, q[par]))) < 1e-5
                assert abs(s.budget_left - max(0.0, budget - spent)) < 1e-6
                spent += s.tv_cost
                levels_seen += 1
            assert spent <= budget + 1e-5
    assert levels_seen > 200


def test_resampled_event_costs_the_level_once():
    """Point 3: the resampled token's cost is the level's TV, not a sum over its rejected siblings."""
    q = torch.tensor([[0.02, 0.03, 0.05, 0.3, 0.3, 0.3]] * 4)
    tree = one_level((0, 1, 2))
    cfg = everything()
    for seed in range(20):
        evs = events.tree_events(10, tree, q, run_tree(tree, q, cfg, 0.5, seed), cfg, Papers(seed, 6))
        if evs[-1].decision != "resampled":
            continue
        judged = [e for e in evs if e.decision == "rejected"]
        assert len(judged) == 3 and len({e.tv_cost for e in judged}) == 1
        assert abs(evs[-1].tv_cost - judged[0].tv_cost) < 1e-9 and judged[0].tv_cost > 0.01
        return
    raise AssertionError("no step resampled")


def test_later_siblings_record_tv_against_q_and_against_the_residual():
    """Point 7: `tv` = TV(p, q) against the level's target law; `tv_residual` = TV(p, r) against the running residual
    the sibling was judged with."""
    q = laws(4, seed=9, sharp=2.0)
    p = laws(2, seed=10)
    sib = [p[0], safe_norm(p[0] * (torch.arange(V) != 1), p[0])[0]]
    tree = one_level((1, 3), sib)
    for seed in range(30):
        steps = treewalk.verify_tree(tree, q, rules.lossless, torch.Generator().manual_seed(seed), None,
                                   1.0, lambda d: True).judged
        if len(steps) == 2:
            r1 = safe_norm((q[0] - sib[0] * rules.lossless(q[:1], sib[0][None])[0]).clamp_min(0), q[0])[0]
            assert abs(steps[1].tv - float(tv(sib[1], q[0]))) < 1e-6
            assert abs(steps[1].tv_residual - float(tv(sib[1], r1))) < 1e-6
            assert abs(steps[1].tv - steps[1].tv_residual) > 1e-3
            assert abs(steps[0].tv - steps[0].tv_residual) < 1e-9
            return
    raise AssertionError("the first sibling was always accepted")


def test_paper_sets_reach_the_whole_level_and_consecutive_levels():
    """Point 2: the paper's I(n) spans n's tree level (cousins too), C(n) the levels above and below; the siblings
    reading keeps same-parent siblings only."""
    tree = two_levels()
    hidden = torch.zeros(9, 2)
    hidden[:, 0] = 1.0
    hidden[[6, 8], 1] = 0.1          # node 4 and its cousins 6, 8 stay similar; root, level 1 and node 5 too
    hidden[7] = torch.tensor([0.0, 1.0])                  # node 7: orthogonal to everything else
    paper = groups.cascade_groups(tree, hidden, everything(0.9))
    g = paper(4, tree.children[1])
    assert sorted(g.inter) == [5, 6, 8] and sorted(g.conv) == [1, 2, 3]
    assert g.members == [1, 2, 3, 5, 6, 8]
    sib = groups.cascade_groups(tree, hidden, everything(0.9, "siblings"))
    g = sib(4, tree.children[1])
    assert g.inter == [5] and g.members == [5]


def test_sampled_trees_keep_each_nodes_children_in_draw_order():
    """Point 4, fast: a pruned tree of SAMPLED children keeps, under every node, the first children drawn (child j's
    law is the drafter's law with the j - 1 earlier draws removed), so which children stay never depends on the drawn
    values. A score cut keeps a later, likelier draw without an earlier one (not lossless: see test_tree_exactness)."""
    from tests.support.toy import run, toy
    model, factory = toy(codes=8, grid=3)
    trees = []

    def spy(m, cfg, gen):
        d = factory(m, cfg, gen)
        build = d.build
        d.build = lambda *a: trees.append(build(*a)) or trees[-1]
        return d
    for seed in range(4):
        run(model, spy, seed=seed, method="sd", tree="dynamic", tree_depth=3, tree_topk=3, tree_nodes=4,
            tree_sampling="sample")
    checked = 0
    for t in trees:
        for kids in t.children:
            drawn = []
            for c in kids:
                assert set((t.laws[c] == 0).nonzero().flatten().tolist()) == set(drawn)
                drawn.append(t.tokens[c])
                checked += 1
    assert checked > 20
