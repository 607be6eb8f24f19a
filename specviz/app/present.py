"""The page's look: legible text at any zoom, tables that wrap, a regular grid of lanes, the inspector always in
view (docked beside the race after a click, in both layouts; its × or Escape closes it), and Present mode — one
screen for a projector (race, the inspected lane's map and the inspector side by side, the setup controls folded
away). Present mode is a class on <body>: the 'Present mode' checkbox, the URL `?present=1` or the `p` key toggle
it; the only Python state that depends on it is which lane the maps draw (app/follow.map_lane: the inspected
cell's, else `lead_lane`)."""
from __future__ import annotations

import json
import re
from html import escape

CSS = """
/* legible everywhere: page text >= 15 px, our own fragments 15-16 px */
.sv-lane {font-size: 15px; line-height: 1.35; padding: 2px 4px;}
.sv-lane-title {font-size: 17px; font-weight: 700; margin: 2px 4px; overflow-wrap: anywhere;}
.sv-status {font-size: 15px;}
.sv-sub, .sv-kind {font-size: 14px;}
.sv-bar, .sv-t, .sv-prev {font-size: 14px;}
.sv-verdict {font-size: 16px; line-height: 1.4; margin: 4px 0 8px 0; padding: 6px 8px; border-left: 4px solid #f2a900;
             background: #fff8e6; color: #111;}
.sv-plain {font-size: 16px; line-height: 1.4; margin: 4px 0 2px 0; color: #222;}
/* tables wrap instead of clipping */
.sv-t {border-collapse: collapse; max-width: 100%; table-layout: auto;}
.sv-t td, .sv-t th {white-space: normal; overflow-wrap: break-word; padding: 1px 4px;}
.sv-bv {width: 86px !important; white-space: nowrap;}
.sv-cols {display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 16px;}
.sv-insp {overflow-wrap: break-word;}
#summary table td, #summary table th, #history table td, #history table th {white-space: normal !important;}
/* the lanes: one regular grid, however many methods */
#lanes {display: grid !important; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px;}
#lanes > div {min-width: 0 !important; width: auto !important;}
/* the inspector stays in view after a click: docked as a column beside the race (sticky, scrolling on its own), so it
   covers no control; its × or Escape closes it and the race takes the width back */
#main:has(#inspector .sv-insp:not([style*="none"])) {display: grid !important; column-gap: 14px;
    align-items: start; grid-template-columns: minmax(0, 1fr) minmax(380px, 26vw);}
#main:has(#inspector .sv-insp:not([style*="none"])) > * {grid-column: 1;}
#main:has(#inspector .sv-insp:not([style*="none"])) > #inspector {grid-column: 2; grid-row: 1 / span 6;
    min-width: 0; align-self: start; position: sticky; top: 8px; max-height: calc(100vh - 96px); overflow-y: auto;
    border-left: 1px solid #ddd;}
/* Gradio's container clips with overflow: hidden, which makes it a scroll container and keeps every sticky column
   (the inspector, the controls) from sticking to the window; clip hides the same overflow without that */
.gradio-container {overflow: clip !important;}
/* compact tab labels (the tab bars wrap rather than hide tabs behind a menu: app.py) */
#tabs button[role=tab] {padding-left: 8px !important; padding-right: 8px !important;}
#inspector .sv-insp {padding: 0 4px 0 8px;}
#inspector .sv-t {font-size: 13px;}
#inspector .sv-t td, #inspector .sv-t th {padding: 1px 2px;}
/* a docked column too narrow for the event table (present.JS sets sv-narrow): as in Present mode, the level, p(x)
   and TV(p, r) columns go (the deciding draft's bars above keep p(x) and both TVs) */
#inspector.sv-narrow .sv-t {font-size: 12px;}
#inspector.sv-narrow .sv-t tr > :nth-child(2), #inspector.sv-narrow .sv-t tr > :nth-child(5),
#inspector.sv-narrow .sv-t tr > :nth-child(9) {display: none;}
/* a picture's download / fullscreen buttons sit in a strip above it, never over a cell */
#lanes .icon-button-wrapper, #tabs .icon-button-wrapper {position: static !important; justify-content: flex-end;
    margin: 0 0 2px auto; width: fit-content;}
#inspector .sv-cols {grid-template-columns: minmax(0, 1fr);}
.sv-close {float: right; cursor: pointer; font-size: 22px; line-height: 1; padding: 0 4px; color: #555;}
"""

