"""A keyboard path to the inspector: a lane picture or a map can be focused (Tab), inspected with Enter and moved
with the arrow keys; every control shows a visible focus ring. `KEYS_JS` labels each lane picture's button
(`#img_<method>`: tabindex 0, aria-label "<method> picture: Enter inspects, arrows move") and each map's
(`#map_<kind>`: "<title> map: Enter inspects, arrows move") and handles their keys: Enter inspects the cell under the
cursor (the inspected cell, else (0, 0)); an arrow moves the cursor one cell (clamped at the edges) and inspects
again; Escape leaves the picture (its focus; present.py's own Escape closes the inspector). A lane picture moves over
its own lane; a map over the inspected cell's lane (else the run's first lane), the lane the maps ring.
An inspection is a synthetic click on the lane's picture at the point Gradio 6.31's rule
(`scale = min(displayed / natural, 1)`, app/clicks.py) maps to the centre of the cell's pixels, so the lane's select
handler moves the inspector, the ring (every lane and map) and the Primer; clicks.py and bench.py leave synthetic
clicks alone (no correction, no scroll). The point is the centre of a pixel near the cell's centre (a synthetic
click's point is whole CSS px: a pixel's edge can read as the next one, or outside the picture). The grid is data on
the page: each lane's counters carry it (`#stats_<method> .sv-lane[data-grid="<rows>x<columns>"]`, render/html.py),
and the inspector its cell (`data-method`, `data-pos`). `KEYS_CSS` draws a 3 px outline with an offset on every
focused control (buttons, sliders, check boxes, radios, boxes, links, the lane pictures and maps).
tests/browser/test_browser_keys.py: Tab to a lane, Enter, ArrowRight x2, ArrowDown; the same on a map; the focus ring
by pixels.
"""
from __future__ import annotations

import json

LABEL = "{method} picture: Enter inspects, arrows move"
MAP_LABEL = "{map} map: Enter inspects, arrows move"
STEP = {"ArrowRight": (0, 1), "ArrowLeft": (0, -1), "ArrowDown": (1, 0), "ArrowUp": (-1, 0)}

KEYS_CSS = """
button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, a:focus-visible,
[tabindex]:focus-visible, input[type=range]:focus, input[type=checkbox]:focus-visible, input[type=radio]:focus-visible {
  outline: 3px solid #1f6feb !important; outline-offset: 2px !important;
}
[id^="img_"] .image-container button:focus-visible, [id^="map_"] .image-container button:focus-visible {
  outline-offset: -3px !important;}
"""

KEYS_JS = """
() => {
  const step = %(step)s;
  const PICTURES = ['[id^="img_"]', '#tab_maps [id^="map_"]'].map(p => `${p} .image-container button:has(img)`).join();
  const button = el => el && el.tagName === 'BUTTON' && el.matches(PICTURES);
  const label = () => document.querySelectorAll(PICTURES).forEach(b => {
    const lane = b.closest('[id^="img_"]'), m = lane && lane.id.slice(4);
    const tab = !lane && b.closest('[role=tabpanel]');
    const id = tab && tab.id && document.getElementById(`${tab.id}-button`);            // the map's tab: its title
    const l = lane ? %(label)s : %(map_label)s;
    if (b.getAttribute('tabindex') !== '0') b.setAttribute('tabindex', '0');
    if (b.getAttribute('aria-label') !== l) b.setAttribute('aria-label', l);
  });
  new MutationObserver(label).observe(document.body, {childList: true, subtree: true});
  label();
  const grid = m => {                                       // [rows, columns] of lane m: data on its counters
    const e = document.querySelector(`#stats_${m} .sv-lane[data-grid]`);
    const g = e && e.getAttribute('data-grid').split('x').map(Number);
    return g && g[0] > 0 && g[1] > 0 ? g : null;
  };
  const inspected = () => {                                 // [method, position] the inspector names, or null
    const e = document.querySelector('#inspector .sv-insp');
    return e ? [e.getAttribute('data-method'), Number(e.getAttribute('data-pos'))] : null;
  };
  const picture = m => document.querySelector(`#img_${m} .image-container button img`);
  const lane = b => {                        // the lane a picture moves over: its own; a map's: the inspected lane
    const own = b.closest('[id^="img_"]');
    if (own) return own.id.slice(4);
    const i = inspected();
    if (i && grid(i[0]) && picture(i[0])) return i[0];
    const first = [...document.querySelectorAll('#lanes > div')].map(c => c.id.slice(5))
      .find(m => m && document.getElementById(`lane_${m}`).offsetParent && grid(m) && picture(m));
    return first || null;
  };
  const press = (img, nx, ny) => {                           // a click Gradio's rule maps to natural pixel (nx, ny):
    const rect = img.getBoundingClientRect(), nat = {width: img.naturalWidth, height: img.naturalHeight};
    const r = Math.min(rect.width / nat.width, rect.height / nat.height, 1);   // its scale, at the pixel's centre
    const p = {x: rect.left + (rect.width - nat.width * r) / 2 + (nx + 0.5) * r,  // (a synthetic click's point is
               y: rect.top + (rect.height - nat.height * r) / 2 + (ny + 0.5) * r};  // whole px: a pixel's edge fails)
    img.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, composed: true, view: window,
      detail: 1, clientX: p.x, clientY: p.y}));
  };
  const inspect = (img, g, at) => {
    const cell = Math.floor(img.naturalWidth / g[1]);
    press(img, at[1] * cell + Math.floor(cell / 2), at[0] * cell + Math.floor(cell / 2));
  };
  window.addEventListener('keydown', e => {
    const b = e.target;
    if (!button(b)) return;
    if (e.key === 'Escape') { b._svAt = undefined; b.blur(); return; }
    if (!(e.key === 'Enter' || e.key === ' ' || step[e.key])) return;
    e.preventDefault(); e.stopImmediatePropagation();
    act(b, e.key);
  }, true);
  const act = (b, key) => {
    const m = lane(b), img = m && picture(m), g = m && grid(m);
    if (!img || !g) return;                                  // no run yet
    if (!img.complete || !img.naturalWidth) {                // a lazy picture not loaded yet: once loaded
      img.loading = 'eager';
      img.addEventListener('load', () => act(b, key), {once: true});
      return;
    }
    if (!step[key] || !b._svAt || b._svLane !== m) {        // Enter, or a first arrow: the inspected cell, else (0, 0)
      const i = inspected();
      b._svAt = i && i[0] === m ? [Math.floor(i[1] / g[1]), i[1] %% g[1]] : [0, 0];
      b._svLane = m;
    } else {
      const d = step[key];
      const to = (v, n) => Math.max(0, Math.min(n - 1, v));
      b._svAt = [to(b._svAt[0] + d[0], g[0]), to(b._svAt[1] + d[1], g[1])];
    }
    inspect(img, g, b._svAt);
  };
  window.addEventListener('focusout', e => { if (button(e.target)) e.target._svAt = undefined; }, true);
}
""" % dict(step=json.dumps({k: list(v) for k, v in STEP.items()}),
           label="`" + LABEL.replace("{method}", "${m}") + "`",
           map_label="`" + MAP_LABEL.replace("{map}", "${id ? id.textContent.trim() : 'a'}") + "`")
