"""The app's Replay tab: a finished race replayed on its own clock of target forwards. One scrubber (the clock k = 0 ..
T, T = the slowest lane's forwards) and a Play / Pause button (a gr.Timer, active only while playing, advances the
clock by one value per tick and stops by itself at T) drive one picture of every lane at clock k — the race film's
frame (render/video.draw_frame) with each lane's drafts of its step k - 1 drawn as faded patches of their codes. Beside
it, the Run radio picks whose step details follow the same clock (clock k -> that method's step k - 1, clamped to its
own steps): the step's caption and its draft tree (chains: the step's decisions on the grid). A click on a lane's cell
opens the inspector for that lane's cell.

Handlers take and return dicts keyed by component name (app/edge.py). app.py calls `layout` inside its tab, and
handlers._finish calls `Replay.start` once a run (or an opened set of traces) is finished."""
from __future__ import annotations

import gradio as gr
from PIL import Image

from specviz.analysis import views
from specviz.analysis.patches import patches
from specviz.app import follow
from specviz.app import widgets as w
from specviz.app.edge import wire as bind
from specviz.app.errors import friendly
from specviz.app.follow import inspecting
from specviz.render import draw, frame_layout, panels, tree_picture, video

TICK_S = 0.2                        # Play: at most five clock values a second (a tick that is still drawing drops
#                                     the next ones: Gradio's default trigger_mode "once")
PLAY, PAUSE = "Play", "Pause"       # plain words: the media glyphs (⏸) need an emoji font, absent on many machines
LEGEND = ("Every lane at the same clock: after k of its own target forwards (a lane that finished at forward F says "
          "“done at forward F” from then on). Hatched: not committed yet. Faded: what the lane drafted at its k-th "
          "forward and has not committed (a proposal, not a commitment). Click a cell to inspect it.")
START = "Nothing has happened yet: every lane is hatched. Press Play or drag the clock."


def layout(c: dict) -> None:
    """The clock's controls, the picture, the Run radio and its caption on the left; the step's tree and its legend
    on the right (below the left when the page is narrow; Present mode sizes both to one screen: app/replay_fit.py)."""
    w.Markdown(LEGEND, elem_classes="sv-sub", elem_id="replay_legend")
    with gr.Row(elem_id="replay_body"):
        with gr.Column(scale=3, min_width=640, elem_id="replay_left"):
            with gr.Row(equal_height=True, elem_id="replay_controls"):
                c["replay_play"] = gr.Button(PLAY, elem_id="replay_play", scale=0, min_width=120)
                c["replay_step"] = w.Slider(0, 1, 0, step=1, label="Clock (target forwards): every lane after k of "
                                             "its own", elem_id="replay_step")
            c["replay_timer"] = gr.Timer(TICK_S, active=False)
            c["replay_playing"] = gr.State(False)
            c["replay_image"] = w.Image(format="png", type="pil", interactive=False, show_label=False,
                                         buttons=["download", "fullscreen"], elem_id="replay_image")
            c["replay_method"] = w.Radio([], label="Step details of", elem_id="replay_method")
            c["replay_caption"] = w.Markdown(elem_id="replay_caption")
        with gr.Column(scale=2, min_width=480, elem_id="replay_right"):
            # a heading of our own, not Gradio's label: that one floats over the tree's level-1 header
            w.Markdown("**This step: draft tree or decisions**", elem_classes="sv-sub", elem_id="replay_heading")
            c["replay_tree"] = w.Image(format="png", type="pil", interactive=False, show_label=False,
                                        buttons=["download", "fullscreen"], elem_id="replay_tree")
            c["replay_tree_legend"] = w.HTML(elem_id="replay_tree_legend")