# Present mode overrides. Gradio also adds a copy of every rule prefixed with its container classes, which outranks
# a body.sv-present selector, so every declaration here is made !important.
PRESENT = """
/* Present mode: one screen, larger type */
body.sv-present #intro, body.sv-present #examples, body.sv-present #setup, body.sv-present #methods,
body.sv-present #seed_model {display: none !important;}
body.sv-present #controls {min-width: clamp(190px, 14vw, 280px) !important; max-width: clamp(190px, 14vw, 280px);}
body.sv-present #controls label span, body.sv-present #controls .block-info {font-size: clamp(11px, 0.75vw, 14px);}
body.sv-present .sv-lane {font-size: clamp(12px, 0.85vw, 16px);}
body.sv-present .sv-lane .sv-kind, body.sv-present .sv-lane .sv-count,
body.sv-present .sv-lane .sv-secs {display: none;}
body.sv-present .sv-status {font-size: clamp(13px, 0.9vw, 18px);}
/* the inspector's column takes room only once a click opened an inspection (its × folds it again): before that the
   lanes and the map have the width */
body.sv-present #main {display: grid !important; grid-template-columns: minmax(0, 1fr); column-gap: 14px;
                       align-items: start;}
body.sv-present #main:has(#inspector .sv-insp:not([style*="none"])) {
    grid-template-columns: minmax(0, 1fr) minmax(350px, 28vw);}
body.sv-present #main:not(:has(#inspector .sv-insp:not([style*="none"]))) > #inspector {display: none;}
body.sv-present #main > * {grid-column: 1;}
/* the controls at a 150 % screen's 720 CSS px: every knob's label is its short name, whole, on one line (present.js
   sets data-short: λ, δ, τ_pos, τ_seq, Noise; the full label is its tooltip and stays its accessible name; the normal
   layout shows it whole), the noise radio's choices on one row, Generate and Stop on one row, the slider hint folded,
   so all four sliders are in view (tests/browser/test_browser_present_first.py) */
body.sv-present #controls [data-testid=block-info] {display: block; white-space: nowrap; max-width: 100%;}
body.sv-present #controls [data-short] {font-size: 0;}
body.sv-present #controls [data-short]::before {content: attr(data-short); font-size: clamp(12px, 0.8vw, 15px);}
body.sv-present #controls .sv-sub {display: none;}
body.sv-present #controls label:has(> [data-testid=block-info]), body.sv-present #controls .head {min-width: 0;
                                                                                                  max-width: 100%;}
body.sv-present #controls .block {padding-top: 3px; padding-bottom: 3px;}
body.sv-present #controls .form {gap: 0;}
body.sv-present #noise .wrap {flex-wrap: nowrap; gap: 6px;}
body.sv-present #noise .wrap label {padding: 2px 8px; min-width: 0;}
body.sv-present #controls .row:has(#generate) {flex-wrap: nowrap; gap: 6px;}
body.sv-present #generate, body.sv-present #stop {min-width: 0; padding-left: 4px; padding-right: 4px;}
body.sv-present #main > #inspector {grid-column: 2; grid-row: 1 / span 6; border-left: 1px solid #ddd; min-width: 0;
                                    align-self: start; position: sticky; top: 8px; max-height: calc(100vh - 40px);
                                    overflow-y: auto;}
body.sv-present #inspector .sv-t {font-size: 12px; width: 100%;}
body.sv-present #inspector .sv-t td, body.sv-present #inspector .sv-t th {padding: 1px 2px;}
body.sv-present #inspector.sv-narrow .sv-t {font-size: 11px;}     /* a 150 % screen's column: the table still fits */
body.sv-present #inspector .sv-t tr > :nth-child(2), body.sv-present #inspector .sv-t tr > :nth-child(9),
body.sv-present #inspector .sv-t tr > :nth-child(5) {display: none;}
body.sv-present #inspector .sv-insp {position: static; width: auto; max-height: none; box-shadow: none; border: 0;
                                     padding: 0 4px;}
body.sv-present #tabs img {height: var(--sv-map-h, 31vh); max-height: none; width: auto; max-width: 100%;}
body.sv-present #opacity {display: none !important;}
body.sv-present #lanes .block, body.sv-present #lanes .html-container {padding: 0 2px;}
body.sv-present #main {row-gap: 4px;}
body.sv-present #lanes {gap: 8px;}            /* columns and picture size: app/pinned.py fits them */
/* the fit's narrowest grid (app/pinned.JS, twelve lanes beside the inspector at 1280 px): each lane says only its
   step compression, the status line says where the knob values are */
body.sv-present #lanes.sv-bare .sv-knobs {display: none;}
body.sv-present #main:has(#lanes.sv-bare) #status .sv-status::after {
    content: " N×: step compression, knob values: p (the normal layout).";}
/* a lecture hall: large type (lane titles and verdict 24 px at 1920 px wide), short one-line titles, no buttons
   over a picture, no footer: the page is one screen */
body.sv-present footer {display: none;}
body.sv-present #tabs button {padding-top: 1px; padding-bottom: 1px; min-height: 0;}
/* each tab bar on one line beside the docked inspector (a wrapped bar costs the lanes a row of height) */
body.sv-present #tabs button[role=tab] {font-size: clamp(12px, 0.85vw, 16px); padding-left: 4px;
                                        padding-right: 4px;}
body.sv-present #present {flex: 0 1 auto; min-width: 0; width: auto;}     /* the status line gets the row's width */
body.sv-present .gradio-container, body.sv-present .gradio-container .main, body.sv-present .gradio-container .wrap,
body.sv-present .gradio-container .contain {padding-bottom: 0; margin-bottom: 0; min-height: 0;}
body.sv-present #controls {max-height: calc(100vh - 40px);}
body.sv-present .sv-more, body.sv-present .sv-mem {display: none;}
body.sv-present .sv-lane-title {font-size: clamp(16px, 1.25vw, 26px); white-space: nowrap;}
body.sv-present .sv-verdict {font-size: clamp(16px, 1.25vw, 26px); line-height: 1.3;}
body.sv-present .sv-insp {font-size: clamp(14px, 0.9vw, 18px);}
body.sv-present .sv-plain {font-size: clamp(16px, 1.1vw, 22px); line-height: 1.3;}
body.sv-present #lanes .icon-button-wrapper, body.sv-present #tabs .icon-button-wrapper {display: none;}
body.sv-present #inspector .sv-t td, body.sv-present #inspector .sv-t th {overflow-wrap: normal; word-break: normal;}
"""


