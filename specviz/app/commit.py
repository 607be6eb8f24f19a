"""One commit per typed value: a slider's value runs once, with the value the box shows.

Gradio 6.31's slider releases (our re-run) on the number box's pointerup and blur and on the range's pointerup, and
sends every keystroke of the box as an input (our preview). On a typed edit that made:
- a click into the box (to select its text) released the slider: a re-run with the old value;
- an emptied or half-typed box ("", "-", "1e") sent null: an error toast "expected a finite number, got None"
  from the preview;
- blur after Enter (or a click on the thumb without moving it) released the unchanged value: a second run.
`JS` filters those events before Gradio sees them (capture listeners on window, which run before the page's own):
- the number box's pointerup never releases (a click into the box is not a commit);
- an input whose box holds no finite number is not passed on (the preview waits for a number);
- blur (Enter blurs: app/present.py) releases only a finite value that differs from the value the box had when it
  took focus; an empty or half-typed box is given back the value it had when it took focus, and nothing runs;
- the range's pointerup (a mouse release, or the keyboard's commit after a pause: app/present.py) releases only a
  value that differs from the one at the pointer-down or first key.
tests/browser/test_browser_commit.py types four values (select-all, Delete, digits, Enter / Tab) and counts runs.
"""
from __future__ import annotations

JS = r"""
() => {
  const slider = el => el && el.tagName === 'INPUT' && el.closest && el.closest('.block') &&
                       el.closest('.block').querySelector('input[type=range]');
  const box = el => el && el.type === 'number' && slider(el);
  const finite = v => v.trim() !== '' && isFinite(Number(v));
  const stop = e => { e.stopImmediatePropagation(); };
  window.addEventListener('pointerup', e => {
    const el = e.target;
    if (box(el)) { stop(e); return; }                                  // a click into the box: no commit
    if (el && el.type === 'range' && slider(el)) {
      const from = el._svFrom;
      el._svFrom = undefined;
      if (from !== undefined && from === el.value) stop(e);            // released where it started
    }
  }, true);
  const start = fresh => e => {                                        // a pointer-down starts a new gesture;
    const el = e.target;                                               // keys add to one until its commit
    if (el && el.type === 'range' && slider(el) && (fresh || el._svFrom === undefined)) el._svFrom = el.value;
  };
  window.addEventListener('pointerdown', start(true), true);
  window.addEventListener('keydown', start(false), true);              // the keyboard's commit: app/present.py
  window.addEventListener('input', e => { if (box(e.target) && !finite(e.target.value)) stop(e); }, true);
  window.addEventListener('focus', e => { if (box(e.target)) e.target._svFrom = e.target.value; }, true);
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  window.addEventListener('blur', e => {
    const el = e.target;
    if (!box(el)) return;
    const from = el._svFrom;
    el._svFrom = undefined;
    if (!finite(el.value)) {                                           // the value it had again, and no run
      stop(e);
      setValue.call(el, from !== undefined && finite(from) ? from : slider(el).value);
      el.dispatchEvent(new Event('input', {bubbles: true}));
      return;
    }
    if (from !== undefined && Number(from) === Number(el.value)) stop(e);             // nothing typed
  }, true);
}
"""
