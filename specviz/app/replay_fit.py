"""The Replay tab in Present mode: a lecture hall's one screen. The synchronized picture takes the race's place (the
lanes fold away while the tab is open, and so do the setup controls), the inspector's column folds until a click
inspects a cell on the tab (its × folds it again; opening the tab closes an inspection made elsewhere), the tab's
explanations fold, and the picture and the picked method's draft tree stand side by side, sized by `JS` to the
screen: the tree as large as the height allows up to MAX_TEXT CSS px of text (its words are drawn at
tree_picture.TEXT px, so its scale is text / TEXT), leaving the picture PICTURE_SHARE of the width unless that would
take the tree's text under MIN_TEXT (the picture then keeps at least MIN_PICTURE px); the picture as large as what
is left. The normal layout puts the tree beside the picture when the page is wide enough and below it otherwise
(replay_tab.layout: the columns' min widths)."""
from __future__ import annotations

from specviz.app.present import important
from specviz.render import tree_picture

MIN_TEXT, MAX_TEXT = 16, 20           # CSS px of the tree's text in Present mode (the lecture hall's floor, a cap)
PICTURE_SHARE, MIN_PICTURE = 0.4, 240  # of the tab's width for the synchronized picture; CSS px it always keeps
MIN_PICTURE_H = 100                   # CSS px of height the picture keeps (else the tree gives the left column width)

CSS = """
/* Gradio's progress text ("processing | 0.1s") never lies over the caption or the pictures while Play ticks */
#replay_body .progress-text, #replay_body .meta-text, #replay_body .meta-text-center, #replay_body .eta-bar,
#replay_body .progress-level {display: none !important;}
#replay_tree_legend .sv-tree-legend {font-size: 14px; line-height: 1.35; color: #222;}
#replay_tree_legend .sv-leg-item {display: inline-block; margin: 0 14px 2px 0;}
"""

# $ON: Present mode with the Replay tab open; $FOLDED: and no inspection shown (none yet, or closed with its ×)
ON = 'body.sv-present:has(#tab_replay-button[aria-selected="true"])'
FOLDED = ON + ':not(:has(#inspector .sv-insp:not([style*="none"])))'
PRESENT = """
$ON #lanes, $ON #controls {display: none;}
$FOLDED #main {grid-template-columns: minmax(0, 1fr);}
$FOLDED #main > #inspector {display: none;}
$ON #replay_method label {padding: 2px 8px;}
$ON #replay_controls {align-items: center;}
$ON #replay_play {align-self: center; height: auto; min-height: 0; padding-top: 10px; padding-bottom: 10px;}
body.sv-present #replay_legend, body.sv-present #replay_heading {display: none;}
body.sv-present #replay_body {flex-wrap: nowrap; gap: 12px; align-items: flex-start;}
body.sv-present #replay_left {flex: 1 1 0; min-width: 0;}
body.sv-present #replay_right {flex: 0 0 auto; width: var(--sv-tree-w, 50%); min-width: 0;}
body.sv-present #tabs #replay_tree img {width: var(--sv-tree-w, 100%); height: auto; max-width: none;
                                        max-height: none;}
body.sv-present #tabs #replay_image img {width: auto; height: auto; max-width: 100%; max-height: var(--sv-pic-h, 40vh);}
body.sv-present #replay_tree_legend .sv-tree-legend {font-size: 13px; line-height: 1.3;}
body.sv-present #replay_tree_legend .sv-leg-note {display: none;}      /* what the level headers say: the lecturer */
body.sv-present #replay_tree_legend .sv-leg-item {margin-right: 10px;}
"""

CSS = CSS + important(PRESENT.replace("$FOLDED", FOLDED).replace("$ON", ON))

