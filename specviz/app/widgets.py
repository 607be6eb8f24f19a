"""Input components that refuse malformed API payloads with one clear gr.Error.

Gradio checks ranges and choices, but a payload of the wrong JSON type (a string for a slider, null for a checkbox
group, NaN for a seed) fails inside its preprocess with a bare exception, which a client sees only as "the app raised
an exception". These drop-in subclasses (same names, so the browser renders the stock components) check the payload's
type and finiteness first and name the control in the message.
"""
from __future__ import annotations

import copy
import io
import os
import struct
import zlib
from pathlib import Path

import gradio as gr
import numpy as np
from gradio.data_classes import ImageData
from gradio.processing_utils import hash_bytes
from PIL import Image as PILImage

from specviz.core.numbers import finite_number

_API_INFO: dict = {}


class _Info:
    """Mixin: a component's API schema, computed once per (class, choices). Gradio re-derives it (pydantic's
    model_json_schema, a few ms) every time an output of a streamed event is skipped — gr.skip() takes its
    prop-update path and re-instantiates the component — and /generate skips ~40 outputs per frame."""

    def api_info(self):
        key = (type(self), repr(getattr(self, "choices", None)))
        if key not in _API_INFO:
            _API_INFO[key] = super().api_info()
        return copy.deepcopy(_API_INFO[key])


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


class _Checked(_Info):
    """Mixin: `accepts(payload)` says whether the JSON payload has the right shape; then the stock preprocess."""
    expect = "a value"
    nullable = False

    def accepts(self, payload) -> bool:
        return True

    def preprocess(self, payload):
        if not (payload is None and self.nullable) and not self.accepts(payload):
            raise gr.Error(f"{self.label or 'input'}: expected {self.expect}, got {_short(payload)}")
        try:
            return super().preprocess(payload)
        except gr.Error as e:                           # Gradio's own range / choice messages: name the control
            raise gr.Error(f"{self.label or 'input'}: {e.message}") from None
        except Exception:                               # noqa: BLE001 - any other refusal reads the same
            raise gr.Error(f"{self.label or 'input'}: cannot use {_short(payload)}") from None


class Slider(_Checked, gr.Slider):
    expect = "a finite number"

    def accepts(self, payload) -> bool:
        return finite_number(payload)


class Number(_Checked, gr.Number):
    nullable = True                                     # an emptied field: the handler says which one is empty

    @property
    def expect(self) -> str:
        return "a whole number" if self.precision == 0 else "a finite number"

    def accepts(self, payload) -> bool:                 # precision 0 would round 0.5 silently: refuse it instead
        return finite_number(payload) and (self.precision != 0 or float(payload).is_integer())


class _Name(_Checked):
    expect = "one name"
    nullable = True

    def accepts(self, payload) -> bool:
        return isinstance(payload, str)


class Textbox(_Name, gr.Textbox):
    expect = "text"


class Radio(_Name, gr.Radio):
    """A choice (Gradio checks it against the choices)."""


class Dropdown(_Name, gr.Dropdown):
    """A choice (Gradio checks it against the choices, or allows custom values when asked)."""


class CheckboxGroup(_Checked, gr.CheckboxGroup):
    expect = "a list of names"

    def accepts(self, payload) -> bool:
        return isinstance(payload, list) and all(isinstance(v, str) for v in payload)


# outputs of the streamed events (same names as Gradio's, so the browser renders the stock components)
class Image(_Info, gr.Image):
    """PNG outputs encoded once per picture and fast: rows unfiltered, zlib level 1 (_png), and a picture sent again
    unchanged (a finished lane, the maps between refreshes) reuses its file. Gradio's own encoding (Pillow, level 6,
    adaptive filters, every time) took 0.32 s of a 1.9 s four-method run here (py-spy, 2026-12-01); Pillow at level 1
    still spent 12-18 ms on one 1192x340 heatmap composite, _png 6-7 ms (files about as large: flat colours
    compress well either way). Same cache layout as Gradio's own.

    Pruning: Gradio deletes old cache files through the `temp_files` sets of the app's own components. An update of
    an output (gr.skip() included) replaces the component in that session's state by a copy built outside the Blocks,
    whose set nobody prunes: its files stayed for ever (scripts/soak.py). A copy uses its original's set instead
    (registered by safe_pruning). No __init__ here: Gradio builds a component's config from its __init__ signature.
    """

    @property
    def temp_files(self):
        own = self.__dict__.get("_own_temp_files")
        if own is None or getattr(self, "is_rendered", True) or getattr(self, "elem_id", None) not in _PRUNED:
            return own
        return _PRUNED[self.elem_id]                    # a session's copy (render=False): the app's own set

    @temp_files.setter
    def temp_files(self, files):
        self.__dict__["_own_temp_files"] = files

    def postprocess(self, value):
        if not isinstance(value, PILImage.Image) or self.format != "png" or _watermarked(self):
            return super().postprocess(value)
        path = value.info.get("specviz_png")
        if not path or not Path(path).exists():
            data = _png(value)
            folder = Path(self.GRADIO_CACHE) / hash_bytes(data)
            folder.mkdir(parents=True, exist_ok=True)
            path = str((folder / "image.png").resolve())
            Path(path).write_bytes(data)
            value.info["specviz_png"] = path
        return ImageData(path=path, orig_name="image.png")


