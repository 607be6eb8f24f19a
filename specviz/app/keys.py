"""A keyboard path to the inspector: a lane picture can be focused (Tab), inspected with Enter and moved with the arrow
keys; every control shows a visible focus ring. `KEYS_JS` labels each lane picture's button
(`#img_<method>`: tabindex 0, aria-label "<method> picture: Enter inspects, arrows move") and handles its keys: Enter
inspects the cell under the cursor (the inspected cell of this lane, else (0, 0)); an arrow moves the cursor one cell
(clamped at the edges) and inspects again; Escape leaves the picture (its focus; present.py's own Escape closes the
inspector). An inspection is a synthetic click at the point Gradio 6.31's rule (`scale = min(displayed / natural, 1)`,
app/clicks.py) maps to the centre of the cell's pixels, so the existing select handlers move the inspector, the ring
and the Primer; clicks.py leaves synthetic clicks alone. The point is the centre of a pixel near the cell's centre (a
synthetic click's point is whole CSS px: a pixel's edge can read as the next one, or outside the picture). The grid is
not in the page: it is read from the inspector's heading ("row r, column c (position p)": columns = (p - c) / r), after
one inspection of a pixel three quarters down its middle when the lane's inspected cell is in row 0 or none is
inspected (the cursor's cell is inspected once that probe's ring is drawn). `KEYS_CSS` draws a 3 px outline with an
offset on every focused control (buttons, sliders, check boxes, radios, boxes, links, the lane pictures).
tests/browser/test_browser_keys.py: Tab to a lane, Enter, ArrowRight x2, ArrowDown; the focus ring by pixels.
"""
from __future__ import annotations

import json

LABEL = "{method} picture: Enter inspects, arrows move"
STEP = {"ArrowRight": (0, 1), "ArrowLeft": (0, -1), "ArrowDown": (1, 0), "ArrowUp": (-1, 0)}

KEYS_CSS = """
button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, a:focus-visible,
[tabindex]:focus-visible, input[type=range]:focus, input[type=checkbox]:focus-visible, input[type=radio]:focus-visible {
  outline: 3px solid #1f6feb !important; outline-offset: 2px !important;
}
[id^="img_"] .image-container button:focus-visible {outline-offset: -3px !important;}
"""

KEYS_JS = """
() => {
  const step = %(step)s;
  const button = el => el && el.tagName === 'BUTTON' && el.closest('[id^="img_"] .image-container') &&
                       el.querySelector('img');
  const label = () => document.querySelectorAll('[id^="img_"] .image-container button:has(img)').forEach(b => {
    const m = b.closest('[id^="img_"]').id.slice(4);
    if (b.getAttribute('tabindex') !== '0') b.setAttribute('tabindex', '0');
    const l = %(label)s;
    if (b.getAttribute('aria-label') !== l) b.setAttribute('aria-label', l);
  });
  new MutationObserver(label).observe(document.body, {childList: true, subtree: true});
  label();
  const shown = m => {                                       // [row, column, position] the inspector names for m
    const e = document.querySelector('#inspector .sv-insp');
    if (!e || e.getAttribute('data-method') !== m) return null;
    const h = e.querySelector('h4'), t = h && h.textContent.match(/row (\\d+), column (\\d+)/);
    return t ? [Number(t[1]), Number(t[2]), Number(e.getAttribute('data-pos'))] : null;
  };
  const columns = m => { const s = shown(m); return s && s[0] > 0 ? (s[2] - s[1]) / s[0] : null; };
  const press = (img, nx, ny) => {                           // a click Gradio's rule maps to natural pixel (nx, ny):
    const rect = img.getBoundingClientRect(), nat = {width: img.naturalWidth, height: img.naturalHeight};
    const r = Math.min(rect.width / nat.width, rect.height / nat.height, 1);   // its scale, at the pixel's centre
    const p = {x: rect.left + (rect.width - nat.width * r) / 2 + (nx + 0.5) * r,  // (a synthetic click's point is
               y: rect.top + (rect.height - nat.height * r) / 2 + (ny + 0.5) * r};  // whole px: a pixel's edge fails)
    img.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, composed: true, view: window,
      detail: 1, clientX: p.x, clientY: p.y}));
  };
  const inspect = (b, img) => {
    const g = b._svGrid, cell = Math.floor(img.naturalWidth / g);
    press(img, b._svAt[1] * cell + Math.floor(cell / 2), b._svAt[0] * cell + Math.floor(cell / 2));
  };
  const start = (b, img, m) => {                             // the grid, then the cursor's cell
    const s = shown(m), g = columns(m);
    if (g) { b._svGrid = g; b._svAt = [s[0], s[1]]; inspect(b, img); return; }
    b._svAt = s ? [s[0], s[1]] : [0, 0];
    const src = img.src;
    press(img, img.naturalWidth >> 1, img.naturalHeight * 3 >> 2);  // a lower row names the grid; its ring is
    const t0 = Date.now();                                   // drawn before the cursor's cell is inspected (the
    const wait = () => {                                     // two ring events would race: app/follow.py)
      const g2 = columns(m), now = b.querySelector('img');
      if (g2 && now && now.src !== src && now.complete) { b._svGrid = g2; inspect(b, now); }
      else if (Date.now() - t0 < 8000) setTimeout(wait, 50);
    };
    wait();
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
    const img = b.querySelector('img'), m = b.closest('[id^="img_"]').id.slice(4);
    if (!img.complete || !img.naturalWidth) {                // a lazy picture just scrolled into view: once loaded
      img.loading = 'eager';
      img.addEventListener('load', () => act(b, key), {once: true});
      return;
    }
    if (!step[key] || !b._svGrid || !b._svAt) start(b, img, m);
    else {
      const g = b._svGrid, d = step[key];
      const rows = Math.round(img.naturalHeight / Math.floor(img.naturalWidth / g));
      b._svAt = [Math.max(0, Math.min(rows - 1, b._svAt[0] + d[0])), Math.max(0, Math.min(g - 1, b._svAt[1] + d[1]))];
      inspect(b, img);
    }
  };
  window.addEventListener('focusout', e => { if (button(e.target)) e.target._svGrid = undefined; }, true);
}
""" % dict(step=json.dumps({k: list(v) for k, v in STEP.items()}),
           label="`" + LABEL.replace("{method}", "${m}") + "`")
