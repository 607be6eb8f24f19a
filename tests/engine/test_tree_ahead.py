"""The one-read tree walk (treewalk._ahead: every level the walk can reach packed and read at once, each level's
uniforms at its offset in one batch, levelpack.uniform_offsets) walks as the level-by-level P3 walk does: same path,
same new token, the generator left where drawing one level at a time leaves it. The reference below is written
from the rule (lossless, point-mass siblings: b = r(x), the residual r with x removed) with its own draws."""
import torch

from specviz.core.sampling import draw
from specviz.engine import rules, treewalk
from specviz.engine.drafters.draft_tree import DraftTree
from specviz.engine.levelpack import uniform_offsets, walkable


def random_tree(seed: int, vocab: int = 6, depth: int = 4, width: int = 3) -> DraftTree:
    """A point-mass tree: under each of the first `width` nodes of a level, up to `width` distinct tokens."""
    g = torch.Generator().manual_seed(seed)
    tokens, parents, depths, frontier = [int(torch.randint(vocab, (1,), generator=g))], [-1], [0], [0]
    for d in range(1, depth + 1):
        new = []
        for par in frontier:
            k = int(torch.randint(0, width + 1, (1,), generator=g))
            for tok in torch.randperm(vocab, generator=g)[:k].tolist():
                tokens.append(tok), parents.append(par), depths.append(d)
                new.append(len(tokens) - 1)
        frontier = new[:width]
    return DraftTree(tokens, parents, depths, [None] * len(tokens))


def reference_walk(tree: DraftTree, q: torch.Tensor, gen: torch.Generator) -> tuple[list, int]:
    """P3, lossless, point masses, one level at a time: k + 1 uniforms drawn at a level, the generator advanced by
    the j + 1 the walk used when it accepts kid j (j + 2 with a bonus token, k + 1 when every kid fails)."""
    path = [0]
    while True:
        kids, r = tree.children[path[-1]], q[path[-1]]
        state = gen.get_state()
        u = torch.rand(len(kids) + 1, generator=gen)
        gen.set_state(state)
        for j, c in enumerate(kids):
            x = tree.tokens[c]
            if u[j] < min(1.0, float(r[x])):
                path.append(c)
                if tree.children[c]:
                    torch.rand(j + 1, generator=gen)
                    break
                torch.rand(j + 2, generator=gen)
                return path, int(draw(q[c], u[j + 1]))
            f = r.clone()
            f[x] = 0
            r = f / f.sum() if float(f.sum()) >= 1e-12 else r
        else:
            torch.rand(len(kids) + 1, generator=gen)
            return path, int(draw(r, u[len(kids)]))


def one_read_walks_as_level_by_level(seeds=range(60)) -> None:
    deep = 0
    for seed in seeds:
        tree = random_tree(seed)
        q = torch.softmax(torch.randn(len(tree.tokens), 6, generator=torch.Generator().manual_seed(seed)) * 2, -1)
        for reads in (1, 2):                                          # levelpack.Ahead: all at once, or in two
            g1, g2 = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
            walk = treewalk.verify_tree(tree, q, rules.lossless, g1, None, 0.0, lambda d: True, reads=reads)
            want = reference_walk(tree, q, g2)
            assert (walk.path, walk.new_token) == want, (seed, reads, walk.path, walk.new_token, want)
            assert torch.equal(g1.get_state(), g2.get_state()), (seed, reads)   # advanced by what was used
        deep += len(walk.path) > 2
    assert deep >= 5                                                  # walks of two levels and more are covered


def test_one_read_walk_equals_the_level_by_level_walk():
    one_read_walks_as_level_by_level()


def test_offsets_follow_the_walk():
    """Kid j of a node starts j + 1 uniforms after its parent's level; only the root and nodes with children have
    a level."""
    tree = DraftTree([0, 1, 2, 3, 4, 5], [-1, 0, 0, 2, 2, 3], [0, 1, 1, 2, 2, 3], [None] * 6)
    assert uniform_offsets(tree) == [0, 1, 2, 3, 4, 4]
    assert walkable(tree) == [0, 2, 3]
    assert walkable(tree, 2) == [2, 3] and walkable(tree, 1) == [1]
