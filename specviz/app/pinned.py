"""The tuning bench, in the browser: the knobs and the results they change stay on screen together.

- The controls column is pinned (sticky) and scrolls on its own, so a slider is reachable without scrolling the race
  away; a commit (release, Enter in the number box) or a click on a lane brings the status and the lanes into view
  if they are not: one scroll at most per action (while the re-run lays them out), none after the user scrolls (a
  wheel, a touch, a scrolling key, the scroll bar). The status line keeps its tallest height while the screen stays
  the same, and a commit reserves the re-run's outcome line, so a re-run does not move the lanes below it.
- A value typed outside a slider's range is clamped in the box before Gradio reads it (Gradio 6.31 sends the raw
  value on blur and clamps only the display afterwards, so the server refused it and the box showed a value no run
  used), and one line under the control says so. The run uses the value the box shows.
- The lanes form a regular grid sized to the screen and the method count: columns and picture size are chosen so
  every lane fits (in Present mode, leaving room for the map: the page is never taller than the screen, a tab
  without a map keeps the map tab's grid, the lanes are fitted again when their text settles, and where no grid of
  full-size titles fits, columns as narrow as the titles at 12 px, each lane saying only its N×); lane titles shrink
  to stay on one line (down to 12 px; narrow lanes show the short title), so every picture in a row starts level.
- One message per error: Gradio's toast groups repeats of a message ("(2)") and lists them all; only the newest is
  shown. The status line's own error badge is hidden (the toast says it), so nothing covers the status.
Browser-only; nothing in the Python state depends on it (tests/browser/test_browser_bench.py checks it at three sizes).
"""
from __future__ import annotations

CSS = """
#controls {position: sticky !important; top: 8px; align-self: flex-start; max-height: calc(100vh - 16px);
           overflow-y: auto; overflow-x: hidden; overscroll-behavior: contain; flex-wrap: nowrap !important;}
#controls > * {flex-shrink: 0 !important;}
.sv-clamp {font-size: 14px; color: #9a3412; margin: 4px 2px 0 2px;}
.sv-knobs {font-size: 14px; color: #333;}
.sv-kv {white-space: nowrap;}
.sv-outcome {font-size: 15px; margin-top: 2px;}
.sv-lane-title {overflow-wrap: normal !important; word-break: keep-all; white-space: nowrap;}  /* fit() sizes it */
#lanes.sv-tight .sv-lane {font-size: 13px;}
#lanes.sv-tight .sv-kv {white-space: normal;}
#lanes.sv-tight .sv-more {display: none;}        /* narrow lanes: the short title (app/present.lane_title) */
#lanes.sv-tight .block, #lanes.sv-tight .html-container {padding: 0 2px !important;}   /* and their width for text */
#lanes.sv-tight .icon-button-wrapper {display: none !important;}     /* and no picture buttons (Export has them) */
#lanes {justify-content: center;}
/* a reader who scrolled below the race keeps the view while the race re-lays itself: the browser anchors the
   scroll position on what is on screen, never on the lanes' or the status line's changing boxes */
#lanes, #lanes *, #status, #status * {overflow-anchor: none;}
body.sv-present {--sv-map-reserve: 40;}          /* vh kept below the lanes for a tab without a map */
#lanes.sv-compact .sv-done, #lanes.sv-compact .sv-words, #lanes.sv-compact .sv-run, #lanes.sv-compact .sv-lane br,
#lanes.sv-compact .sv-kind, #lanes.sv-compact .sv-count, #lanes.sv-compact .sv-secs,
#lanes.sv-compact .sv-mem {display: none !important;}
#lanes.sv-compact .sv-knobs {display: inline;}               /* "λ 0.5 · δ 0.5 · 2.36×": one line saved */
#lanes.sv-compact .sv-knobs::after {content: " · ";}
/* compact lanes show "2.18×" without its words: the status line says once what N× is */
#main:has(#lanes.sv-compact) #status .sv-status::after {content: " N×: step compression.";}
#lanes.sv-tight .sv-kind, #lanes.sv-tight .sv-secs, #lanes.sv-tight .sv-count {display: none;}
#lanes > div {gap: 4px !important;}
#lanes img {width: var(--sv-img, auto) !important; height: var(--sv-img, auto) !important; max-height: none !important;
            max-width: 100% !important; object-fit: contain; margin: 0 auto; display: block;}
#lanes [data-testid=image], #lanes .image-container, #lanes .image-frame {height: auto !important;}
.toast-messages .toast-message-item:not(:last-child), .toast-separator, .toast-count {display: none !important;}
#status .error, #status .clear-status {display: none !important;}
"""