_PRUNED: dict = {}          # elem_id -> temp_files set of the app's own Image (the last app built in this process)


class SnapshotSet(set):
    """A set that iterates over a copy of itself. Gradio's cache sweep (route_utils.delete_files_created_by_app,
    every `frequency` s in a thread) iterates each component's temp_files set while handler threads add the files
    they write; the first "Set changed size during iteration" killed the sweep task silently and nothing was ever
    pruned again (scripts/soak.py, a long streamed run). set.copy runs under the GIL: no add interleaves."""

    def __iter__(self):
        return iter(set.copy(self))

    def __isub__(self, removed):
        """The sweep drops the files it deleted, in one step at the end; one written again meanwhile (the same
        picture sent again: its content-addressed path) stays tracked, else nothing would ever delete it."""
        return set.__isub__(self, {f for f in removed if not os.path.exists(f)})


def safe_pruning(demo) -> None:
    """Give every component of `demo` (a built gr.Blocks) a SnapshotSet of temp files, in the list Gradio sweeps."""
    swaps = {}
    for block in demo.blocks.values():
        old = getattr(block, "temp_files", None)
        if type(old) is set:
            block.temp_files = swaps[id(old)] = SnapshotSet(old)
    demo.temp_file_sets[:] = [swaps.get(id(t), t) for t in demo.temp_file_sets]
    for block in demo.blocks.values():                  # session copies of these Images use their sets
        if isinstance(block, Image) and block.elem_id is not None and block.is_rendered:
            _PRUNED[block.elem_id] = block.temp_files
_PNG_TYPES = {"L": (1, 0), "RGB": (3, 2), "RGBA": (4, 6)}       # mode -> (channels, PNG colour type)


def _png(img: PILImage.Image) -> bytes:
    """Lossless 8-bit PNG bytes of `img`: every row with filter 0 (none), one zlib level-1 stream. Other modes go
    through Pillow at level 1."""
    if img.mode not in _PNG_TYPES:
        buf = io.BytesIO()
        img.save(buf, "png", compress_level=1)
        return buf.getvalue()
    channels, colour = _PNG_TYPES[img.mode]
    w, h = img.size
    rows = np.zeros((h, w * channels + 1), np.uint8)            # a leading 0 per row: filter type none
    rows[:, 1:] = np.asarray(img, np.uint8).reshape(h, w * channels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)) + chunk(b"IEND", b""))


def _watermarked(image) -> bool:
    """Whether Gradio would draw a watermark: 6.x always holds a WatermarkOptions, whose `watermark` is None when
    there is none (comparing the options object itself with None made the fast path above never run)."""
    wm = image.watermark
    return wm is not None and getattr(wm, "watermark", wm) is not None


class File(gr.File):
    """gr.File whose upload leaves no empty file behind: Gradio 6.31's preprocess (type "filepath") opens a
    NamedTemporaryFile(delete=False) in the cache for every uploaded file and never uses or deletes it; nothing prunes
    those (one per opened trace, scripts/soak.py)."""

    def _process_single_file(self, f):
        if self.type != "filepath":
            return super()._process_single_file(f)
        # gradio's upload internals, needed only for a filepath upload
        from gradio.utils import NamedString
        from gradio_client import utils as client_utils
        if self.file_types and not client_utils.is_valid_file(f.path, self.file_types):
            raise gr.Error("Invalid file type. Please upload a file that is one of these formats: "
                           f"{self.file_types}")
        return NamedString(f.path)


class HTML(_Info, gr.HTML):
    pass


class Markdown(_Info, gr.Markdown):
    pass


class Dataframe(_Info, gr.Dataframe):
    pass


class Plot(_Info, gr.Plot):
    pass


def knob_control(k, value):
    """The app's control for a registry knob (`k`, a core.knobs.Knob) at `value`: a radio for choices, else a slider
    over the knob's UI range."""
    if k.choices:
        return Radio(list(k.choices), value=value, label=k.label, elem_id=k.name)
    lo = k.ui_lo if k.ui_lo is not None else k.lo
    hi = k.ui_hi if k.ui_hi is not None else k.hi
    return Slider(lo, hi, value, step=k.step, label=k.label, elem_id=k.name)
