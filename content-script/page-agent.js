// AlphaScout's page-side helpers. The background worker injects this file over CDP into an
// isolated world named "alphascout" the first time a tab needs it, so page scripts can
// neither see these functions nor replace the DOM APIs they use. No manifest content
// script, no host permissions. Everything read from the page is untrusted data.
//
// The engine (background/engine/src/page_state.rs) owns the meaning of what is returned
// here; this file only measures the DOM, in one pass, as cheaply as it can.
(() => {
  if (globalThis.alphascout) return;

  // Stable element ids: an element keeps its id for as long as it exists, and an id is
  // never given to another element. The engine seeds `nextId` per tab, so a new document
  // in the same tab cannot reissue an id the model saw on the previous one.
  const idOf = new WeakMap();
  const byId = new Map(); // id -> WeakRef<Element>
  let nextId = 1;
  const assignId = (el) => {
    let id = idOf.get(el);
    if (id === undefined) {
      id = nextId++;
      idOf.set(el, id);
      byId.set(id, new WeakRef(el));
    }
    return id;
  };

  // "DOM quiet" for event-driven waits: when did the page last change?
  let lastMutation = performance.now();
  let mutations = 0;
  new MutationObserver(() => {
    lastMutation = performance.now();
    mutations++;
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });

  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "svg"]);
  const ROLES = new Set([
    "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "combobox", "listbox", "textbox", "searchbox", "slider",
    "spinbutton", "treeitem",
  ]);
  const FRAMES = new Set(["IFRAME", "FRAME"]);
  // Everything `interactiveByMarkup` can accept, as one selector for a native query.
  const MARKUP_INTERACTIVE = "a[href],button,input,select,textarea,summary,[role]," +
    "[contenteditable],[onclick],[tabindex]";

  // Interactive by markup alone; cursor-only clickables are found later, in view only.
  function interactiveByMarkup(el, tag) {
    switch (tag) {
      case "A":
        return el.hasAttribute("href");
      case "BUTTON":
      case "SELECT":
      case "TEXTAREA":
      case "SUMMARY":
        return true;
      case "INPUT":
        return el.type !== "hidden";
    }
    if (!el.hasAttributes()) return false;
    const role = el.getAttribute("role");
    if (role !== null && ROLES.has(role)) return true;
    if (el.hasAttribute("contenteditable") && el.isContentEditable) {
      const parent = el.parentElement;
      return !(parent && parent.isContentEditable); // only the editable region's root
    }
    if (el.hasAttribute("onclick")) return true;
    const tabindex = el.getAttribute("tabindex");
    return tabindex !== null && +tabindex >= 0;
  }

  const squash = (text, max) => {
    const t = text.replace(/\s+/g, " ").trim();
    return t.length > max ? t.slice(0, max - 1) + "…" : t;
  };

  function labelOf(el) {
    const labels = el.labels;
    if (labels && labels.length) return labels[0].textContent;
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const target = el.ownerDocument.getElementById(by.split(" ")[0]);
      if (target) return target.textContent;
    }
    return "";
  }

  function nameOf(el, tag, max) {
    const aria = el.getAttribute("aria-label");
    if (aria) return squash(aria, max);
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return squash(labelOf(el), max);
    let text = squash(el.textContent || "", max);
    if (!text) {
      const img = tag === "IMG" ? el : el.querySelector("img[alt]");
      text = squash(el.getAttribute("title") || (img && img.getAttribute("alt")) || "", max);
    }
    return text;
  }

  // The facts the model needs to act, kept whole: full hrefs and current values.
  function describe(el, tag, max) {
    const d = { tag: tag.toLowerCase(), text: nameOf(el, tag, max) };
    const role = el.getAttribute("role");
    if (role) d.role = role;
    if (tag === "A") d.href = el.href;
    if (tag === "INPUT") {
      d.type = el.type;
      if (el.type === "checkbox" || el.type === "radio") d.checked = el.checked;
      else if (el.type === "password") d.filled = el.value.length > 0; // never the value
      else d.value = el.value;
    } else if (tag === "TEXTAREA") {
      d.value = el.value;
    } else if (tag === "SELECT") {
      const chosen = el.selectedOptions;
      d.value = chosen.length ? squash(chosen[0].textContent, max) : "";
      d.options = el.options.length;
      if (el.multiple) d.multiple = true;
    } else if (el.isContentEditable) {
      d.editable = true;
      d.value = squash(el.textContent || "", 4 * max);
    }
    const attrs = ["name", "placeholder", "aria-expanded", "aria-checked", "aria-selected",
      "aria-haspopup", "aria-controls"];
    for (const a of attrs) {
      const v = el.getAttribute(a);
      if (v !== null && v !== "") d[a] = v;
    }
    if (el.disabled || el.getAttribute("aria-disabled") === "true") d.disabled = true;
    if (el.readOnly) d.readonly = true;
    return d;
  }

  // Is the element what a click at its visible points would reach? Tries the centre, then
  // points near the corners, so a sticky header over one edge does not hide it.
  function reachable(el, r, doc) {
    const root = el.getRootNode();
    const probe = root.elementFromPoint ? root : doc;
    const inset = Math.min(4, r.width / 4, r.height / 4);
    const points = [
      [r.left + r.width / 2, r.top + r.height / 2],
      [r.left + inset, r.top + inset],
      [r.right - inset, r.bottom - inset],
      [r.right - inset, r.top + inset],
      [r.left + inset, r.bottom - inset],
    ];
    const view = doc.defaultView;
    for (const [x, y] of points) {
      if (x < 0 || y < 0 || x >= view.innerWidth || y >= view.innerHeight) continue;
      const hit = probe.elementFromPoint(x, y);
      if (hit && (hit === el || el.contains(hit))) return [x, y];
    }
    return null;
  }

  function snapshot(options) {
    const started = performance.now();
    const margin = options.margin ?? 0;
    const max = options.maxText ?? 80;
    if (options.nextId > nextId) nextId = options.nextId;
    const vw = innerWidth;
    const vh = innerHeight;
    const out = {
      url: location.href,
      title: document.title,
      viewport: [vw, vh],
      scroll: [scrollX, scrollY],
      page: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
      elements: [],
      frames: [],
      above: 0,
      below: 0,
      belowBottom: vh,
      covered: 0,
      gone: [],
      domQuietMs: Math.round(performance.now() - lastMutation),
    };
    for (const id of options.previous ?? []) {
      const el = byId.get(id)?.deref();
      if (!el || !el.isConnected) out.gone.push(id);
    }
    let frameCount = 0;
    const considered = new Set(); // interactive elements the walk has already judged
    const box = (left, top, r) => [Math.round(left), Math.round(top), Math.round(r.width), Math.round(r.height)];

    // Lists `el` (interactive, sized, within range) unless it is hidden or covered.
    const consider = (el, tag, r, left, top, bottom, ctx, pointer) => {
      considered.add(el);
      if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return;
      const inViewport = bottom > ctx.clip[1] && top < ctx.clip[3];
      if (inViewport && !reachable(el, r, ctx.doc)) {
        out.covered++;
        return;
      }
      const d = describe(el, tag, max);
      d.id = assignId(el);
      d.box = box(left, top, r);
      if (ctx.frame) d.frame = ctx.frame;
      if (ctx.shadow) d.shadow = true;
      if (pointer) d.pointer = true;
      if (!inViewport) d.offscreen = true;
      out.elements.push(d);
    };

    // The walk, in document order. ctx: offset of this document in the top viewport, its
    // clip rectangle there, its frame index, whether we are inside a shadow tree, and
    // whether an ancestor already takes the clicks here (`handled`: an interactive or
    // pointer-cursor ancestor). A sized element wholly out of range is not entered: its
    // descendants in normal flow are out of range too, and positioned interactive ones are
    // caught by the pass over the whole document below.
    const visit = (parent, ctx) => {
      for (let el = parent.firstElementChild; el; el = el.nextElementSibling) {
        const tag = el.tagName;
        if (SKIP.has(tag)) continue;
        const r = el.getBoundingClientRect();
        const top = r.top + ctx.y;
        const bottom = r.bottom + ctx.y;
        const left = r.left + ctx.x;
        const right = r.right + ctx.x;
        const sized = r.width > 0 && r.height > 0;
        const inRange = bottom > ctx.clip[1] - margin && top < ctx.clip[3] + margin &&
          right > ctx.clip[0] && left < ctx.clip[2];
        if (sized && !inRange) continue;
        let interactive = interactiveByMarkup(el, tag);
        let pointer = false;
        let style = null;
        if (sized && !interactive && !ctx.handled) {
          style = ctx.view.getComputedStyle(el);
          pointer = interactive = style.cursor === "pointer";
        }
        if (interactive && sized) consider(el, tag, r, left, top, bottom, ctx, pointer);
        // Scrollable containers (reading styles is the expensive part, so only in range).
        if (sized && el.clientHeight > 40 && el.scrollHeight > el.clientHeight + 4) {
          style = style || ctx.view.getComputedStyle(el);
          if (style.overflowY === "auto" || style.overflowY === "scroll") {
            out.elements.push({
              id: assignId(el),
              tag: tag.toLowerCase(),
              text: squash(el.getAttribute("aria-label") || "", max),
              box: box(left, top, r),
              scroll: {
                above: +(el.scrollTop / el.clientHeight).toFixed(1),
                below: +((el.scrollHeight - el.clientHeight - el.scrollTop) / el.clientHeight).toFixed(1),
              },
              ...(ctx.frame ? { frame: ctx.frame } : {}),
            });
          }
        }
        const child = interactive && !ctx.handled ? { ...ctx, handled: true } : ctx;
        if (el.shadowRoot) visit(el.shadowRoot, child.shadow ? child : { ...child, shadow: true });
        if (FRAMES.has(tag)) {
          let doc = null;
          try {
            doc = el.contentDocument;
          } catch (_) {
            doc = null;
          }
          const x = left + el.clientLeft;
          const y = top + el.clientTop;
          const clip = [
            Math.max(ctx.clip[0], x), Math.max(ctx.clip[1], y),
            Math.min(ctx.clip[2], x + el.clientWidth), Math.min(ctx.clip[3], y + el.clientHeight),
          ];
          frameCount++;
          if (doc && doc.documentElement) {
            visit(doc, {
              x, y, clip, frame: frameCount, shadow: false, handled: false, doc, view: doc.defaultView,
            });
          } else {
            // Cross-origin: the engine reaches it through its own CDP session.
            out.frames.push({ id: assignId(el), frame: frameCount, src: el.src, origin: [x, y], clip });
          }
        } else {
          visit(el, child);
        }
      }
    };
    const clip = options.clip ?? [0, 0, vw, vh];
    const origin = options.origin ?? [0, 0];
    const top = { x: origin[0], y: origin[1], clip, frame: options.frame ?? 0, shadow: false,
      handled: false, doc: document, view: window };
    visit(document, top);

    // One native query over the whole document: counts what lies above and below, and
    // lists interactive elements in range that the walk did not reach (fixed or absolute
    // ones inside an out-of-range ancestor).
    for (const el of document.querySelectorAll(MARKUP_INTERACTIVE)) {
      if (considered.has(el) || !interactiveByMarkup(el, el.tagName)) continue;
      const r = el.getBoundingClientRect();
      if (r.width <= 0 || r.height <= 0) continue;
      const t = r.top + top.y;
      const b = r.bottom + top.y;
      if (b <= clip[1] - margin) out.above++;
      else if (t >= clip[3] + margin) {
        out.below++;
        if (b > out.belowBottom) out.belowBottom = b;
      } else if (r.right + top.x > clip[0] && r.left + top.x < clip[2]) {
        consider(el, el.tagName, r, r.left + top.x, t, b, top, false);
      }
    }
    out.nextId = nextId;
    out.inPageMs = +(performance.now() - started).toFixed(2);
    // Forget ids of elements that were garbage-collected, so the map stays small.
    if (byId.size > 4 * (out.elements.length + 256)) {
      for (const [id, ref] of byId) if (!ref.deref()) byId.delete(id);
    }
    return out;
  }

  /** The element with this id, if it still exists. */
  function element(id) {
    const el = byId.get(id)?.deref();
    return el && el.isConnected ? el : null;
  }

  const brief = (el) => {
    const text = squash(el.getAttribute("aria-label") || el.textContent || "", 40);
    return "<" + el.tagName.toLowerCase() + ">" + (text ? " " + JSON.stringify(text) : "");
  };

  // The offset of `el`'s document within the top viewport, through same-origin frames.
  function frameOffset(el) {
    let x = 0;
    let y = 0;
    for (let view = el.ownerDocument.defaultView; view && view.frameElement; view = view.parent) {
      const frame = view.frameElement;
      const r = frame.getBoundingClientRect();
      x += r.left + frame.clientLeft;
      y += r.top + frame.clientTop;
    }
    return [x, y];
  }

  /**
   * Where to click element `id`, in top-viewport pixels: scrolls it into view first if
   * needed. Answers {x, y} or why not: {gone}, {hidden}, {covered: "<what> ..."}.
   */
  function point(id) {
    const el = element(id);
    if (!el) return { gone: true };
    if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return { hidden: true };
    let r = el.getBoundingClientRect();
    const view = el.ownerDocument.defaultView;
    if (r.bottom <= 0 || r.top >= view.innerHeight || r.right <= 0 || r.left >= view.innerWidth) {
      el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
      r = el.getBoundingClientRect();
    }
    if (r.width <= 0 || r.height <= 0) return { hidden: true };
    const spot = reachable(el, r, el.ownerDocument);
    if (!spot) {
      const root = el.getRootNode();
      const probe = root.elementFromPoint ? root : el.ownerDocument;
      const hit = probe.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return { covered: hit ? brief(hit) : "something" };
    }
    const [ox, oy] = frameOffset(el);
    return { x: spot[0] + ox, y: spot[1] + oy, mutations };
  }

  // Suggestions after typing: autocomplete lists often open a few hundred milliseconds after
  // the last key. From focusForTyping until the settle after it, this notes when a popup
  // opens (a listbox, menu, list or dialog appearing, or aria-expanded turning true), and
  // when any other visible element is added outside the field.
  const POPUP = "[role=listbox],[role=option],[role=menu],[role=menuitem],[role=dialog]," +
    "[role=tree],[role=grid],[role=tooltip],ul,ol,li,dialog,datalist,[popover]";
  const POPUP_ROLES = "[role=listbox],[role=option],[role=menu],[role=menuitem]," +
    "[role=dialog],[role=tree],[role=grid]";
  let watch = null; // {observer, popupAt, addedAt, wake, timer}

  function stopWatching() {
    if (!watch) return;
    watch.observer.disconnect();
    clearTimeout(watch.timer);
    watch = null;
  }

  function watchForPopups(field) {
    stopWatching();
    const shown = (el) => {
      if (!el.isConnected || field.contains(el) || el === marksHost) return false;
      if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
      const r = el.getBoundingClientRect();
      return r.width > 1 && r.height > 1; // not a visually hidden live region
    };
    const w = { popupAt: -1, addedAt: -1, wake: null, timer: 0 };
    w.observer = new MutationObserver((records) => {
      const now = performance.now();
      for (const r of records.slice(0, 200)) {
        if (r.type === "attributes") {
          const el = r.target;
          if (r.attributeName === "aria-expanded") {
            if (el.getAttribute("aria-expanded") === "true") w.popupAt = now;
          } else if ((el.matches(POPUP) ||
              (!el.contains(field) && el.querySelector(POPUP_ROLES))) && shown(el)) {
            w.popupAt = now; // an existing popup revealed
          }
        } else {
          for (const node of r.addedNodes) {
            if (node.nodeType !== 1 || !shown(node)) continue;
            if (node.matches(POPUP) || node.querySelector(POPUP)) w.popupAt = now;
            else w.addedAt = now;
          }
        }
      }
      if (w.wake) w.wake();
    });
    const what = { subtree: true, childList: true, attributes: true,
      attributeFilter: ["aria-expanded", "hidden", "style", "class", "open"] };
    w.observer.observe(field.ownerDocument, what);
    // A document observer does not see into shadow trees: a web component's own list.
    const root = field.getRootNode();
    if (root !== field.ownerDocument) w.observer.observe(root, what);
    w.timer = setTimeout(stopWatching, 10000); // never outlives a settle that did not come
    watch = w;
  }

  /**
   * Resolves once the DOM has had no mutation for `quietMs`, or after `timeoutMs`. With
   * `popupMs` (after typing) it first waits, up to that long, for a popup or a new element;
   * with `fresh` the quiet is counted from now, for changes that are about to happen.
   */
  function settle(quietMs, timeoutMs, { popupMs = 0, fresh = false } = {}) {
    const w = popupMs > 0 ? watch : null;
    return new Promise((resolve) => {
      const started = performance.now();
      let timer = 0;
      const check = () => {
        clearTimeout(timer);
        const now = performance.now();
        const quietFor = now - Math.max(lastMutation, fresh ? started : -Infinity);
        // Elements added before the settle began are the keystroke's own echo (a clear
        // button, a counter); a popup counts whenever it opened.
        const seen = w !== null && (w.popupAt >= 0 || w.addedAt >= started);
        const waiting = w !== null && !seen && now - started < popupMs;
        if ((quietFor >= quietMs && !waiting) || now - started >= timeoutMs) {
          if (w) stopWatching();
          const out = { waitedMs: Math.round(now - started), quiet: quietFor >= quietMs, mutations };
          if (w) out.popup = seen;
          resolve(out);
        } else {
          const left = waiting ? popupMs - (now - started) : quietMs - quietFor;
          timer = setTimeout(check, Math.max(1, Math.min(left, timeoutMs - (now - started))));
        }
      };
      if (w) w.wake = check;
      check();
    });
  }

  const valueOf = (el) => (el.isContentEditable ? el.textContent : el.value ?? "");

  // Inputs whose value is set whole, in the input's own format, as their pickers do.
  const FILLED = new Set(["date", "time", "datetime-local", "month", "week", "color", "range",
    "number"]);

  /**
   * Focuses `id` for typing and selects its content when `clear`. For a date, time, colour,
   * slider or number input answers {fill: type, min, max, step} instead: those are set by
   * fill(). Starts watching for suggestions.
   */
  function focusForTyping(id, clear) {
    const el = element(id);
    if (!el) return { gone: true };
    const tag = el.tagName;
    const typable = tag === "TEXTAREA" || el.isContentEditable ||
      (tag === "INPUT" && !["checkbox", "radio", "button", "submit", "reset", "file", "image"].includes(el.type));
    if (!typable) return { notTypable: brief(el) };
    if (el.disabled || (el.readOnly && el.type !== "range" && el.type !== "color")) return { readonly: true };
    if (tag === "INPUT" && FILLED.has(el.type)) {
      el.focus({ preventScroll: false });
      return { fill: el.type, min: el.getAttribute("min"), max: el.getAttribute("max"),
        step: el.getAttribute("step") };
    }
    el.focus({ preventScroll: false });
    if (clear) {
      if (el.isContentEditable) {
        const range = el.ownerDocument.createRange();
        range.selectNodeContents(el);
        const selection = el.ownerDocument.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
      } else {
        el.select();
      }
    } else if (!el.isContentEditable && typeof el.setSelectionRange === "function") {
      try {
        el.setSelectionRange(el.value.length, el.value.length);
      } catch (_) { /* email inputs have no selection */ }
    }
    watchForPopups(el);
    return { ok: true, password: el.type === "password" };
  }

  /**
   * Sets input `id` to `text` (already in its value format) as its picker would: the value,
   * then input and change. This world has its own wrappers of DOM objects, so `el.value`
   * here is the native setter even where a framework (React) redefined `value` on the
   * element for the page; the framework then sees a real change when the events arrive.
   */
  function fill(id, text) {
    const el = element(id);
    if (!el) return { gone: true };
    el.focus({ preventScroll: false });
    const before = el.value;
    el.value = text;
    if (el.value !== before) {
      el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    }
    return { ok: true };
  }

  /**
   * The current value of `id` (text of a contenteditable), or {gone}. For an input whose
   * value breaks its own limits also {invalid: "min"|"max"|"step"|"bad", min, max, step}.
   */
  function value(id) {
    const el = element(id);
    if (!el) return { gone: true };
    const out = { value: valueOf(el) };
    const v = el.tagName === "INPUT" ? el.validity : null;
    const invalid = !v ? null : v.rangeUnderflow ? "min" : v.rangeOverflow ? "max"
      : v.stepMismatch ? "step" : v.badInput ? "bad" : null;
    if (invalid) {
      out.invalid = invalid;
      for (const a of ["min", "max", "step"]) out[a] = el.getAttribute(a);
    }
    return out;
  }

  // The options of a native select, or of the listbox an ARIA combobox controls.
  function optionElements(el) {
    if (el.tagName === "SELECT") return [...el.options];
    const doc = el.ownerDocument;
    const ids = (el.getAttribute("aria-controls") || el.getAttribute("aria-owns") || "").split(/\s+/);
    let box = ids.map((i) => i && doc.getElementById(i)).find(Boolean) || null;
    if (!box && el.getAttribute("role") === "listbox") box = el;
    if (!box) box = el.querySelector("[role=listbox]") || el.parentElement?.querySelector("[role=listbox]");
    return box ? [...box.querySelectorAll("[role=option]")] : [];
  }

  /** Lists the options of `id`: [{text, selected, disabled, id}], and whether several can be chosen. */
  function options(id) {
    const el = element(id);
    if (!el) return { gone: true };
    const found = optionElements(el);
    if (el.tagName !== "SELECT" && !found.length) return { none: brief(el) };
    return {
      native: el.tagName === "SELECT",
      multiple: el.tagName === "SELECT" ? el.multiple
        : found.some((o) => o.closest("[role=listbox]")?.getAttribute("aria-multiselectable") === "true"),
      expanded: el.getAttribute("aria-expanded"),
      options: found.map((o) => ({
        text: squash(o.textContent || o.label || "", 80),
        value: o.value ?? null,
        selected: o.selected ?? o.getAttribute("aria-selected") === "true",
        disabled: !!o.disabled || o.getAttribute("aria-disabled") === "true",
        visible: o.checkVisibility(),
        id: o.tagName === "OPTION" ? null : assignId(o),
      })),
    };
  }

  /**
   * Selects (or with `deselect`, deselects) the option of native select `id` whose text or
   * value is `wanted`, as a click (with Ctrl in a multiple select) would. Answers with every
   * option selected afterwards.
   */
  function selectNative(id, wanted, deselect) {
    const el = element(id);
    if (!el) return { gone: true };
    const text = (o) => o.textContent.trim();
    const want = wanted.trim().toLowerCase();
    const option = [...el.options].find((o) => text(o).toLowerCase() === want || o.value === wanted) ||
      [...el.options].find((o) => text(o).toLowerCase().includes(want));
    if (!option) return { missing: [...el.options].map(text) };
    if (option.disabled) return { disabled: text(option) };
    if (deselect && !el.multiple) return { single: true };
    el.focus();
    if (option.selected === deselect) {
      option.selected = !deselect;
      el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    }
    return {
      option: text(option),
      // The option itself, not el.value: in a multiple select that is the first selected.
      ok: option.selected === !deselect,
      multiple: el.multiple,
      selected: [...el.selectedOptions].map(text),
    };
  }

  /** Scrolls the page, or element `id`, by `screens` (negative: up). */
  function scroll(id, screens) {
    const target = id ? element(id) : null;
    if (id && !target) return { gone: true };
    const scroller = target || document.scrollingElement || document.documentElement;
    const before = scroller.scrollTop;
    const height = target ? target.clientHeight : innerHeight;
    scroller.scrollBy({ top: screens * height, behavior: "instant" });
    const after = scroller.scrollTop;
    const left = scroller.scrollHeight - scroller.clientHeight - after;
    return { moved: Math.round(after - before), atEnd: left <= 1, atStart: after <= 0 };
  }

  /** Scrolls the first visible occurrence of `text` into view. */
  function scrollToText(text) {
    const want = text.toLowerCase();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.data.toLowerCase().includes(want)) continue;
      const parent = node.parentElement;
      if (!parent || !parent.checkVisibility()) continue;
      parent.scrollIntoView({ block: "center", behavior: "instant" });
      return { found: brief(parent) };
    }
    return { missing: true };
  }

  /** The page's readable text, markdown-ish: headings, list items, links, paragraphs. */
  function readable(maxChars) {
    const out = [];
    let size = 0;
    const push = (line) => {
      if (size < maxChars && line) {
        out.push(line);
        size += line.length + 1;
      }
    };
    const BLOCKS = new Set(["P", "LI", "H1", "H2", "H3", "H4", "H5", "H6", "PRE", "TD", "TH",
      "BLOCKQUOTE", "DT", "DD", "FIGCAPTION", "SUMMARY", "LABEL", "BUTTON", "A"]);
    const walk = (node) => {
      for (let el = node.firstElementChild; el && size < maxChars; el = el.nextElementSibling) {
        const tag = el.tagName;
        if (SKIP.has(tag) || !el.checkVisibility()) continue;
        const leafBlock = BLOCKS.has(tag) && !el.querySelector("p,li,h1,h2,h3,h4,h5,h6,pre,table");
        if (leafBlock) {
          const text = squash(el.innerText || "", 2000);
          if (!text) continue;
          if (tag[0] === "H" && tag.length === 2) push("#".repeat(+tag[1]) + " " + text);
          else if (tag === "LI") push("- " + text);
          else if (tag === "PRE") push("```\n" + el.innerText.trim() + "\n```");
          else if (tag === "A" && el.href) push("[" + text + "](" + el.href + ")");
          else push(text);
        } else {
          if (el.shadowRoot) walk(el.shadowRoot);
          walk(el);
        }
      }
    };
    walk(document.body || document.documentElement);
    const text = out.join("\n");
    return { text: text.slice(0, maxChars), truncated: size >= maxChars };
  }

  /** Where the content box of <iframe> `id` starts, in top-viewport pixels. */
  function frameOrigin(id) {
    const frame = element(id);
    if (!frame) return { gone: true };
    const r = frame.getBoundingClientRect();
    const [ox, oy] = frameOffset(frame);
    return { x: r.left + frame.clientLeft + ox, y: r.top + frame.clientTop + oy };
  }

  // Set-of-mark boxes for vision models: numbered outlines drawn over the page for one
  // screenshot, in a closed shadow root so the page's CSS cannot restyle them.
  let marksHost = null;
  const MARK_COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080"];
  function showMarks(boxes) {
    hideMarks();
    marksHost = document.createElement("alphascout-marks");
    const root = marksHost.attachShadow({ mode: "closed" });
    const parts = boxes.map(([id, x, y, w, h], i) => {
      const c = MARK_COLOURS[i % MARK_COLOURS.length];
      const above = y >= 16 ? -16 : 0; // no room above the viewport's top edge: label inside
      return `<div style="position:fixed;left:${x}px;top:${y}px;width:${w}px;height:${h}px;` +
        `outline:2px solid ${c};box-sizing:border-box"><span style="position:absolute;left:-2px;` +
        `top:${above}px;background:${c};color:#fff;font:bold 11px/14px sans-serif;padding:0 3px">${id}</span></div>`;
    });
    root.innerHTML = `<div style="position:fixed;inset:0;pointer-events:none;z-index:2147483647">${parts.join("")}</div>`;
    document.documentElement.appendChild(marksHost);
    return boxes.length;
  }
  function hideMarks() {
    if (marksHost) marksHost.remove();
    marksHost = null;
  }

  globalThis.alphascout = Object.freeze({
    version: 5,
    showMarks,
    hideMarks,
    /** The id of an element the engine holds a remote reference to (an <iframe>). */
    idFor: assignId,
    frameOrigin,
    /** Basic facts about the document. */
    describe() {
      return { title: document.title, url: location.href, readyState: document.readyState };
    },
    snapshot,
    element,
    point,
    settle,
    focusForTyping,
    fill,
    value,
    options,
    selectNative,
    scroll,
    scrollToText,
    readable,
  });
})();