def important(css: str) -> str:
    """Every declaration of `css` marked !important (those already marked stay as they are)."""
    return re.sub(r"([^;{}\s][^;{}]*?)(?<!!important)\s*;", r"\1 !important;", css)


CSS = CSS + important(PRESENT)

# on load: ?present=1 switches Present mode on; the `p` key (outside text fields) toggles it; keyboard commits
JS = """
() => {
  const box = () => document.querySelector('#present input[type=checkbox]');
  const want = new URLSearchParams(window.location.search).get('present');
  if (want === '1' || want === 'true') {
    const tryOn = () => { const b = box(); if (b) { if (!b.checked) b.click(); } else setTimeout(tryOn, 100); };
    tryOn();
  }
  // the docked inspector closes with its × or Escape (a new click opens it again)
  const close = () => document.querySelectorAll('#inspector .sv-insp').forEach(x => { x.style.display = 'none'; });
  document.addEventListener('click', (e) => { if (e.target.closest && e.target.closest('.sv-close')) close(); });
  // each knob control's short name (Present mode's CSS shows it in place of the label), its full label the tooltip
  const SHORT = __SHORT__;
  const shorten = () => Object.entries(SHORT).forEach(([id, s]) => {
    const el = document.querySelector('#' + id + ' [data-testid=block-info]');
    if (el && el.dataset.short !== s) { el.title = el.textContent.trim(); el.dataset.short = s; }
  });
  shorten();
  // the prompt box fitted to its text (Gradio sizes a textbox only on input): after Present mode toggles (TOGGLE)
  // and after the window is resized, when its column's width changes the lines the prompt wraps onto
  window._svFitPrompt = () => document.querySelectorAll('#prompt textarea').forEach(t => {
    t.style.height = 'auto'; t.style.height = (t.scrollHeight + 2) + 'px'; });
  let resized;
  window.addEventListener('resize', () => { clearTimeout(resized); resized = setTimeout(window._svFitPrompt, 250); });
  // a new inspection starts at its verdict: the docked column scrolls to its top, the page to the verdict if needed
  let seen = null;
  new MutationObserver(() => {
    shorten();
    const v = document.querySelector('#sv-verdict'), col = document.querySelector('#inspector');
    if (!v || v === seen) return;
    seen = v;
    col.scrollTop = 0;
    col.classList.remove('sv-narrow');
    const t = col.querySelector('.sv-t');
    if (t && t.getBoundingClientRect().right > col.getBoundingClientRect().right) col.classList.add('sv-narrow');
    const r = v.getBoundingClientRect();     // (not once the user scrolled since the last click: app/pinned.py)
    if ((window._svScrolledAt || 0) > (window._svActedAt || 0)) return;
    if (r.top < 0 || r.bottom > window.innerHeight) v.scrollIntoView({block: 'nearest'});
  }).observe(document.body, {childList: true, subtree: true});
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') close();
    const el = e.target, t = el.tagName;
    if (e.key === 'p' && !e.ctrlKey && !e.metaKey && !e.altKey && t !== 'INPUT' && t !== 'TEXTAREA') {
      const b = box(); if (b) b.click();
    }
    // keyboard commits re-run like releasing the mouse: Enter in a slider's number box (Gradio releases a slider
    // when its number box loses focus), arrow keys on the slider itself after a 600 ms pause (Gradio releases on
    // pointerup)
    const slider = t === 'INPUT' && el.closest('.block') && el.closest('.block').querySelector('input[type=range]');
    if (!slider) return;
    if (e.key === 'Enter' && el.type === 'number') { el.blur(); }
    if (el.type === 'range' && ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home',
                                'End'].includes(e.key)) {
      clearTimeout(el._svCommit);
      el._svCommit = setTimeout(() => el.dispatchEvent(new PointerEvent('pointerup', {bubbles: true})), 600);
    }
  });
}
"""

