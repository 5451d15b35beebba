// AlphaScout's recorder: installed by the worker, while the person records a task, into the
// same isolated world as page-agent.js (whose `alphascout.target` describes elements, so
// recording and the agent name them alike). It only reports what the person does; the
// engine (background/engine/src/workflow/recording.rs) decides what becomes a step.
//
// Each event goes to the worker at once through a CDP binding and also stays in `pending`
// until the worker says it is stored, so a worker that Chrome stopped reads it later (the
// page agent's world outlives the worker's debugger session, and this recorder with it).
(() => {
  if (globalThis.alphascoutRecorder) return;
  const BINDING = "alphascoutRecord";
  // Events of this document: a random prefix keeps them apart from other documents'.
  const doc = Math.random().toString(36).slice(2, 10);
  let n = 0;
  const pending = new Map();
  const listeners = [];
  const KEYS = new Set(["Enter", "Escape", "Tab"]);
  // What a person clicks: the control, not the <span> inside it.
  const CLICKABLE = "a[href],button,input,select,textarea,summary,label,option,[role],[onclick],[tabindex]";

  const describe = (el) => globalThis.alphascout.target(el);
  const masked = (t, value) => (t.secret || t.inputType === "password" ? "[secret]" : value);

  function send(event) {
    event.uid = `${doc}:${++n}`;
    event.atMs = Date.now();
    event.url = location.href;
    event.title = document.title;
    pending.set(event.uid, event);
    const deliver = globalThis[BINDING];
    if (typeof deliver === "function") deliver(JSON.stringify(event));
  }

  const on = (target, type, handler) => {
    const wrapped = (e) => {
      // Only what a person did: a page's own synthetic events are not steps.
      if (!e.isTrusted) return;
      try { handler(e); } catch (error) { console.debug("alphascout recorder", error); }
    };
    target.addEventListener(type, wrapped, { capture: true, passive: type === "scroll" });
    listeners.push([target, type, wrapped]);
  };

  const pick = (node) => (node instanceof Element ? (node.closest(CLICKABLE) || node) : null);

  // Enter in a form's field submits it with a click on its button: Enter's effect.
  let enterAt = -Infinity;
  on(window, "click", (e) => {
    if (e.detail === 0 && performance.now() - enterAt < 500) return;
    const el = e.target instanceof Element ? (e.target.closest(CLICKABLE) || e.target) : null;
    // Choosing in a <select> is its `change`; clicking a label is the field's click.
    if (!el || el.tagName === "SELECT" || el.tagName === "OPTION") return;
    send({ kind: "click", target: describe(el) });
  });

  // The browser reports both clicks first; the fold makes the three one step.
  on(window, "dblclick", (e) => {
    const el = pick(e.target);
    if (el) send({ kind: "double_click", target: describe(el) });
  });

  on(window, "contextmenu", (e) => {
    const el = pick(e.target);
    if (el) send({ kind: "right_click", target: describe(el) });
  });

  // Drags: HTML5 drag and drop (dragstart … drop), or a press, a move of more than a few
  // pixels and a release (pointer-driven lists, boards and handles). The drop target is
  // what lay under the pointer besides the dragged thing itself.
  let press = null; // {x, y, el, html5}
  const under = (x, y, dragged) =>
    document.elementsFromPoint(x, y).find((el) => !dragged.contains(el) && el !== document.documentElement);
  const dragged = (x, y) => {
    const p = press;
    press = null;
    if (!p || Math.hypot(x - p.x, y - p.y) < 8) return;
    const onto = pick(under(x, y, p.el));
    const event = { kind: "drag", target: describe(p.el), dx: Math.round(x - p.x), dy: Math.round(y - p.y) };
    if (onto && onto !== document.body) event.to = describe(onto);
    send(event);
  };
  on(window, "pointerdown", (e) => {
    if (e.button !== 0 || !(e.target instanceof Element)) return;
    press = { x: e.clientX, y: e.clientY, el: e.target.closest("[draggable=true]") || pick(e.target), html5: false };
  });
  on(window, "dragstart", () => { if (press) press.html5 = true; });
  on(window, "drop", (e) => { if (press && press.html5) dragged(e.clientX, e.clientY); });
  on(window, "dragend", () => { if (press && press.html5) press = null; });
  on(window, "pointerup", (e) => { if (press && !press.html5) dragged(e.clientX, e.clientY); });

  // Copy and paste inside the page, with the text they carried (masked in a secret field).
  on(window, "copy", () => {
    const active = document.activeElement;
    const field = active && (active.tagName === "INPUT" || active.tagName === "TEXTAREA") ? active : null;
    const text = field ? field.value.slice(field.selectionStart, field.selectionEnd)
      : String(document.getSelection() || "");
    if (!text.trim()) return;
    const anchor = field || document.getSelection()?.anchorNode?.parentElement;
    const event = { kind: "copy", text };
    if (anchor && anchor !== document.body) {
      event.target = describe(anchor);
      event.text = masked(event.target, text);
    }
    send(event);
  });
  on(window, "paste", (e) => {
    const el = e.target instanceof Element ? e.target : null;
    if (!el) return;
    const target = describe(el.closest("input,textarea,[contenteditable]") || el);
    send({ kind: "paste", target, text: masked(target, e.clipboardData?.getData("text") || "") });
  });

  on(window, "input", (e) => {
    const el = e.target;
    if (!(el instanceof Element)) return;
    // A paste's input is the paste step's effect.
    if (e.inputType === "insertFromPaste" || e.inputType === "insertFromDrop") return;
    if (el.tagName === "INPUT" && ["checkbox", "radio", "file", "range", "color"].includes(el.type)) return;
    if (el.tagName === "SELECT") return;
    const target = describe(el);
    const value = el.isContentEditable ? el.innerText : el.value;
    send({ kind: "input", target, value: masked(target, value ?? "") });
  });

  on(window, "change", (e) => {
    const el = e.target;
    if (!(el instanceof HTMLSelectElement)) return;
    const option = [...el.selectedOptions].map((o) => o.textContent.trim()).join(", ");
    send({ kind: "select", target: describe(el), option });
  });

  on(window, "keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && (e.key === "i" || e.key === "I")) {
      // Ctrl+I is AlphaScout's: the panel offers Extract or Details. The page never sees it.
      e.preventDefault();
      e.stopImmediatePropagation();
      send({ kind: "offer" });
      return;
    }
    if (!KEYS.has(e.key) || e.isComposing) return;
    if (e.key === "Enter") enterAt = performance.now();
    const focused = document.activeElement;
    const event = { kind: "key", key: e.key };
    if (focused && focused !== document.body && focused !== document.documentElement) {
      event.target = describe(focused);
    }
    send(event);
  });

  // Scrolls are summed per target and reported once the scrolling stops. A scroll event
  // comes after the move, so each target's resting position is kept to measure from.
  const scrolled = new Map();
  const rest = new WeakMap([[document, window.scrollY]]);
  on(window, "scroll", (e) => {
    const el = e.target === document || e.target === document.documentElement ? null : e.target;
    const key = el || document;
    const now = () => (el ? el.scrollTop : window.scrollY);
    const height = el ? el.clientHeight : window.innerHeight;
    const s = scrolled.get(key) || { from: rest.has(key) ? rest.get(key) : now(), timer: 0 };
    clearTimeout(s.timer);
    s.timer = setTimeout(() => {
      scrolled.delete(key);
      const top = now();
      rest.set(key, top);
      const screens = (top - s.from) / Math.max(1, height);
      if (Math.abs(screens) < 0.05) return;
      const event = { kind: "scroll", screens: Math.round(screens * 100) / 100 };
      if (el instanceof Element) event.target = describe(el);
      send(event);
    }, 400);
    scrolled.set(key, s);
  });

  globalThis.alphascoutRecorder = Object.freeze({
    /** Events not yet stored by the worker, oldest first. */
    pending: () => [...pending.values()],
    /** The worker stored these. */
    ack(uids) {
      for (const uid of uids) pending.delete(uid);
      return pending.size;
    },
    /** Recording ended: stop listening. */
    stop() {
      for (const [target, type, handler] of listeners.splice(0)) {
        target.removeEventListener(type, handler, { capture: true });
      }
      pending.clear();
      // A later recording in this document installs afresh.
      delete globalThis.alphascoutRecorder;
    },
  });
})();
