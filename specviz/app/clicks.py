"""Every click on a picture inspects the cell under the pointer, at any displayed size.

Gradio 6.31 maps a click on an Image to natural pixels with `scale = min(displayed / natural, 1)` and centres the
picture's natural size in its box: a picture shown larger than its file (a 240 px lane PNG shown at 420 px, a map
in Present mode) is read as if it sat unscaled in the middle, so a click lands half the surplus off (row 6 col 9
read as (5, 10) at 420 px; cells near the edges read as outside the picture). `JS` corrects the click before Gradio
sees it: a real click on a picture shown larger than its file is stopped and sent again at the point Gradio's rule
maps to the natural pixel under the pointer. Pictures shown at or below their natural size are left alone (Gradio
maps those right). Keyboard clicks (no pointer position) are left alone too.

WHERE: the correction itself, a pure function (tests/browser/test_browser_clicks_model.py runs it against Gradio's
rule on a bare page; tests/browser/test_browser_clicks.py clicks cells of the served app).
"""
from __future__ import annotations

# (rect, natural, client) -> the client point that Gradio's rule maps to the natural pixel under `client`: the true
# scale s of an object-fit: contain picture, its offset, the natural pixel under the pointer (floor: Gradio rounds,
# which would move a click on a pixel's right half to the next pixel, and off the last one), then back through
# Gradio's r = min(s, 1) and its offset
WHERE = """
(rect, natural, client) => {
  const s = Math.min(rect.width / natural.width, rect.height / natural.height);
  const r = Math.min(s, 1);
  const at = (lo, size, nat, c) => {
    const n = (c - lo - (size - nat * s) / 2) / s;
    if (n < 0 || n >= nat) return c;                        // outside the picture: as it was
    return lo + (size - nat * r) / 2 + Math.floor(n) * r;
  };
  return {x: at(rect.left, rect.width, natural.width, client.x),
          y: at(rect.top, rect.height, natural.height, client.y)};
}
"""

JS = f"""
() => {{
  const where = {WHERE.strip()};
  window.addEventListener('click', e => {{
    const img = e.target;
    if (!e.isTrusted || e.detail === 0 || !img || img.tagName !== 'IMG' || !img.naturalWidth ||
        !img.closest('.image-container button')) return;
    const rect = img.getBoundingClientRect();
    if (Math.min(rect.width / img.naturalWidth, rect.height / img.naturalHeight) <= 1) return;   // Gradio maps it
    const p = where(rect, {{width: img.naturalWidth, height: img.naturalHeight}}, {{x: e.clientX, y: e.clientY}});
    if (Math.abs(p.x - e.clientX) < 0.01 && Math.abs(p.y - e.clientY) < 0.01) return;
    e.stopImmediatePropagation();
    e.preventDefault();
    img.dispatchEvent(new MouseEvent('click', {{bubbles: true, cancelable: true, composed: true, view: window,
      detail: e.detail, clientX: p.x, clientY: p.y, screenX: e.screenX, screenY: e.screenY, button: e.button,
      ctrlKey: e.ctrlKey, shiftKey: e.shiftKey, altKey: e.altKey, metaKey: e.metaKey}}));
  }}, true);
}}
"""
