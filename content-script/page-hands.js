// The page-side half of the actions beyond clicking and typing: where a phrase is (to select
// it with the mouse), what a slider holds and where its track runs, and the selection or
// focus a copy or paste works on. Injected right after page-agent.js into the same isolated
// world, so it reads elements through `alphascout.element` and answers in the same
// top-viewport pixels as `alphascout.point`. The mouse and keys themselves are real input
// the engine sends over CDP: pages hear the events a person's hand makes.
(() => {
  if (globalThis.alphascoutHands) return;
  const { element, frameOffset } = globalThis.alphascout;

  const squash = (text) => text.replace(/\s+/g, " ").trim();
  const clip = (text, max) => (text.length > max ? text.slice(0, max - 1) + "…" : text);

  // Inside these a press and release is a click (or the start of a drag), not a selection.
  const PRESSABLE = "a[href],button,label,summary,select,[role=button],[role=link]," +
    "[role=menuitem],[role=option],[role=tab],[draggable=true],[onclick]";

  const isField = (el) => el.tagName === "TEXTAREA" ||
    (el.tagName === "INPUT" && !["checkbox", "radio", "button", "submit", "reset", "file",
      "image", "range", "color"].includes(el.type));

  /** The visible text nodes under `root`, joined with single spaces, and where each starts. */
  function textIndex(root) {
    const nodes = [];
    let joined = "";
    const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!node.data.trim() || !parent || !parent.checkVisibility({ visibilityProperty: true })) continue;
      if (/^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/.test(parent.tagName)) continue;
      // Each character of the joined text maps back to a node offset (whitespace runs
      // collapse to one space, as a person reads them).
      for (let i = 0; i < node.data.length; i++) {
        const c = node.data[i];
        const space = /\s/.test(c);
        if (space && (joined.endsWith(" ") || joined === "")) continue;
        nodes.push([node, i]);
        joined += space ? " " : c;
      }
      if (!joined.endsWith(" ")) {
        nodes.push([node, node.data.length]);
        joined += " ";
      }
    }
    return { joined, nodes };
  }

  /** The range of the first visible occurrence of `text` under `root` (exact, then ignoring case). */
  function findRange(root, text) {
    const want = squash(text);
    if (!want) return null;
    const { joined, nodes } = textIndex(root);
    let at = joined.indexOf(want);
    if (at < 0) at = joined.toLowerCase().indexOf(want.toLowerCase());
    if (at < 0) return null;
    const [startNode, startOffset] = nodes[at];
    const [endNode, endOffset] = nodes[at + want.length - 1];
    const range = root.ownerDocument.createRange();
    range.setStart(startNode, startOffset);
    range.setEnd(endNode, Math.min(endOffset + 1, endNode.data.length));
    return range;
  }

  // The middle of one character's box, nudged toward its outer edge: pressing there puts the
  // caret before the first character and releasing there puts it after the last.
  function charPoint(range, node, offset, side) {
    const one = range.cloneRange();
    one.setStart(node, offset);
    one.setEnd(node, Math.min(offset + 1, node.data.length));
    const rects = one.getClientRects();
    const r = rects[side === "start" ? 0 : rects.length - 1] || one.getBoundingClientRect();
    const x = side === "start" ? r.left + Math.min(1, r.width / 4) : r.right - Math.min(1, r.width / 4);
    return [x, r.top + r.height / 2];
  }

  /**
   * Where to press and release the mouse to select `text` (inside element `id`, or anywhere
   * on the page): {start, end, fits} in top-viewport pixels, or {field} when `id` is a text
   * field (selected by its own API), {missing}, {gone}. `fits` is false when the phrase
   * sits inside a link or a button, where a press and release would click.
   */
  function textSpan(text, id) {
    const root = id ? element(id) : document.body;
    if (!root) return { gone: true };
    if (isField(root)) return { field: true };
    const range = findRange(root, text);
    if (!range) return { missing: true };
    const host = range.startContainer.parentElement;
    const view = root.ownerDocument.defaultView;
    let box = range.getBoundingClientRect();
    if (box.top < 0 || box.bottom > view.innerHeight) {
      host.scrollIntoView({ block: "center", behavior: "instant" });
      box = range.getBoundingClientRect();
    }
    const [ox, oy] = frameOffset(root);
    const start = charPoint(range, range.startContainer, range.startOffset, "start");
    const end = charPoint(range, range.endContainer, range.endOffset - 1, "end");
    const pressable = (node) => node.parentElement?.closest(PRESSABLE);
    const fits = !pressable(range.startContainer) && !pressable(range.endContainer) &&
      box.bottom > 0 && box.top < view.innerHeight;
    return { start: [start[0] + ox, start[1] + oy], end: [end[0] + ox, end[1] + oy], fits };
  }

  /**
   * The middle of the visible text `text` in the main document, outside element `skipId`
   * (the thing being dragged): a node whose whole text it is first (a heading, a drop zone's
   * words), else the first place it occurs. Answers {x, y} or {missing}.
   */
  function textPoint(text, skipId) {
    const skip = skipId ? element(skipId) : null;
    const want = squash(text).toLowerCase();
    if (!want) return { missing: true };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    let partial = null;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || (skip && skip.contains(parent))) continue;
      const own = squash(node.data).toLowerCase();
      if (!own.includes(want) || !parent.checkVisibility({ visibilityProperty: true })) continue;
      if (own === want) {
        partial = node;
        break;
      }
      partial = partial || node;
    }
    if (!partial) return { missing: true };
    partial.parentElement.scrollIntoView({ block: "nearest", inline: "nearest", behavior: "instant" });
    const range = document.createRange();
    range.selectNodeContents(partial);
    const r = range.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return { missing: true };
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  }

  /** What is selected now: the page's selection, or the selected part of the focused field. */
  function selection() {
    const active = document.activeElement;
    if (active && isField(active) && active.selectionStart !== active.selectionEnd) {
      return active.value.slice(active.selectionStart, active.selectionEnd);
    }
    return document.getSelection()?.toString() || "";
  }

  /**
   * Selects `text` without the mouse (inside a field through its own API), when a press
   * and release there would click something. Answers {selected} or {missing}/{gone}.
   */
  function selectText(text, id) {
    const root = id ? element(id) : document.body;
    if (!root) return { gone: true };
    if (isField(root)) {
      const at = root.value.toLowerCase().indexOf(squash(text).toLowerCase());
      if (at < 0) return { missing: true };
      root.focus();
      root.setSelectionRange(at, at + squash(text).length);
      return { selected: selection() };
    }
    const range = findRange(root, text);
    if (!range) return { missing: true };
    const chosen = root.ownerDocument.getSelection();
    chosen.removeAllRanges();
    chosen.addRange(range);
    return { selected: selection() };
  }

  /**
   * Selects what `id` holds (a field's value, or its text), for a copy. Answers {selected}.
   */
  function selectAll(id) {
    const el = element(id);
    if (!el) return { gone: true };
    if (isField(el)) {
      el.focus();
      el.select();
    } else {
      const range = el.ownerDocument.createRange();
      range.selectNodeContents(el);
      const chosen = el.ownerDocument.getSelection();
      chosen.removeAllRanges();
      chosen.addRange(range);
    }
    return { selected: selection() };
  }

  /** Focuses field `id` with the caret at its end, where a paste goes. */
  function focusAtEnd(id) {
    const el = element(id);
    if (!el) return { gone: true };
    if (!isField(el) && !el.isContentEditable) return { notField: true };
    if (el.disabled || el.readOnly) return { readonly: true };
    el.focus({ preventScroll: false });
    if (isField(el)) {
      try {
        el.setSelectionRange(el.value.length, el.value.length);
      } catch {
        // Email and number fields have no caret API; focus is enough.
      }
    } else {
      const range = el.ownerDocument.createRange();
      range.selectNodeContents(el);
      range.collapse(false);
      const chosen = el.ownerDocument.getSelection();
      chosen.removeAllRanges();
      chosen.addRange(range);
    }
    return { ok: true };
  }

  // The thumb of slider `el`: itself, the slider inside it, or the one it sits in.
  const thumbOf = (el) => el.matches("[role=slider]") ? el
    : el.querySelector("[role=slider]") || el.closest("[role=slider]");

  const number = (v) => (v === null || v === "" || !Number.isFinite(Number(v)) ? null : Number(v));

  /**
   * A slider's range and where to drag: {native} for <input type=range> (typed instead),
   * else {min, max, now, text, vertical, thumb: [x, y], track: [left, top, width, height]}
   * in top-viewport pixels, or {notSlider}/{gone}. The slider is `id` itself, the slider
   * inside it, or the one it sits in; a thumb's track is the first box around it that is
   * clearly longer than the thumb.
   */
  function slider(id) {
    const el = element(id);
    if (!el) return { gone: true };
    if (el.tagName === "INPUT" && el.type === "range") return { native: true };
    const native = el.querySelector("input[type=range]");
    if (native && !el.querySelector("[role=slider]")) return { native: true };
    const thumb = thumbOf(el);
    if (!thumb) return { notSlider: true };
    const min = number(thumb.getAttribute("aria-valuemin")) ?? 0;
    const max = number(thumb.getAttribute("aria-valuemax")) ?? 100;
    const now = number(thumb.getAttribute("aria-valuenow"));
    const vertical = thumb.getAttribute("aria-orientation") === "vertical";
    thumb.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
    const t = thumb.getBoundingClientRect();
    const long = (r) => (vertical ? r.height >= t.height * 3 : r.width >= t.width * 3);
    let track = thumb.getBoundingClientRect();
    if (!long(track)) {
      for (let up = thumb.parentElement, n = 0; up && n < 4; up = up.parentElement, n++) {
        const r = up.getBoundingClientRect();
        if (long(r)) {
          track = r;
          break;
        }
      }
    }
    // A wide slider element is the track itself; its thumb is where the value puts it.
    const [ox, oy] = frameOffset(thumb);
    let at = [t.left + t.width / 2, t.top + t.height / 2];
    if (track === t || (!vertical && t.width >= track.width) || (vertical && t.height >= track.height)) {
      const share = now === null || max === min ? 0 : (now - min) / (max - min);
      at = vertical ? [t.left + t.width / 2, t.bottom - share * t.height]
        : [t.left + share * t.width, t.top + t.height / 2];
      track = t;
    }
    return {
      min, max, now, vertical,
      text: clip(squash(thumb.getAttribute("aria-valuetext") || ""), 80),
      thumb: [at[0] + ox, at[1] + oy],
      track: [track.left + ox, track.top + oy, track.width, track.height],
    };
  }

  /** Focuses a custom slider's thumb, for the arrow keys that finish setting it. */
  function focusSlider(id) {
    const el = element(id);
    const thumb = el && thumbOf(el);
    if (!thumb) return { gone: true };
    thumb.focus({ preventScroll: true });
    return { focused: document.activeElement === thumb || thumb.contains(document.activeElement) };
  }

  globalThis.alphascoutHands = Object.freeze({
    textSpan,
    textPoint,
    selection,
    selectText,
    selectAll,
    focusAtEnd,
    slider,
    focusSlider,
  });
})();