def js(knobs) -> str:
    """JS with the short names of the controls of `knobs` (core.knobs.Knob records: their elem_id is their name)."""
    return JS.replace("__SHORT__", json.dumps({k.name: k.short for k in knobs}, ensure_ascii=False))


def lead_lane(methods, cards) -> str:
    """The lane Present mode's maps draw before any click: the first of `methods` whose record relaxes (drafts and is
    not lossless: the Changed-vs-AR map has something to show), else the first that drafts, else the first."""
    methods = list(methods)
    drafting = [m for m in methods if cards.of(m).drafts]
    return next((m for m in drafting if not cards.of(m).lossless), drafting[0] if drafting else methods[0])


def lane_title(label: str) -> str:
    """A lane's title: the method's label, its parenthesised part (if any) in a span Present mode hides, so a title
    stays on one line at a lecture hall's size ("CSD (content-aware)" -> "CSD")."""
    head, sep, rest = label.partition(" (")
    more = f"<span class='sv-more'> ({escape(rest)}</span>" if sep else ""
    return f"<div class='sv-lane-title'>{escape(head)}{more}</div>"


# the checkbox's own listener: runs in the browser only; Present mode starts at the top (the one screen it lays out).
# The prompt box is re-fitted to its text once the new layout has settled (JS's _svFitPrompt): Gradio sizes a textbox
# only on input, so the narrower Present-mode column would otherwise cut the prompt's last line.
TOGGLE = ("(on) => { document.body.classList.toggle('sv-present', !!on); if (on) window.scrollTo(0, 0);"
          " setTimeout(() => window._svFitPrompt && window._svFitPrompt(), 300); return []; }")