JS = r"""
() => {
  const q = s => document.querySelector(s);
  const rangeOf = el => el && el.type === 'number' && el.closest('.block') &&
                        el.closest('.block').querySelector('input[type=range]');
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const note = (el, text) => {
    const b = el.closest('.block');
    let n = b.querySelector('.sv-clamp');
    if (!text) { if (n) n.remove(); return; }
    if (!n) { n = document.createElement('div'); n.className = 'sv-clamp'; b.appendChild(n); }
    n.textContent = text;
    n.scrollIntoView({block: 'nearest'});       // the pinned controls scroll to show it
  };
  const outside = el => { const r = rangeOf(el), v = parseFloat(el.value);
                          return r && el.value !== '' && isFinite(v) && (v < +r.min || v > +r.max); };
  // a typed value outside the range: Gradio does not see it until the commit clamps it
  // (and a new edit clears the last note)
  document.addEventListener('input', e => {
    const el = e.target;
    if (el.type === 'range' && el.closest('.block') && el.closest('.block').querySelector('.sv-clamp')) {
      el.closest('.block').querySelector('.sv-clamp').remove();       // the slider moved: the note is stale
    }
    if (el._svClamp || !rangeOf(el)) return;
    if (outside(el)) e.stopImmediatePropagation(); else note(el, '');
  }, true);
  const clamp = el => {
    const r = rangeOf(el);
    if (!r) return;
    if (!outside(el)) return;
    const raw = el.value, v = parseFloat(raw), c = Math.min(Math.max(v, +r.min), +r.max);
    setValue.call(el, String(c));
    el._svClamp = true;
    el.dispatchEvent(new Event('input', {bubbles: true}));
    el._svClamp = false;
    note(el, `${raw} is outside ${r.min}–${r.max}: set to ${c}, and the run uses ${c}.`);
  };
  // bring the status and the lanes into view after a commit (the controls are pinned, so they stay in view too)
  // after a commit the re-run's layout is watched for 20 s (fit) and the page scrolls at most once for the action
  // (owed), never after the user scrolls: a wheel, a touch, a scrolling key or the scroll bar ends it
  // (window._svScrolledAt: app/present.py's verdict scroll reads it too)
  let committed = -1e9, owed = false;
  const following = () => owed && Date.now() - committed < 20000;
  const bring = commit => { committed = window._svActedAt = Date.now(); owed = true; hold(commit);
                        setTimeout(() => { if (following()) bringNow(); }, 30); };
  const scrolled = () => { committed = -1e9; owed = false; window._svScrolledAt = Date.now(); };
  // the status line never shrinks while the screen stays the same (its words change every frame; a line less, then
  // a line more, moved the lanes and all below them 21-42 px during a re-run); a commit also reserves the re-run's
  // outcome line (render/knob_text.outcome_line) when the line has none yet
  let held = '', tallest = 0;
  const hold = commit => {
    const s = q('#status');
    if (!s) return;
    const k = `${window.innerWidth}/${window.devicePixelRatio}/${document.body.classList.contains('sv-present')}`;
    if (k !== held) { held = k; tallest = 0; s.style.minHeight = ''; }
    let h = s.getBoundingClientRect().height;
    const words = s.querySelector('.prose');
    if (commit && words && !s.querySelector('.sv-outcome')) {
      const probe = document.createElement('div');          // the outcome line as it will read (a lane with knobs:
      probe.className = 'sv-outcome';                       // before → predicted → achieved; else achieved only)
      const lanes = [...document.querySelectorAll('#lanes > div')].filter(c => c.offsetParent && c.id)
        .map(c => [c.id.slice(5), !/^no knobs/.test((c.querySelector('.sv-knobs') || {}).textContent || 'no knobs')]);
      const rest = lanes.filter(l => !l[1]).map(l => `${l[0]} 0.00×`).join(', ');
      probe.innerHTML = 'Re-run, step compression before → predicted → <b>achieved</b>: ' +
        [...lanes.filter(l => l[1]).map(l => `${l[0]} 0.00× → 0.00× → <b>0.00×</b>`),
         ...(rest ? [`not tuned by these knobs: ${rest}`] : [])].join(' · ');
      words.appendChild(probe);
      h += probe.getBoundingClientRect().height + parseFloat(getComputedStyle(probe).marginTop);
      probe.remove();
    }
    if (h > tallest + 0.5) { tallest = h; s.style.minHeight = `${Math.ceil(h)}px`; }
  };
  window.addEventListener('click', e => { if (e.isTrusted) window._svActedAt = Date.now(); }, true);
  window.addEventListener('wheel', scrolled, {passive: true, capture: true});
  window.addEventListener('touchmove', scrolled, {passive: true, capture: true});
  window.addEventListener('pointerdown', e => { if (e.target === document.documentElement) scrolled(); }, true);
  window.addEventListener('keydown', e => {
    const t = e.target.tagName;
    if (['PageUp', 'PageDown', 'ArrowUp', 'ArrowDown', 'Home', 'End', ' '].includes(e.key) && t !== 'INPUT' &&
        t !== 'TEXTAREA' && t !== 'SELECT') scrolled();
  }, true);
  const bringNow = () => {
    const s = q('#status'), l = q('#lanes');
    if (!s || !l) return;
    const top = s.getBoundingClientRect().top, bottom = l.getBoundingClientRect().bottom;
    if (top < 0) { owed = false; window.scrollBy(0, top - 4); }
    else if (bottom > window.innerHeight) {
      owed = false;
      window.scrollBy(0, Math.min(top - 4, bottom - window.innerHeight + 4));
    }
  };
  // a click on a lane's cell docks the inspector beside the race, which re-lays the lanes: keep them in view too
  // (a person's click; the keyboard's synthetic clicks, app/keys.py, inspect from where the focus is)
  document.addEventListener('click', e => {
    if (e.isTrusted && e.target.closest && e.target.closest('#lanes img')) bring(false);
  }, true);
  document.addEventListener('blur', e => clamp(e.target), true);
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && rangeOf(e.target)) { clamp(e.target); bring(true); }
  }, true);
  document.addEventListener('pointerup', e => {
    if (e.target.type === 'range' && e.target.closest('#controls')) bring(true);
  }, true);
  // the lanes: a regular grid sized to the screen and the method count. Each column count is tried on the page
  // (a lane's text wraps differently at each width), and the largest picture that fits the height wins; searched
  // again only when the count, the screen, the mode or the space above changes, or the lanes overflow
  let key = '';
  const place = (l, cols, s, colW) => {          // equal columns over the whole width; the pictures s px square
    l.style.gridTemplateColumns = `repeat(${cols}, minmax(0, 1fr))`;
    l.style.setProperty('--sv-img', `${s}px`);
    l.classList.toggle('sv-tight', colW < 200);
  };
  // Present mode: the map on screen is drawn at least MAP_SCALE of its natural size (its labels >= 16 CSS px: the
  // pictures' text is draw.TEXT = 22 px) and the lanes get the height left; the lanes' text goes compact (one
  // line under each picture) when the full text would leave pictures under COMPACT_BELOW px (the normal layout:
  // when no full-text grid fits the screen at all, e.g. ten lanes beside the docked inspector); every column is wide
  // enough for the widest title at its full size
  const MAP_SCALE = 16 / 22, COMPACT_BELOW = 150, TITLE_LEAST = 12;   // 16 CSS px of draw.TEXT's 22
  // the map on screen: a Heatmaps or Live preview picture (another tab's picture — Summary's chart, History's
  // comparison — is no map: sizing the lanes to it left one column of the smallest pictures)
  const shownMap = () => [...document.querySelectorAll('#tab_maps img, #preview_image img')]
    .find(i => i.offsetParent && i.naturalHeight);
  // the lanes' text height per row (all but the pictures), as laid out now
  const textH = l => {
    const cols = l.style.gridTemplateColumns.match(/repeat\((\d+)/), gap = 10;
    const s = parseFloat(l.style.getPropertyValue('--sv-img'));
    if (!cols || !s) return 0;
    const rows = Math.ceil([...l.children].filter(c => getComputedStyle(c).display !== 'none').length / +cols[1]);
    return (l.getBoundingClientRect().height - rows * s - gap * (rows - 1)) / rows;
  };
  const laneFit = () => {
    const l = q('#lanes'), st = q('#status');
    if (!l || !st) return;
    const lanes = [...l.children].filter(c => getComputedStyle(c).display !== 'none');
    const n = lanes.length;
    if (!n) return;
    const present = document.body.classList.contains('sv-present');
    const least = present ? 48 : 64;  // smallest picture (Present: the map and verdict carry the detail)
    const gap = 10, W = l.clientWidth, vh = window.innerHeight;
    const top = l.getBoundingClientRect().top, above = top - st.getBoundingClientRect().top;
    const map = present ? shownMap() : null, tabs = q('#tabs');
    let reserve = 0;
    if (map) {
      const mapH = Math.ceil(Math.max(MAP_SCALE * map.naturalHeight, 0.3 * vh));
      document.body.style.setProperty('--sv-map-h', `${mapH}px`);
      const bars = map.getBoundingClientRect().top - tabs.getBoundingClientRect().top;
      reserve = bars + mapH + 12;
    } else if (present) {
      reserve = (parseFloat(getComputedStyle(document.body).getPropertyValue('--sv-map-reserve')) || 0) * vh / 100;
    }
    const H = present ? vh - (top + window.scrollY) - reserve - 8 : vh - above - 12;
    const over = l.getBoundingClientRect().height > H + 2;
    const screen = `${n}/${W}/${vh}/${present}/${Math.round(above)}`, k = `${screen}/${map ? map.naturalHeight : 0}`;
    // Present mode: the lanes' text changed height since the last fit (it settles after the switch: a first fit
    // measured it 20 px a row taller and kept pictures 40 px too small), or a tab without a map on a screen where
    // the map's tab was fitted: it keeps that tab's grid (its 40 vh guess of the map's room gave other sizes)
    const rewrapped = present && fit.text !== undefined && Math.abs(textH(l) - fit.text) > 2;
    const kept = present && !map && fit.mapGrid && fit.mapGrid[0] === screen ? fit.mapGrid : null;
    if (kept && k !== key) { key = k; place(l, ...kept.slice(1)); }
    else if (!kept && (k !== key || over || rewrapped)) {
      key = k;
      const titles = lanes.map(c => c.querySelector('.sv-lane-title')).filter(Boolean);
      let titleW = 0, pad = 0;    // a column's width less its title's room (margins, paddings; the fit's 2 px)
      if (titles.length) {      // the short titles (narrow lanes'): 12 normal-layout lanes of 75 px overlapped
        titles.forEach(t => { t.style.fontSize = ''; });
        pad = lanes[0].getBoundingClientRect().width - titles[0].clientWidth + 2;
        titleW = Math.max(...titles.map(t => drawnW(t.firstChild))) + pad;
      }
      const search = (titleCol = titleW) => {
        let best = [1, 0, W];
        for (let c = 1; c <= n; c++) {
          const rows = Math.ceil(n / c), colW = (W - gap * (c - 1)) / c;
          const s0 = Math.floor(Math.min(colW, present ? 2000 : 420));
          if (s0 < least || (c > 1 && colW < titleCol)) break;
          place(l, c, s0, colW);
          const extra = (l.getBoundingClientRect().height - rows * s0 - gap * (rows - 1)) / rows;
          const sc = Math.min(s0, (H - rows * extra - gap * (rows - 1)) / rows);
          if (sc > best[1] + 0.5) best = [c, sc, colW];
        }
        return best;
      };
      l.classList.remove('sv-compact', 'sv-bare');
      let best = search(), compact = false;
      if (best[1] < (present ? COMPACT_BELOW : least)) {     // normal layout: only when nothing else fits
        l.classList.add('sv-compact');
        const tight = search();
        if (tight[1] > best[1] + 0.5) { best = tight; compact = true; }
        // Present mode, and still no grid fits at the titles' full size (twelve lanes beside the docked inspector
        // at 1280 px: three rows of the smallest pictures, the page 861 px in a 720 px screen): columns as narrow
        // as the titles at TITLE_LEAST px, to which they shrink (below)
        if (present && best[1] < least && titleW) {
          l.classList.add('sv-bare');
          const narrow = search(pad + (titleW - pad) * TITLE_LEAST / parseFloat(getComputedStyle(titles[0]).fontSize));
          if (narrow[1] > best[1] + 0.5) { best = narrow; compact = true; } else l.classList.remove('sv-bare');
        }
        l.classList.toggle('sv-compact', compact);
      }
      const s = Math.max(least, Math.floor(best[1] / 4) * 4);
      place(l, best[0], s, best[2]);
      // the text wrapped again at the final width (2 px allowed), or (Present mode with a map) the page is still
      // taller than the screen, by any px (a tab without a map may be taller whatever the lanes do: same grid)
      const over2 = () => { const d = l.getBoundingClientRect().height - H; return d > 2 ? d : 0; };
      const excess = () => Math.max(over2(), map ? document.documentElement.scrollHeight - vh : 0);
      if (excess() > 0) {
        const rows = Math.ceil(n / best[0]);
        place(l, best[0], Math.max(least, Math.floor((s - excess() / rows) / 4) * 4), best[2]);
      }
      if (map) fit.mapGrid = [screen, best[0], parseFloat(l.style.getPropertyValue('--sv-img')), best[2]];
    }
    hold(false);
    if (!present && following()) bringNow();   // the outcome line may have pushed the lanes (once per action)
    // titles never wrap: one common size (at most the stylesheet's) at which the widest fits; written only when it
    // changes (every write is a mutation that schedules another fit); important: Present mode's size is !important
    const titles = lanes.map(c => c.querySelector('.sv-lane-title')).filter(Boolean);
    if (!titles.length) return;
    if (present !== titles[0]._svPresent) titles.forEach(t => { t.style.fontSize = ''; t._svPresent = present; });
    const now = parseFloat(getComputedStyle(titles[0]).fontSize);
    if (!titles[0].style.fontSize) titles.forEach(t => { t._svBase = now; });   // the stylesheet's size, this mode
    const base = titles[0]._svBase || now;
    const g = (fit.canvas = fit.canvas || document.createElement('canvas')).getContext('2d');
    g.font = getComputedStyle(titles[0]).font;
    let line = base, word = base;           // one line if it stays >= TITLE_LEAST px, else breaks at spaces
    for (const t of titles) {
      const room = t.clientWidth - 2, text = t.innerText.trim();     // as shown (Present mode: short)
      line = Math.min(line, base * room / (drawnW(t) * base / now));    // as laid out (the canvas's was 1-3 px short)
      for (const w of text.split(/\s+/)) word = Math.min(word, base * room / (g.measureText(w).width * base / now));
    }
    const want = Math.max(TITLE_LEAST, line >= TITLE_LEAST ? line : Math.min(base, word));
    if (Math.abs(want - now) > 0.5) titles.forEach(t => t.style.setProperty('font-size', `${want.toFixed(1)}px`,
                                                                              'important'));
  };
  const drawnW = n => { const r = document.createRange(); r.selectNodeContents(n);      // a text's laid-out width
                        return r.getBoundingClientRect().width; };
  const fit = () => { laneFit(); const l = q('#lanes'); if (l) fit.text = textH(l); };
  let queued = false;
  const later = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; fit(); }); } };
  window.addEventListener('resize', later);
  document.addEventListener('load', e => { if (e.target.tagName === 'IMG') later(); }, true);   // a new map
  new MutationObserver(later).observe(document.body, {subtree: true, childList: true, attributes: true,
                                                      attributeFilter: ['class', 'style']});
  later();
}
"""
