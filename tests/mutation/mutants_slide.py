"""Wrong variants of the keyed slide, the video's header and the export names (specviz/render/figures.py, video.py,
exports.py)."""
import tempfile
from pathlib import Path

from specviz.render import exports, figures, video
from tests.render.test_keyed_slide import export_names_carry_the_noise, header_fits, ten_rows_clear
from tests.support.mutants import Mutant


def _export_names():
    """the export check in a temporary folder of its own (the detector protocol has no fixtures)."""
    with tempfile.TemporaryDirectory() as d:
        export_names_carry_the_noise(Path(d))


def _rotated(ax, text):
    """the row label rotated along the image's side (as it was: three lines ran into the next row)."""
    ax.set_ylabel(text, fontsize=figures.LABEL_PT)


VARIANTS = [
    Mutant("slide: row labels rotated along the image", lambda mp: mp.setattr(figures, "label_row", _rotated),
           (ten_rows_clear,)),
    Mutant("video: header at 24 px whatever its length",
           lambda mp: mp.setattr(video, "fitting_px", lambda d, text, width, largest=24, smallest=12: 24),
           (header_fits,)),
    Mutant("exports: names without the noise", lambda mp: mp.setattr(exports, "noise_tag", lambda config: ""),
           (_export_names,)),
]
