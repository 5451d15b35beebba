// The service worker's bootstrap. MV3 only delivers events to listeners registered in the
// worker's first turn, and the wasm module is not ready then. So every listener is
// registered here, synchronously, and each event waits in `pending` until Rust has started.
import init, * as worker from "./background/background_worker.js";
import initAuthoring, * as authoring from "./authoring/authoring_engine.js";

// The engine's authoring side (pipelines, reflection, Studio runs, drafts, the MCP test) is a
// wasm module of its own, instantiated the first time the worker asks for it
// (`authoring.rs`). A service worker cannot import() later, so its glue is imported above.
// The glue instantiates once however many calls wait, and again after a failed try.
globalThis.alphascoutAuthoringEngine = () => initAuthoring().then(() => authoring);

let ready = false;
const pending = [];
const whenReady = (deliver) => (ready ? deliver() : pending.push(deliver));

chrome.runtime.onConnect.addListener((port) => {
  whenReady(() => worker.on_port_connect(port));
  port.onMessage.addListener((message) => whenReady(() => worker.on_port_message(port, message)));
  port.onDisconnect.addListener(() => whenReady(() => worker.on_port_disconnect(port)));
});

chrome.runtime.onMessage.addListener((message, _sender, sendResponse) => {
  whenReady(() =>
    worker.on_message(message).then(sendResponse, (error) => sendResponse({ error: String(error) })),
  );
  return true; // the answer comes asynchronously
});

// CDP events drive the agent's waits. Until Rust says which it wants, all are queued.
let watched = null;
chrome.debugger.onEvent.addListener((source, method, params) => {
  if (source.tabId === undefined || (watched && !watched.has(method))) return;
  whenReady(() => {
    if (watched.has(method)) {
      worker.on_debugger_event(source.tabId, source.sessionId, method, params ?? {});
    }
  });
});

chrome.debugger.onDetach.addListener((source, reason) => {
  if (source.tabId !== undefined) whenReady(() => worker.on_debugger_detach(source.tabId, reason));
});

// Each tab has its own panel, on `side-panel.html?tabId=<id>`, which shows that tab's job
// only: jobs in several tabs each keep their own chat. Chrome gives tab ids without the `tabs`
// permission. These need no wasm, so they run at once rather than wait in `pending`.
const panelFor = (tabId) => {
  if (typeof tabId !== "number" || tabId < 0) return; // chrome.tabs.TAB_ID_NONE
  chrome.sidePanel
    .setOptions({ tabId, path: `side-panel.html?tabId=${tabId}`, enabled: true })
    .catch(() => {}); // the tab closed meanwhile
};
// A tab's options outlive its navigations: set them once, when it is created. While a job
// acts in tabs, a tab its tabs open is held until it is guarded (`new_tabs.rs`).
chrome.tabs.onCreated.addListener((tab) => {
  panelFor(tab.id);
  whenReady(() => worker.on_tab_created(tab.id, tab.openerTabId));
});
chrome.webNavigation.onErrorOccurred.addListener((details) => {
  if (details.frameId === 0 && details.error === "net::ERR_BLOCKED_BY_CLIENT") {
    whenReady(() => worker.on_page_load_blocked(details.tabId, details.url));
  }
});

// While recording, switching tabs is a step, and the recorder follows to the new tab.
chrome.tabs.onActivated.addListener((info) => {
  panelFor(info.tabId);
  whenReady(() => worker.on_tab_activated(info.tabId));
});

// Clicking the toolbar icon opens the side panel. Idempotent, so it runs at every start.
chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(console.error);
// Tabs open before this start (install, update, a restarted worker) get theirs too.
chrome.tabs.query({}).then((tabs) => tabs.forEach((tab) => panelFor(tab.id)), console.error);

// MCP clients reach AlphaScout through the native host `alphascout-mcp`, which the worker
// connects to only while Settings allow MCP clients. The port's listeners are registered
// here like every other; Chrome's reason for a closed port is only readable in its callback.
globalThis.alphascoutConnectMcp = (host) => {
  const port = chrome.runtime.connectNative(host);
  port.onMessage.addListener((message) => whenReady(() => worker.on_mcp_message(port, message)));
  port.onDisconnect.addListener(() => {
    const why = chrome.runtime.lastError?.message ?? "";
    whenReady(() => worker.on_mcp_disconnect(port, why));
  });
  return port;
};

const listenersRegistered = performance.now();
init().then(() => {
  worker.start(listenersRegistered, performance.now() - listenersRegistered);
  watched = new Set(worker.watched_events());
  ready = true;
  for (const deliver of pending.splice(0)) deliver();
});