def wire(r: "Replay", c: dict):
    """The Replay tab's events; returns the click on the replay picture (it inspects a cell)."""
    def pick(*names) -> dict:
        return {n: c[n] for n in names}
    quick = dict(concurrency_id="preview", concurrency_limit=4, show_progress="hidden", api_visibility="private")
    shown = pick("replay_image", "replay_caption", "replay_tree", "replay_tree_legend")
    clock = pick("state", "replay_method", "replay_step")
    bind(c["replay_step"].change, r.scrub, clock | pick("replay_playing"), shown, trigger_mode="always_last",
         **quick)                                                  # a drag or a typed value; while playing the tick
    bind(c["replay_method"].change, r.pick, clock, pick("replay_caption", "replay_tree", "replay_tree_legend"),
         **quick)                                                  # draws
    controls = pick("replay_timer", "replay_playing", "replay_play", "replay_step") | shown
    bind(c["replay_play"].click, r.play, clock | pick("replay_playing"), controls, **quick)
    bind(c["replay_timer"].tick, r.tick, clock, controls, **quick)
    return c["replay_image"].select(r.inspect, [c["state"]], [c["inspector"], c["focus"]], **follow.CLICK)


class Replay:
    def __init__(self, backend):
        self.backend = backend
        self._patches = (None, None)        # (model, its decoded code patches): the last model's only, so a model the
        #                                     backend let go is not kept alive here
        self._largest = (None, (0, 0))      # (trace, its largest step picture's size): the last trace's only

    def start(self, st) -> dict:
        """A finished run: the Run radio on the first speculative method, the clock at 0 over 0..T."""
        first = next((m for m in st.traces if m != "ar"), next(iter(st.traces)))
        k = gr.Slider(minimum=0, maximum=video.slowest(st.traces), value=0, step=1, interactive=True)
        return {"replay_method": gr.Radio(choices=list(st.traces), value=first), "replay_step": k} | \
            self.view(st, first, 0)

    @friendly
    def scrub(self, inputs: dict) -> dict:
        """The clock moved: {state, replay_method, replay_step, replay_playing} -> picture and details. While playing
        nothing: the tick that moved the clock sent its picture with the new value (drawing it here as well made
        the picture trail the clock, each tick's drawing queued behind the previous ones)."""
        st = inputs["state"]
        if inputs.get("replay_playing"):
            return {}
        if not st or not st.traces:
            return {"replay_caption": "Generate first, then scrub through the run."}
        return self.view(st, inputs["replay_method"], int(inputs["replay_step"] or 0))

    @friendly
    def pick(self, inputs: dict) -> dict:
        """Another run's details at the same clock: {state, replay_method, replay_step} -> caption and tree."""
        st = inputs["state"]
        if not st or inputs["replay_method"] not in st.traces:
            return {}
        return self.details(st, inputs["replay_method"], int(inputs["replay_step"] or 0))

    @friendly
    def play(self, inputs: dict) -> dict:
        """Play / Pause: {state, replay_method, replay_step, replay_playing}. Play at the end starts again from clock
        0 (drawn here: while playing, the clock's change draws nothing)."""
        st, k = inputs["state"], int(inputs["replay_step"] or 0)
        if inputs["replay_playing"] or not st or not st.traces:
            return stopped()
        again = {"replay_step": 0} | self.view(st, inputs["replay_method"], 0) if k >= video.slowest(st.traces) \
            else {}
        return {"replay_timer": gr.Timer(active=True), "replay_playing": True, "replay_play": PAUSE} | again

    @friendly
    def tick(self, inputs: dict) -> dict:
        """One Play tick: {state, replay_method, replay_step} -> the clock on to the race video's next frame
        (video.clock: one forward a tick, or more in a race of over MAX_FRAMES forwards, so Play lasts at most
        MAX_FRAMES ticks) together with that clock value's picture and details, so they arrive in one update; at T
        the timer stops."""
        st, k = inputs["state"], int(inputs["replay_step"] or 0)
        if not st or not st.traces or k >= video.slowest(st.traces):
            return stopped()
        nxt = next(v for v in video.clock(st.traces) if v > k)
        return {"replay_step": nxt} | self.view(st, inputs["replay_method"], nxt) | \
            (stopped() if nxt >= video.slowest(st.traces) else {})

    def view(self, st, method: str, k: int) -> dict:
        """Clock k: every lane in one picture, and `method`'s step details."""
        img = video.draw_frame(st.traces, st.images, k, video.lane_labels(st.traces, st.cards), size=frame_size(st),
                               drafts=self.drafts(st))
        return {"replay_image": Image.fromarray(img)} | self.details(st, method, k)

    def details(self, st, method: str, k: int) -> dict:
        """`method` at clock k: its step k - 1 (clamped to its own steps) told in a line and drawn."""
        method = method if method in st.traces else next(iter(st.traces))
        t, total = st.traces[method], video.slowest(st.traces)
        head = f"**Clock: target forward {min(k, total)} of {total}.** "
        if k <= 0:
            return {"replay_caption": head + START, "replay_tree_legend": "",
                    "replay_tree": padded(draw.message("No step yet (clock 0)", 360), self.largest(t))}
        step = min(k, len(t.steps)) - 1
        done = f"{method} is done at forward {len(t.steps)}; its last forward: " if k > len(t.steps) else ""
        return {"replay_caption": head + done + views.step_caption(t, views.step_view(t, step))} | \
            self.step_picture(st, method, step)

    def step_picture(self, st, method: str, step: int) -> dict:
        """The step's draft tree (thumbnails decoded by the run's model) and its legend, or for a chain the step on
        the grid (its legend drawn inside)."""
        t = st.traces[method]
        layout = tree_picture.tree_layout(t, step)
        if layout is None:
            return {"replay_tree": padded(panels.replay_image(t, st.images.get(method), step)[0], self.largest(t)),
                    "replay_tree_legend": ""}
        return {"replay_tree": padded(tree_picture.draw_tree(layout, self.patch(st)), self.largest(t)),
                "replay_tree_legend": tree_picture.legend_html(layout)}

    def largest(self, t) -> tuple[int, int]:
        """The size every step picture of `t` is padded to: the largest of its trees (and of its grid picture when a
        step has no tree), so the picture keeps one size over the whole replay and Present mode sizes the layout
        once (replay_fit.JS), for the largest tree. Memoised for the last trace."""
        if self._largest[0] is not t:
            sizes = [tree_picture.size(lay) for s in range(len(t.steps)) if (lay := tree_picture.tree_layout(t, s))]
            if len(sizes) < len(t.steps):
                sizes.append(panels.replay_image(t, None, 0)[0].size)
            self._largest = (t, (max(w for w, _ in sizes), max(h for _, h in sizes)))
        return self._largest[1]

    def drafts(self, st):
        """What draw_frame draws the drafts with: the run's decoded patches, else outlines (video.OUTLINE)."""
        return self.patch(st) or video.OUTLINE

    def patch(self, st):
        """code -> decoded patch from the run's model (memoised per model), or None when no image was decoded here
        (opened traces whose model is not offered) or the model does not load."""
        if not st.images:
            return None
        try:
            model = self.backend.load(st.model)[0]
        except Exception:                           # noqa: BLE001 - patches are optional: outlines instead
            return None
        if self._patches[0] is not model:
            self._patches = (model, patches(model))
        return self._patches[1]

    @friendly
    def inspect(self, st, evt: gr.SelectData):
        """A click on the synchronized picture -> (inspector, focus): that lane's cell."""
        if not st or not st.traces:
            return "<i>Generate first.</i>", None
        hit = video.locate_lane(st.traces, evt.index[0], evt.index[1], frame_size(st),
                                video.lane_labels(st.traces, st.cards))
        if not hit:
            return "<i>Click a cell of one of the lanes.</i>", None
        return inspecting(st.traces[hit[0]], hit[1], st.cards)


def frame_size(st) -> tuple[int, int]:
    """The synchronized picture's size: the page's width, as tall as the lanes and their last captions need."""
    return frame_layout.fit_size(len(st.traces), next(iter(st.traces.values())).grid,
                                 captions=video.final_captions(st.traces),
                                 names=video.lane_names(st.traces, video.lane_labels(st.traces, st.cards)))


def padded(pic: Image.Image, size: tuple[int, int]) -> Image.Image:
    """`pic` centred at the top of a white canvas of `size` (never cut: a larger side stays as it is)."""
    w, h = max(pic.width, size[0]), max(pic.height, size[1])
    if (w, h) == pic.size:
        return pic
    out = Image.new("RGB", (w, h), (255, 255, 255))
    out.paste(pic.convert("RGB"), ((w - pic.width) // 2, 0))
    return out


def stopped() -> dict:
    return {"replay_timer": gr.Timer(active=False), "replay_playing": False, "replay_play": PLAY}