# sizes written as CSS variables on #replay_body, only when they change (each write is a mutation that fits again)
JS = f"""
() => {{
  const q = s => document.querySelector(s);
  const TEXT = {tree_picture.TEXT}, LO = {MIN_TEXT} / TEXT, HI = {MAX_TEXT} / TEXT, SHARE = {PICTURE_SHARE};
  const PIC = {MIN_PICTURE}, PIC_H = {MIN_PICTURE_H};
  const put = (el, name, v) => {{ if (el.style.getPropertyValue(name) !== v) el.style.setProperty(name, v); }};
  const fit = () => {{
    const b = q('#replay_body');
    if (!b || !document.body.classList.contains('sv-present') || !b.offsetParent) return;
    const tree = q('#replay_tree img'), pic = q('#replay_image img'), gap = 12;
    const left = q('#replay_left'), right = q('#replay_right');
    const box = b.getBoundingClientRect(), below = q('#main').getBoundingClientRect().bottom - box.bottom;
    // the room: the window under the tab bar, less what #main keeps below the tab (the docked column's grid rows)
    const W = b.clientWidth, H = window.innerHeight - (box.top + window.scrollY) - Math.max(0, below) - 2;
    // sized once per layout: a Play tick's new caption, tree legend or tree (padded by replay_tab to the run's
    // largest) changes none of these, so the picture keeps its width for the whole replay
    const nat = img => img ? `${{img.naturalWidth}}x${{img.naturalHeight}}` : '-';
    const sig = [W, window.innerHeight, Math.round(box.top + window.scrollY), Math.round(Math.max(0, below)),
                 nat(tree), nat(pic)].join('/');
    if (b.dataset.svFit === sig) return;
    b.dataset.svFit = sig;
    const rest = (col, img) => col.getBoundingClientRect().height - (img ? img.getBoundingClientRect().height : 0);
    if (tree && tree.naturalWidth) {{    // the tree: as tall as its column's room, the picture its share of the width;
      const nw = tree.naturalWidth;      // when the left column's words leave the picture under PIC_H px of height
      for (let settled = 0; settled < 4; settled++) {{   // again while the legend's wrapping changes the room
        const was = b.style.getPropertyValue('--sv-tree-w');
        for (let least = PIC; ; least += 40) {{    // (a docked inspector's narrow tab), the tree gives up width
          const wide = Math.min(Math.max(LO, (W * (1 - SHARE) - gap) / nw), (W - least - gap) / nw);
          const s = Math.max(0, Math.min(HI, (H - rest(right, tree)) / tree.naturalHeight, wide));
          put(b, '--sv-tree-w', `${{Math.ceil(nw * s - 0.01)}}px`);   // ceil: 16 px is >= 16 px
          if (rest(left, pic) + PIC_H <= H || least > W * (1 - SHARE)) break;
        }}
        if (b.style.getPropertyValue('--sv-tree-w') === was) break;
      }}
    }}
    if (pic && pic.naturalWidth)         // the picture: the left column's height that the rest leaves
      put(b, '--sv-pic-h', `${{Math.max(PIC_H, Math.floor(H - rest(left, pic)))}}px`);
  }};
  // opening the tab in Present mode closes an inspection made elsewhere: the column folds until a click here
  document.addEventListener('click', e => {{
    if (!document.body.classList.contains('sv-present') || !e.target.closest || !e.target.closest('#tab_replay-button'))
      return;
    document.querySelectorAll('#inspector .sv-insp').forEach(x => {{ x.style.display = 'none'; }});
  }}, true);
  // a fit's own trial widths are not changes to fit again: the observer is off while it measures
  let queued = false;
  const seen = new MutationObserver(() => later());
  const watch = () => seen.observe(document.body, {{subtree: true, childList: true, attributes: true,
                                                   attributeFilter: ['class', 'style', 'aria-selected']}});
  const later = () => {{
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {{
      queued = false;
      seen.disconnect();
      try {{ fit(); }} finally {{ seen.takeRecords(); watch(); }}
    }});
  }};
  window.addEventListener('resize', later);
  document.addEventListener('load', e => {{ if (e.target.tagName === 'IMG') later(); }}, true);
  watch();
  later();
}}
"""
