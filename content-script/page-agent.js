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
    "[contenteditable],[onclick],[tabindex],[draggable=true]";

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
    // Made to be dragged: list items, cards, handles.
    if (el.getAttribute("draggable") === "true") return true;
    const tabindex = el.getAttribute("tabindex");
    return tabindex !== null && +tabindex >= 0;
  }

  const squash = (text, max) => {
    const t = text.replace(/\s+/g, " ").trim();
    return t.length > max ? t.slice(0, max - 1) + "…" : t;
  };

  // Fields whose name is a label, never their own content.
  const FIELDS = new Set(["INPUT", "SELECT", "TEXTAREA"]);
  const FIELD_SELECTOR = "input:not([type=hidden]),select,textarea";
  // Interactive elements that own everything inside them: a pointer cursor on a child of a
  // button is still the button. Other interactive elements (tabindex-only, onclick, pointer
  // cursor, container roles) may hold separately clickable items.
  const STRONG_TAGS = new Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "LABEL"]);
  const STRONG_ROLES = new Set(["button", "link", "checkbox", "radio", "switch", "tab", "menuitem",
    "menuitemcheckbox", "menuitemradio", "option", "treeitem", "textbox", "searchbox", "slider",
    "spinbutton"]);
  const HEADINGS = { H1: 1, H2: 2, H3: 3, H4: 4, H5: 5, H6: 6 };
  // The value format of inputs whose text a person types differently from what they hold.
  const FORMATS = { date: "YYYY-MM-DD", time: "HH:MM", "datetime-local": "YYYY-MM-DDTHH:MM",
    month: "YYYY-MM", week: "YYYY-Www", color: "#rrggbb" };
  // Class or id words that name an icon-only control, as a person reads the icon. Whole
  // words only, so "pull-left" or "address" name nothing.
  const ICON_WORDS = {
    prev: "Previous", previous: "Previous", back: "Back", next: "Next", forward: "Next",
    close: "Close", dismiss: "Close", times: "Close", search: "Search", magnifier: "Search",
    menu: "Menu", hamburger: "Menu", burger: "Menu", delete: "Delete", trash: "Delete",
    remove: "Remove", edit: "Edit", pencil: "Edit", add: "Add", plus: "Add", minus: "Minus",
    cart: "Cart", basket: "Cart", settings: "Settings", gear: "Settings", cog: "Settings",
    user: "Account", account: "Account", profile: "Account", home: "Home", calendar: "Calendar",
    download: "Download", upload: "Upload", share: "Share", info: "Info", help: "Help",
    more: "More", ellipsis: "More", kebab: "More", expand: "Expand", collapse: "Collapse",
    play: "Play", pause: "Pause", refresh: "Refresh", reload: "Refresh", copy: "Copy",
    filter: "Filter", sort: "Sort", heart: "Favourite", star: "Favourite",
    bell: "Notifications", mail: "Mail", envelope: "Mail", print: "Print",
  };
  // An arrow's direction word: chevron-left, arrow-right, ui-icon-circle-triangle-w.
  const ARROWS = new Set(["chevron", "arrow", "caret", "angle", "triangle"]);
  const DIRECTIONS = { left: "Previous", w: "Previous", right: "Next", e: "Next", up: "Up", n: "Up",
    down: "Down", s: "Down" };
  const OPTION_LIMIT = 12;
  const LINE_MAX = 2000;

  const textOf = (el) => (el ? squash(el.textContent || "", 200) : "");

  // The text of the elements `ids` (aria-labelledby) names, in order.
  function textOfIds(el, ids) {
    const root = el.getRootNode();
    const find = (id) => (root.getElementById ? root.getElementById(id) : el.ownerDocument.getElementById(id));
    return ids.split(/\s+/).map((id) => id && textOf(find(id))).filter(Boolean).join(" ");
  }

  // A field's name as its markup gives it: label, aria-labelledby or aria-label.
  function labelOf(el) {
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const text = textOfIds(el, by);
      if (text) return text;
    }
    const aria = el.getAttribute("aria-label");
    if (aria) return aria;
    const labels = el.labels;
    if (labels && labels.length) {
      // A label that wraps its field also holds the field's own text (a select's options).
      return [...labels].map((label) => {
        if (!label.contains(el)) return label.textContent;
        let text = "";
        for (const node of label.childNodes) {
          if (node === el || (node.nodeType === 1 && node.contains(el))) continue;
          text += " " + (node.nodeType === 1 ? node.innerText || "" : node.textContent);
        }
        return text;
      }).join(" ");
    }
    return "";
  }

  // A label is short; a longer run of text beside a field is a paragraph or an instruction.
  const LABEL_CHARS = 60;
  // Sentence punctuation between words: more than one sentence, or an abbreviation inside
  // running text. Neither is how a field is named.
  const SENTENCE_BREAK = /[.!?]\s+\S/;

  // The nearest visible text before field `el` in the same row, cell or group (after it,
  // for checkboxes and radios), else its table column's header: {text, node}, where `node`
  // is the text node or element it came from (null for a header), or null when there is
  // none.
  function nearbyText(el) {
    const after = el.type === "checkbox" || el.type === "radio";
    const step = after ? "nextSibling" : "previousSibling";
    let node = el;
    for (let depth = 0; depth < 4 && node; depth++) {
      for (let sib = node[step]; sib; sib = sib[step]) {
        if (sib.nodeType === 3) {
          if (sib.data.trim()) return { text: squash(sib.data, 200), node: sib };
          continue;
        }
        if (sib.nodeType !== 1 || SKIP.has(sib.tagName)) continue;
        // Text beyond another field belongs to that field.
        if (sib.matches(FIELD_SELECTOR) || sib.querySelector(FIELD_SELECTOR)) return null;
        if (sib.closest("[aria-hidden=true]") || !sib.checkVisibility({ opacityProperty: true })) continue;
        const r = sib.getBoundingClientRect();
        if (r.width <= 1 && r.height <= 1) continue;
        const text = sib.innerText || "";
        if (text.trim()) return { text: squash(text, 200), node: sib };
      }
      const parent = node.parentElement;
      if (!parent || /^(FORM|FIELDSET|TABLE|TBODY|THEAD|BODY|HTML|UL|OL)$/.test(parent.tagName)) break;
      node = parent;
    }
    const cell = el.closest("td,th");
    const table = cell && cell.closest("table");
    if (table && cell.parentElement) {
      const head = table.tHead?.rows[0] || table.rows[0];
      const header = head && head !== cell.parentElement ? head.cells[cell.cellIndex] : null;
      if (header) return { text: squash(header.textContent || "", 200), node: null };
    }
    return null;
  }

  // Does `node` share a line with field `el`, as a label in the same row or cell does,
  // rather than stand in a block of its own above or below it?
  function level(node, el) {
    let r;
    if (node.nodeType === 3) {
      const range = node.ownerDocument.createRange();
      range.selectNodeContents(node);
      r = range.getBoundingClientRect();
    } else {
      r = node.getBoundingClientRect();
    }
    const f = el.getBoundingClientRect();
    return Math.min(r.bottom, f.bottom) - Math.max(r.top, f.top) > 1;
  }

  // Text a person reads as a field's name when the markup gives none, marked inferred.
  // Answers [name, the node whose text the name stands for, or null]. Only a name that is
  // plainly a label (beside the field or in its cell, ending in a colon, a <label>) stands
  // for its text; a word alone above a field names it and stays a line too. A paragraph, a
  // sentence or a lone code above a field is what the page says, not a name.
  function inferredName(el) {
    const near = nearbyText(el);
    const text = near ? near.text : "";
    if (!text || text.length > LABEL_CHARS || SENTENCE_BREAK.test(text)) return ["", null];
    const node = near.node;
    if (!node) return [text, null]; // a column header, said in its own row
    if (level(node, el)) return [text, node];
    if (node.nodeType === 1 && (node.tagName === "P" || node.querySelector("p"))) return ["", null];
    const colon = text.endsWith(":");
    if (!colon && /\s/.test(text) && text.endsWith(".")) return ["", null];
    if (!colon && !/\s/.test(text) && /\d/.test(text)) return ["", null];
    const cell = el.closest("td,th");
    const label = colon || (node.nodeType === 1 && node.tagName === "LABEL") || (cell && cell.contains(node));
    return [text, label ? node : null];
  }

  // A name for a control that shows no text: its title, an image's alt, an SVG title, or
  // what its icon's class says (inferred).
  function iconName(el, max) {
    const title = el.getAttribute("title");
    if (title) return [squash(title, max), false];
    const img = el.tagName === "IMG" ? el : el.querySelector("img[alt]");
    const alt = img && img.getAttribute("alt");
    if (alt) return [squash(alt, max), false];
    const svgTitle = el.querySelector("svg title");
    if (svgTitle && svgTitle.textContent.trim()) return [squash(svgTitle.textContent, max), false];
    const words = [el, ...el.querySelectorAll("[class]")].slice(0, 4)
      .map((e) => (e.getAttribute("class") || "") + " " + (e.id || "")).join(" ")
      .toLowerCase().split(/[^a-z0-9]+/);
    for (const word of words) if (Object.hasOwn(ICON_WORDS, word)) return [ICON_WORDS[word], true];
    if (words.some((w) => ARROWS.has(w))) {
      for (const word of words) if (Object.hasOwn(DIRECTIONS, word)) return [DIRECTIONS[word], true];
    }
    return ["", false];
  }

  // The facts the model needs to act, kept whole: full hrefs and current values. The name
  // of a non-field is filled in by the walk from the visible text inside it.
  function describe(el, tag, max) {
    const d = { tag: tag.toLowerCase(), text: "" };
    const role = el.getAttribute("role");
    if (role) d.role = role;
    if (tag === "A" && el.hasAttribute("href")) d.href = el.href;
    if (FIELDS.has(tag)) {
      d.text = squash(labelOf(el), max);
      if (!d.text && !el.getAttribute("placeholder") && !el.getAttribute("title")) {
        const [name, source] = inferredName(el);
        if (name) {
          d.text = squash(name, max);
          d.inferred = true;
          if (source) d.source = source;
        }
      }
    } else {
      const aria = el.getAttribute("aria-label") || (el.getAttribute("aria-labelledby") &&
        textOfIds(el, el.getAttribute("aria-labelledby")));
      if (aria) d.text = squash(aria, max);
    }
    if (tag === "INPUT") {
      const type = el.type;
      d.type = type;
      if (type === "checkbox" || type === "radio") {
        d.checked = el.checked;
        if (el.indeterminate) d.mixed = true;
      } else if (isSecret(el)) {
        // Never the value: only whether it holds one.
        d.filled = el.value.length > 0;
        if (type !== "password") d.secret = true;
      }
      else if (type !== "submit" && type !== "button" && type !== "reset") d.value = el.value;
      else d.text = d.text || squash(el.value, max);
      if (FORMATS[type]) d.format = FORMATS[type];
      if (type === "number" || type === "range" || FORMATS[type]) {
        for (const a of ["min", "max", "step"]) {
          const v = el.getAttribute(a);
          if (v !== null && v !== "") d[a] = v;
        }
      }
    } else if (tag === "TEXTAREA") {
      d.value = el.value;
    } else if (tag === "SELECT") {
      const options = el.options;
      d.options = options.length;
      if (el.multiple) {
        d.multiple = true;
        d.values = [...el.selectedOptions].map((o) => squash(o.textContent, max));
      } else {
        d.value = el.selectedOptions.length ? squash(el.selectedOptions[0].textContent, max) : "";
      }
      d.optionTexts = [];
      for (let i = 0; i < options.length && i < OPTION_LIMIT; i++) {
        d.optionTexts.push(squash(options[i].textContent, 40));
      }
    } else if (el.isContentEditable) {
      d.editable = true;
      d.value = squash(el.textContent || "", 4 * max);
    }
    // A custom slider or spinner shows its value as a person reads it off the widget.
    if (role === "slider" || role === "spinbutton") {
      const now = el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow");
      if (now !== null && now !== "") d.value = squash(now, max);
      for (const a of ["min", "max"]) {
        const v = el.getAttribute("aria-value" + a);
        if (v !== null && v !== "") d[a] = v;
      }
    }
    const attrs = ["name", "placeholder", "aria-expanded", "aria-checked", "aria-selected",
      "aria-haspopup", "aria-controls"];
    for (const a of attrs) {
      const v = el.getAttribute(a);
      if (v !== null && v !== "") d[a] = v;
    }
    if (el.disabled || el.getAttribute("aria-disabled") === "true") d.disabled = true;
    if (el.readOnly) d.readonly = true;
    if (el.required || el.getAttribute("aria-required") === "true") d.required = true;
    if (el.getAttribute("aria-invalid") === "true" || (el.willValidate && el.matches(":user-invalid"))) {
      d.invalid = true;
    }
    // The state leaves out a name that repeats the value or the name attribute (typed
    // what the page shows above the box, say): the text then stays where a person sees it.
    if (d.source) {
      const same = (v) => typeof v === "string" && squash(v, max).toLowerCase() === d.text.toLowerCase();
      if (same(d.value) || same(d.name)) delete d.source;
    }
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

  // Children that are a list of like items (same tag and class, each with text): in a
  // clickable region, each is its own click target rather than one run-together element.
  function holdsItems(el) {
    if (el.childElementCount < 2) return false;
    const seen = new Map();
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
      if (!c.firstChild) continue;
      const key = c.tagName + "." + c.className;
      const n = (seen.get(key) || 0) + 1;
      if (n >= 2) return true;
      seen.set(key, n);
    }
    return false;
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
      text: [],
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
    const consumed = new Set(); // text that became a field's name, not to be said again
    const said = new Set(); // fields whose line says the text their name came from
    const box = (left, top, r) => [Math.round(left), Math.round(top), Math.round(r.width), Math.round(r.height)];

    // Visible text, gathered into lines between the listed elements. `line` collects the
    // text of the block being read; a block boundary or a listed element ends it.
    let line = null; // {parts, prefix, node, rect, doc, inView}
    const flush = () => {
      if (!line) return;
      const current = line;
      line = null;
      let text = current.parts.join("").replace(/\s+/g, " ").trim();
      if (!text || (current.inView && coveredText(current))) return;
      const full = text.length;
      if (full > LINE_MAX) text = text.slice(0, LINE_MAX);
      const entry = { at: out.elements.length, line: current.prefix + text };
      if (full > LINE_MAX) entry.cut = full;
      out.text.push(entry);
    };
    // Text under an overlay is not what a person sees: probe where its first words are.
    const coveredText = ({ node, rect, doc }) => {
      const el = node.parentElement;
      if (!el) return false;
      const root = node.getRootNode();
      const probe = root.elementFromPoint ? root : doc;
      const x = rect.left + Math.min(rect.width / 2, 8);
      const y = rect.top + Math.min(rect.height / 2, 8);
      const view = doc.defaultView;
      if (x < 0 || y < 0 || x >= view.innerWidth || y >= view.innerHeight) return false;
      const hit = probe.elementFromPoint(x, y);
      return !!hit && hit !== el && !el.contains(hit) && !hit.contains(el);
    };
    const addText = (node, ctx) => {
      const data = node.data;
      if (ctx.cell) {
        ctx.cell.push(data);
        return;
      }
      if (!line) {
        if (!data.trim()) return;
        ctx.range.selectNodeContents(node);
        const rect = ctx.range.getBoundingClientRect();
        if (rect.width === 0 && rect.height === 0) return; // not rendered
        const t = rect.top + ctx.y;
        const b = rect.bottom + ctx.y;
        if (b <= ctx.clip[1] - margin || t >= ctx.clip[3] + margin) return;
        const inView = b > ctx.clip[1] && t < ctx.clip[3];
        line = { parts: [], prefix: ctx.prefix, node, rect, doc: ctx.doc, inView };
      }
      line.parts.push(data);
    };

    // Lists `el` (interactive, sized, within range) unless it is hidden or covered. Returns
    // its entry, whose name the walk completes.
    const consider = (el, tag, r, left, top, bottom, ctx, pointer) => {
      considered.add(el);
      if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return null;
      const inViewport = bottom > ctx.clip[1] && top < ctx.clip[3];
      if (inViewport && !reachable(el, r, ctx.doc)) {
        out.covered++;
        return null;
      }
      flush();
      const d = describe(el, tag, max);
      if (d.source) {
        // The text the name came from is said once, on the field's line.
        said.add(d);
        const last = out.text[out.text.length - 1];
        if (last && last.at === out.elements.length && squash(last.line, 200) === squash(d.text, 200)) {
          out.text.pop();
        } else {
          consumed.add(d.source);
        }
      }
      delete d.source;
      d.id = assignId(el);
      d.box = box(left, top, r);
      if (ctx.frame) d.frame = ctx.frame;
      if (ctx.shadow) d.shadow = true;
      if (pointer) d.pointer = true;
      if (!inViewport) d.offscreen = true;
      if (ctx.owner) ctx.owner.container = true;
      out.elements.push(d);
      if (ctx.cell) ctx.cell.push(" [" + d.id + "] ");
      return d;
    };

    // A listed element's name, from the visible text the walk found inside it.
    const finishName = (d, el, named) => {
      if (!d.text && !FIELDS.has(el.tagName)) {
        d.text = squash(named.join(" "), max);
        if (!d.text && d.container) {
          // A list or menu whose items are listed says nothing they do not; a box the
          // model can scroll stays.
          d.text = squash(el.getAttribute("title") || "", max);
          if (!d.text && !d.scroll && !STRONG_TAGS.has(el.tagName)) d.drop = true;
        } else if (!d.text) {
          // Screen-reader text is the name an icon's author gave it.
          d.text = squash(el.textContent || "", max);
        }
        if (!d.text && !d.container) {
          const [name, inferred] = iconName(el, max);
          d.text = name;
          if (inferred) d.inferred = true;
        }
      }
    };

    // A table row: one line, cells separated, with the table's header row first when the
    // header itself is out of range.
    const startRow = (el, ctx) => {
      flush();
      const slot = out.text.length;
      out.text.push(null);
      const table = el.closest("table");
      if (table && !ctx.tables.has(table)) {
        ctx.tables.add(table);
        const head = table.tHead?.rows[0] || (table.rows[0] && [...table.rows[0].cells].every((c) => c.tagName === "TH") ? table.rows[0] : null);
        if (head && head !== el && head.getBoundingClientRect().bottom + ctx.y <= ctx.clip[1] - margin) {
          const names = [...head.cells].map((c) => squash(c.textContent || "", max));
          out.text[slot] = { at: out.elements.length, line: "| " + names.join(" | ") + " |" };
          out.text.push(null);
        }
      }
      return { slot: out.text.length - 1, cells: [], at: out.elements.length };
    };
    const endRow = (row) => {
      const cells = row.cells.map((c) => c.join("").replace(/\s+/g, " ").trim());
      // Rows of nothing but listed elements add nothing their lines do not say; nor does a
      // form row whose one text is the name of the field beside it.
      const texts = cells.filter((c) => c && !/^(\[\d+\]\s*)+$/.test(c));
      const named = texts.length === 1 &&
        out.elements.slice(row.at).some((d) => said.has(d) && d.text === texts[0]);
      out.text[row.slot] = texts.length && !named ? { at: row.at, line: "| " + cells.join(" | ") + " |" } : null;
    };

    // The walk, in document order. ctx: offset of this document in the top viewport, its
    // clip rectangle there, its frame index, whether we are inside a shadow tree, `strong`
    // (an ancestor button, link or field takes every click inside it), `named` (the name
    // parts of the listed element we are inside, or null), `items` (the parent holds a list
    // of like clickable items), `pointer` (the parent's cursor is a pointer), `quiet` (text
    // here is not shown: aria-hidden, transparent, clipped) and the text line prefix. A sized
    // element wholly out of range is not entered: its descendants in normal flow are out of
    // range too, and positioned interactive ones are caught by the pass below.
    const visit = (parent, ctx) => {
      for (let node = parent.firstChild; node; node = node.nextSibling) {
        if (node.nodeType === 3) {
          if (ctx.quiet || consumed.has(node)) continue;
          if (ctx.named) ctx.named.push(node.data);
          else if (ctx.text) addText(node, ctx);
          continue;
        }
        if (node.nodeType !== 1) continue;
        const el = node;
        const tag = el.tagName;
        if (SKIP.has(tag)) continue;
        if (tag === "BR") {
          if (ctx.named) ctx.named.push(" ");
          else if (ctx.cell) ctx.cell.push(" ");
          else flush();
          continue;
        }
        const r = el.getBoundingClientRect();
        const top = r.top + ctx.y;
        const bottom = r.bottom + ctx.y;
        const left = r.left + ctx.x;
        const right = r.right + ctx.x;
        const sized = r.width > 0 && r.height > 0;
        const inRange = bottom > ctx.clip[1] - margin && top < ctx.clip[3] + margin &&
          right > ctx.clip[0] && left < ctx.clip[2];
        if (sized && !inRange) continue;
        const style = ctx.view.getComputedStyle(el);
        if (style.display === "none") continue; // nothing inside renders
        if (tag === "IMG") {
          const alt = el.getAttribute("alt");
          if (ctx.named && alt) ctx.named.push(" " + alt + " ");
        }
        // A grab or move cursor says "drag me" as a pointer says "click me".
        const grab = style.cursor === "grab" || style.cursor === "move";
        const isPointer = style.cursor === "pointer" || grab;
        let interactive = interactiveByMarkup(el, tag) || (tag === "A" && sized);
        let pointer = false;
        const items = isPointer && holdsItems(el);
        const control = tag === "LABEL" ? el.control : null;
        const controlShown = control && control.checkVisibility({ opacityProperty: true }) &&
          control.getBoundingClientRect().width > 1;
        if (!interactive && sized && !ctx.strong && isPointer && !items && (!ctx.pointer || ctx.items) &&
          !controlShown) {
          pointer = interactive = true;
        }
        const role = el.getAttribute("role");
        const strong = STRONG_TAGS.has(tag) || (role !== null && STRONG_ROLES.has(role));
        let d = null;
        if (interactive && sized) d = consider(el, tag, r, left, top, bottom, ctx, pointer);
        if (d && (grab || el.getAttribute("draggable") === "true")) d.draggable = true;
        // A label standing in for a hidden checkbox or radio carries its state.
        if (d && control && !controlShown && (control.type === "checkbox" || control.type === "radio")) {
          d.type = control.type;
          d.checked = control.checked;
        }
        else if (interactive && !sized) considered.add(el);
        // Scrollable containers (reading styles is the expensive part, so only in range).
        if (sized && el.clientHeight > 40 && el.scrollHeight > el.clientHeight + 4 &&
          (style.overflowY === "auto" || style.overflowY === "scroll")) {
          const room = {
            above: +(el.scrollTop / el.clientHeight).toFixed(1),
            below: +((el.scrollHeight - el.clientHeight - el.scrollTop) / el.clientHeight).toFixed(1),
          };
          if (d) d.scroll = room;
          else {
            flush();
            out.elements.push({
              id: assignId(el), tag: tag.toLowerCase(), text: squash(el.getAttribute("aria-label") || "", max),
              box: box(left, top, r), scroll: room, ...(ctx.frame ? { frame: ctx.frame } : {}),
            });
          }
        }
        // What the children inherit.
        const quiet = ctx.quiet || consumed.has(el) || el.getAttribute("aria-hidden") === "true" || style.opacity === "0" ||
          style.visibility === "hidden" || (sized && r.width <= 1 && r.height <= 1) ||
          (!sized && style.overflow === "hidden");
        const block = !style.display.startsWith("inline") && style.display !== "contents";
        let child = ctx;
        const named = d ? [] : null;
        if (d || strong !== ctx.strong || quiet !== ctx.quiet || items !== ctx.items || isPointer !== ctx.pointer) {
          child = { ...ctx, quiet, items, pointer: isPointer };
          if (d) {
            child.owner = d;
            child.named = FIELDS.has(tag) ? null : named;
            child.text = false;
            if (strong || FIELDS.has(tag)) child.strong = true;
          }
        }
        // A label whose field is listed on its own line names that field already.
        if (controlShown && !d) {
          if (child === ctx) child = { ...ctx };
          child.quiet = true;
        }
        // What an overflow box clips away is not visible, so its children are judged
        // against the box's inner rectangle.
        if (sized && (style.overflowY !== "visible" || style.overflowX !== "visible") && tag !== "HTML" &&
          tag !== "BODY") {
          const x = left + el.clientLeft;
          const y = top + el.clientTop;
          const inner = [
            Math.max(ctx.clip[0], x), Math.max(ctx.clip[1], y),
            Math.min(ctx.clip[2], x + el.clientWidth), Math.min(ctx.clip[3], y + el.clientHeight),
          ];
          if (child === ctx) child = { ...ctx };
          child.clip = inner;
        }
        let row = null;
        if (!ctx.named && child.text) {
          if (tag === "TR" || role === "row" || style.display === "table-row") {
            row = startRow(el, ctx);
            child = { ...child, row, cell: null };
          } else if (ctx.row && (tag === "TD" || tag === "TH" || style.display === "table-cell" ||
            /^(cell|gridcell|columnheader|rowheader)$/.test(role))) {
            const cell = [];
            ctx.row.cells.push(cell);
            child = { ...child, cell };
          } else if (block && !ctx.cell) {
            flush();
            const level = HEADINGS[tag] || (role === "heading" && (+el.getAttribute("aria-level") || 2));
            const prefix = level ? "#".repeat(level) + " " : tag === "LI" ? "- " : "";
            if (prefix !== child.prefix) child = { ...child, prefix };
          }
        }
        // A cell that is itself an element (a spreadsheet's cell): its row shows its id in
        // its column, as for an element inside a cell.
        if (d && !ctx.named && ctx.row && !child.cell && (tag === "TD" || tag === "TH" ||
          style.display === "table-cell" || /^(cell|gridcell|columnheader|rowheader)$/.test(role))) {
          ctx.row.cells.push([" [" + d.id + "] "]);
        }
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
          flush();
          if (doc && doc.documentElement) {
            visit(doc, {
              ...top0, x, y, clip, frame: frameCount, doc, view: doc.defaultView, tables: new Set(),
              range: doc.createRange(),
            });
            flush();
          } else {
            // Cross-origin: the engine reaches it through its own CDP session.
            out.frames.push({ id: assignId(el), frame: frameCount, src: el.src, origin: [x, y], clip });
          }
        } else if ((!el.shadowRoot || el.firstChild) && tag !== "SELECT" && tag !== "TEXTAREA") {
          // A select's options and a textarea's text are read from the element itself.
          visit(el, child);
        }
        if (d) finishName(d, el, named);
        if (row) {
          endRow(row);
        } else if (block && !ctx.named && !ctx.cell && child.text) {
          flush();
        }
      }
    };
    const clip = options.clip ?? [0, 0, vw, vh];
    const origin = options.origin ?? [0, 0];
    const top0 = { x: origin[0], y: origin[1], clip, frame: options.frame ?? 0, shadow: false,
      strong: false, named: null, items: false, pointer: false, quiet: false, text: true,
      prefix: "", row: null, cell: null, tables: new Set(), doc: document, view: window,
      range: document.createRange() };
    visit(document, top0);
    flush();
    out.text = out.text.filter(Boolean);
    if (out.elements.some((d) => d.drop)) {
      // Renumber the text's places around the elements left out.
      const kept = [];
      let k = 0;
      for (const d of out.elements) {
        kept.push(k);
        if (!d.drop) k++;
      }
      kept.push(k);
      for (const t of out.text) t.at = kept[t.at];
      out.elements = out.elements.filter((d) => !d.drop);
    }

    // One native query over the whole document: counts what lies above and below, and
    // lists interactive elements in range that the walk did not reach (fixed or absolute
    // ones inside an out-of-range ancestor).
    for (const el of document.querySelectorAll(MARKUP_INTERACTIVE)) {
      if (considered.has(el) || !interactiveByMarkup(el, el.tagName)) continue;
      const r = el.getBoundingClientRect();
      if (r.width <= 0 || r.height <= 0) continue;
      const t = r.top + top0.y;
      const b = r.bottom + top0.y;
      if (b <= clip[1] - margin) out.above++;
      else if (t >= clip[3] + margin) {
        out.below++;
        if (b > out.belowBottom) out.belowBottom = b;
      } else if (r.right + top0.x > clip[0] && r.left + top0.x < clip[2]) {
        const d = consider(el, el.tagName, r, r.left + top0.x, t, b, top0, false);
        if (d) finishName(d, el, [el.innerText || ""]);
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
  // Fields whose value is a secret, whatever their type: passwords, card numbers and codes,
  // one-time codes, PINs. Known by type, by their autocomplete tokens, or by their name.
  const SECRET_AUTOCOMPLETE = new Set(["current-password", "new-password", "one-time-code",
    "cc-number", "cc-csc", "cc-exp", "cc-exp-month", "cc-exp-year"]);
  const SECRET_NAME = /passw|passcode|kennwort|mot de passe|contrase|\bpin\b|one.?time|\botp\b|cvc|cvv|csc|security.?code|verification.?code|card.?num|cc.?num|card.?no\b|\bexp(iry|iration)?\b|ssn|social.?security|\biban\b/i;

  // By type, autocomplete tokens, or any name a person or the markup gives it: its label
  // (a text field labelled "Password" is a password field), or the text beside it.
  function isSecret(el) {
    if (el.tagName !== "INPUT") return false;
    if (el.type === "password") return true;
    const tokens = (el.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/);
    if (tokens.some((t) => SECRET_AUTOCOMPLETE.has(t))) return true;
    const names = [el.name, el.id, el.getAttribute("aria-label"), el.placeholder, labelOf(el)].join(" ");
    if (SECRET_NAME.test(names)) return true;
    // Any short text beside it, label-like or not: "Enter your PIN." above a box says it too.
    const near = nearbyText(el);
    return !!near && near.text.length <= LABEL_CHARS && SECRET_NAME.test(near.text);
  }

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
    // Where a click would go, resolved as the browser resolves it, for the engine's
    // allow/deny check before clicking.
    const anchor = el.closest("a[href], area[href]");
    const link = anchor && !anchor.href.startsWith("javascript:") ? anchor.href : undefined;
    return { x: spot[0] + ox, y: spot[1] + oy, mutations, link };
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
    // A hidden tab's timers fire at most once a second: hand the waiting to the caller, whose
    // timers are not throttled. It sleeps `nextMs` and asks settleStep(token) again.
    if (document.visibilityState === "hidden") {
      const token = ++settleTokens;
      settles.set(token, { quietMs, timeoutMs, popupMs, fresh, w, started: performance.now() });
      return settleStep(token);
    }
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

  /** Settles waited for by the caller (hidden tabs), by token. */
  const settles = new Map();
  let settleTokens = 0;

  /**
   * One look at a settle the caller waits for: its result as settle() gives it, or
   * {pending, token, nextMs} when the caller should look again after nextMs.
   */
  function settleStep(token) {
    const s = settles.get(token);
    if (!s) return { quiet: false, gone: true, mutations };
    const { quietMs, timeoutMs, popupMs, fresh, w, started } = s;
    const now = performance.now();
    const quietFor = now - Math.max(lastMutation, fresh ? started : -Infinity);
    const seen = w !== null && (w.popupAt >= 0 || w.addedAt >= started);
    const waiting = w !== null && !seen && now - started < popupMs;
    if ((quietFor >= quietMs && !waiting) || now - started >= timeoutMs) {
      settles.delete(token);
      if (w) stopWatching();
      const out = { waitedMs: Math.round(now - started), quiet: quietFor >= quietMs, mutations };
      if (w) out.popup = seen;
      return out;
    }
    // A popup may open at any moment while waiting for one: look again soon.
    const left = waiting ? Math.min(popupMs - (now - started), 50) : quietMs - quietFor;
    const nextMs = Math.max(1, Math.min(left, timeoutMs - (now - started)));
    return { pending: true, token, nextMs };
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
    return { ok: true, secret: isSecret(el) };
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

  // A CSS selector for `el` that survives re-renders: an id, a test id, a name or an href
  // when one of them is unique; otherwise a short path from the nearest unique ancestor.
  function stableSelector(el) {
    const doc = el.ownerDocument;
    const unique = (sel) => { try { return doc.querySelectorAll(sel).length === 1; } catch { return false; } };
    const tag = el.tagName.toLowerCase();
    const own = (e) => {
      const t = e.tagName.toLowerCase();
      // Generated ids (digits runs, hashes) change between visits.
      if (e.id && !/\d{3,}|[0-9a-f]{8,}/i.test(e.id) && unique("#" + CSS.escape(e.id))) return "#" + CSS.escape(e.id);
      for (const a of ["data-testid", "data-test", "name", "aria-label"]) {
        const v = e.getAttribute(a);
        if (v && unique(`${t}[${a}="${CSS.escape(v)}"]`)) return `${t}[${a}="${CSS.escape(v)}"]`;
      }
      if (t === "a" && e.getAttribute("href") && unique(`a[href="${CSS.escape(e.getAttribute("href"))}"]`)) {
        return `a[href="${CSS.escape(e.getAttribute("href"))}"]`;
      }
      return null;
    };
    const mine = own(el);
    if (mine) return mine;
    const steps = [];
    let node = el;
    while (node && node.nodeType === 1 && node !== doc.documentElement && steps.length < 6) {
      const anchor = node !== el && own(node);
      if (anchor) { steps.unshift(anchor); break; }
      const t = node.tagName.toLowerCase();
      const same = node.parentElement ? [...node.parentElement.children].filter((c) => c.tagName === node.tagName) : [];
      steps.unshift(same.length > 1 ? `${t}:nth-of-type(${same.indexOf(node) + 1})` : t);
      node = node.parentElement;
    }
    const path = steps.join(" > ");
    return unique(path) ? path : (tag === el.tagName.toLowerCase() && unique(tag) ? tag : path);
  }

  /** An element as the recorder describes it (the engine's `TargetDescriptor`). */
  function target(el) {
    const tag = el.tagName;
    const d = describe(el, tag, 120);
    const visible = squash(el.innerText || "", 120);
    const r = el.getBoundingClientRect();
    const t = {
      tag: tag.toLowerCase(),
      name: d.text || (FIELDS.has(tag) ? "" : visible) || iconName(el, 60)[0] || "",
      text: "",
      selector: stableSelector(el),
      stateId: assignId(el),
      box: [r.x, r.y, r.width, r.height].map((v) => Math.round(v * 10) / 10),
      secret: isSecret(el),
    };
    if (visible && visible !== t.name && !FIELDS.has(tag)) t.text = visible;
    if (d.role) t.role = d.role;
    if (FIELDS.has(tag)) {
      const label = squash(labelOf(el), 120);
      if (label) t.label = label;
    }
    if (tag === "INPUT") t.inputType = el.type;
    if (d.name) t.nameAttr = d.name;
    if (d.placeholder) t.placeholder = d.placeholder;
    if (d.href) t.href = d.href;
    return t;
  }

  globalThis.alphascout = Object.freeze({
    version: 5,
    showMarks,
    hideMarks,
    /** The id of an element the engine holds a remote reference to (an <iframe>). */
    idFor: assignId,
    frameOrigin,
    frameOffset,
    /** Basic facts about the document. */
    describe() {
      return { title: document.title, url: location.href, readyState: document.readyState };
    },
    snapshot,
    element,
    point,
    settle,
    settleStep,
    focusForTyping,
    fill,
    value,
    options,
    selectNative,
    scroll,
    scrollToText,
    readable,
    target,
  });
})();
