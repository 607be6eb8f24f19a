"""Wrong variants of the categorical palettes (specviz/render/draw.py): colours that merge for colour-blind viewers."""
from specviz.render import draw
from tests.render.test_palette_cvd import palettes_stay_apart
from tests.support.mutants import Mutant

VARIANTS = [
    Mutant("palette: History compare green/red",
           lambda mp: mp.setattr(draw, "DIFF_RGB", ((46, 160, 67), (215, 48, 39))), (palettes_stay_apart,)),
    Mutant("palette: decisions' exact green beside relaxed orange",
           lambda mp: mp.setattr(draw, "DECISION_RGB", {**draw.DECISION_RGB, "exact": (46, 160, 67),
                                                         "relaxed": (242, 169, 0)}), (palettes_stay_apart,)),
    Mutant("palette: groups' grey beside teal", lambda mp: mp.setattr(draw, "GROUP_RGB", (
        (96, 102, 116), (0, 150, 160), (240, 120, 30), (150, 80, 200))), (palettes_stay_apart,)),
]
