//! The agent's hands: each [`Action`] the Navigator can emit, carried out over CDP with real
//! input events, followed by an event-driven wait, and checked where its effect can be
//! checked. Every outcome's message is written for the model: what happened, or what to do
//! next.

use protocol::TabId;
use serde::Serialize;
use serde_json::{Value, json};

use crate::Clock;
use crate::cdp::{Activity, Cdp, CdpError, Sessions};
use crate::firewall::Firewall;
use crate::page_agent;
use crate::untrusted;
// A search engine reads its query string as an HTML form sends it: spaces as `+`.
pub use crate::page_state::TabInfo;
use run_contract::url::form_encode;

mod gestures;
mod input_values;
use gestures::Press;
use input_values::{Limits, ValueKind};

/// The union lives in the shared contract, so the sync server reads what the engine writes.
pub use run_contract::action::Action;

/// What an action did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, tagged_de::FieldsDeserialize)]
pub struct ActionOutcome {
    pub ok: bool,
    /// For the model: what happened, or why not and what to do instead.
    pub message: String,
    /// A later action's target may mean something else now: the tab navigated (a new
    /// document, or a single-page app's route), or a tab was opened, switched to or closed.
    /// Ordinary DOM changes and scrolling do not count: an id still names the same element,
    /// and one that went away makes its action `stale`.
    pub page_changed: bool,
    /// The tab the agent should work in from now on, when the action changed it.
    pub tab: Option<TabId>,
    pub extracted: Option<String>,
    pub done: bool,
    /// The action was not carried out because its target is gone, hidden or covered: the
    /// page changed under a plan made on an earlier state. Later in a sequence this ends it
    /// without counting as a failure of the model's choice.
    #[serde(default)]
    pub stale: bool,
    /// The field typed into held a secret when it was focused (a field may turn into a
    /// password field only then): what was typed is masked from then on.
    #[serde(default)]
    pub secret: bool,
}

impl ActionOutcome {
    fn ok(message: impl Into<String>) -> Self {
        ActionOutcome { ok: true, message: message.into(), ..Default::default() }
    }
    fn fail(message: impl Into<String>) -> Self {
        ActionOutcome { ok: false, message: message.into(), ..Default::default() }
    }
    /// Not carried out: the target is gone, hidden or covered.
    fn stale(message: impl Into<String>) -> Self {
        ActionOutcome { stale: true, ..ActionOutcome::fail(message) }
    }
    fn changed(mut self, page_changed: bool) -> Self {
        self.page_changed = page_changed;
        self
    }
}

/// Why a tab operation failed. A tab that is gone is a fact about the browser the model
/// should see (the tabs it knew changed), not a failure to retry.
#[derive(Debug, Clone, PartialEq)]
pub enum TabError {
    /// No tab has that id any more.
    Gone,
    /// Anything else, as the browser said it (a URL Chrome will not open, say).
    Failed(String),
}

impl std::fmt::Display for TabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TabError::Gone => f.write_str("the tab is closed"),
            TabError::Failed(message) => f.write_str(message),
        }
    }
}

/// Opening, switching and closing tabs: `chrome.tabs` and `chrome.debugger.getTargets` in
/// the worker.
#[allow(async_fn_in_trait)]
pub trait Tabs {
    async fn list(&self) -> Result<Vec<TabInfo>, TabError>;
    async fn open(&self, url: &str) -> Result<TabId, TabError>;
    async fn activate(&self, tab: TabId) -> Result<(), TabError>;
    async fn close(&self, tab: TabId) -> Result<(), TabError>;
}

/// How long a click waits for Chrome to answer its pointer move (a few frames).
const MOVE_ANSWER_MS: f64 = 100.0;

/// Bounds of the waits after an action.
#[derive(Debug, Clone, Copy)]
pub struct WaitLimits {
    /// The DOM must be this long without mutation to count as settled.
    pub dom_quiet_ms: f64,
    /// Longest wait for a navigation to finish loading.
    pub navigation_ms: f64,
    /// Longest wait for in-flight requests after the DOM settled.
    pub network_ms: f64,
    /// After typing, how long to wait for suggestions to open when nothing new appears:
    /// autocomplete lists commonly open a few hundred milliseconds after the last key.
    pub suggestions_ms: f64,
}

impl Default for WaitLimits {
    fn default() -> Self {
        WaitLimits {
            dom_quiet_ms: 40.0,
            navigation_ms: 10_000.0,
            network_ms: 1_500.0,
            suggestions_ms: 500.0,
        }
    }
}

/// How the wait after an action ended.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Settled {
    /// The main frame got a new document.
    pub navigated: bool,
    /// The page changed its route without a new document (`history.pushState`).
    pub routed: bool,
    pub mutations: Option<u64>,
    pub timed_out: bool,
    /// After typing: a popup, list or other new element appeared.
    pub popup: bool,
}

/// The browser the Navigator acts in.
pub struct Hands<'a, C, K, T> {
    pub sessions: &'a Sessions<C>,
    pub clock: &'a K,
    pub tabs: &'a T,
    /// `web_search` opens this with the query appended, percent-encoded.
    pub search_url: &'a str,
    pub limits: WaitLimits,
    /// Checked before every navigation the agent asks for (open, new tab, back, forward).
    pub firewall: &'a Firewall,
}

impl<C: Cdp, K: Clock, T: Tabs> Hands<'_, C, K, T> {
    /// Carries out `action` in `tab`.
    pub async fn perform(&self, tab: TabId, action: &Action) -> ActionOutcome {
        match self.dispatch(tab, action).await {
            Ok(outcome) => outcome,
            Err(error) => ActionOutcome::fail(error.to_string()),
        }
    }

    async fn dispatch(&self, tab: TabId, action: &Action) -> Result<ActionOutcome, CdpError> {
        Ok(match action {
            Action::GoToUrl { url } => self.navigate(tab, url).await?,
            Action::WebSearch { query } => {
                let url = format!("{}{}", self.search_url, form_encode(query));
                self.navigate(tab, &url).await?
            }
            Action::Back => self.history(tab, -1).await?,
            Action::Forward => self.history(tab, 1).await?,
            Action::Reload => {
                let before = self.activity(tab);
                self.sessions.send(tab, "Page.reload", json!({})).await?;
                self.after_navigation(tab, &before, "Reloaded the page").await?
            }
            Action::Click { id } => self.click(tab, *id, Press::Left).await?,
            Action::DoubleClick { id } => self.click(tab, *id, Press::Double).await?,
            Action::RightClick { id } => self.click(tab, *id, Press::Right).await?,
            Action::Drag { id, to, to_text, dx, dy } => {
                self.drag(tab, *id, *to, to_text.as_deref(), (*dx, *dy)).await?
            }
            Action::SelectText { text, id } => self.select_text(tab, text, *id).await?,
            Action::SetSlider { id, value } => self.set_slider(tab, *id, *value).await?,
            Action::Copy { id } => self.copy(tab, *id).await?,
            Action::Paste { id } => self.paste(tab, *id).await?,
            Action::ClickAt { x, y } => {
                let before = self.activity(tab);
                self.press_at(tab, (*x, *y), Press::Left).await?;
                let settled = self.settle(tab, &before).await;
                self.describe_settled(tab, format!("Clicked at ({x:.0}, {y:.0})"), settled, None)
                    .await
            }
            Action::Type { id, text, clear } => self.type_text(tab, *id, text, *clear).await?,
            Action::SendKeys { keys } => self.send_keys(tab, keys).await?,
            Action::Scroll { id, screens } => self.scroll(tab, *id, *screens).await?,
            Action::ScrollToText { text } => {
                let call = format!("alphascout.scrollToText({})", Value::from(text.as_str()));
                let found = self.agent(tab, &call).await?;
                match found.get("found").and_then(Value::as_str) {
                    Some(what) => ActionOutcome::ok(format!("Scrolled to {what}")),
                    None => ActionOutcome::fail(format!(
                        "No visible text {text:?} on this page. Scroll or extract to look further."
                    )),
                }
            }
            Action::Hover { id } => {
                let (x, y, mutations, _) = match self.point(tab, *id).await? {
                    Ok(point) => point,
                    Err(outcome) => return Ok(outcome),
                };
                let before = self.activity(tab);
                self.mouse_event(tab, "mouseMoved", (x, y), "left", 0, 0).await?;
                let settled = self.settle(tab, &before).await;
                self.describe_settled(tab, format!("Hovered over [{id}]"), settled, Some(mutations))
                    .await
            }
            Action::ListOptions { id } => self.list_options(tab, *id).await?,
            Action::SelectOption { id, option, deselect } => {
                self.select_option(tab, *id, option, *deselect).await?
            }
            Action::OpenTab { url } => match self.firewall.check(url) {
                Err(refusal) => ActionOutcome::fail(refusal),
                Ok(()) => self.open_tab(url).await,
            },
            Action::SwitchTab { tab_id } => match self.tabs.activate(*tab_id).await {
                Ok(()) => {
                    let mut outcome = ActionOutcome::ok(format!("Switched to tab {tab_id}"));
                    outcome.tab = Some(*tab_id);
                    outcome.changed(true)
                }
                // The tabs the model knew are not the tabs there are: the next state lists them.
                Err(TabError::Gone) => {
                    ActionOutcome::fail(format!("Tab {tab_id} is no longer open")).changed(true)
                }
                Err(error) => {
                    ActionOutcome::fail(format!("Could not switch to tab {tab_id}: {error}"))
                }
            },
            Action::CloseTab { tab_id } => match self.tabs.close(*tab_id).await {
                // The tabs the model saw are not the tabs there are any more.
                Ok(()) => ActionOutcome::ok(format!("Closed tab {tab_id}")).changed(true),
                // What closing was for already holds.
                Err(TabError::Gone) => {
                    ActionOutcome::ok(format!("Tab {tab_id} was already closed")).changed(true)
                }
                Err(error) => ActionOutcome::fail(format!("Could not close tab {tab_id}: {error}")),
            },
            Action::Wait { seconds } => {
                let seconds = seconds.clamp(0.0, 10.0);
                self.clock.sleep(seconds * 1000.0).await;
                ActionOutcome::ok(format!("Waited {seconds:.1} s"))
            }
            Action::Extract { max_chars } => {
                let max = max_chars.unwrap_or(8_000).clamp(200, 50_000);
                let read = self.agent(tab, &format!("alphascout.readable({max})")).await?;
                let text = read["text"].as_str().unwrap_or_default().to_owned();
                let cut = if read["truncated"] == true { " (cut; raise max_chars)" } else { "" };
                let mut outcome = ActionOutcome::ok(format!(
                    "Extracted {} characters{cut}",
                    text.chars().count()
                ));
                outcome.extracted = Some(text);
                outcome
            }
            Action::Done { text, success } => ActionOutcome {
                ok: *success,
                message: text.clone(),
                done: true,
                ..Default::default()
            },
        })
    }

    async fn agent(&self, tab: TabId, call: &str) -> Result<Value, CdpError> {
        page_agent::evaluate(self.sessions, tab, call).await
    }

    /// Runs `call` in the page agent that gave out element `id`: the main frame's, or a
    /// cross-site frame's. Ids that agent hands out in its answer belong to it too.
    async fn agent_for(&self, tab: TabId, id: u32, call: &str) -> Result<Value, CdpError> {
        let Some(session) = self.sessions.owner_of(tab, id) else {
            return self.agent(tab, call).await;
        };
        let answer =
            page_agent::evaluate_in_frame(self.sessions, tab, Some(&session), call).await?;
        for option in answer["options"].as_array().into_iter().flatten() {
            if let Some(option_id) = option["id"].as_u64() {
                self.sessions.set_owner(tab, option_id as u32, &session);
            }
        }
        Ok(answer)
    }

    /// Where a cross-site frame's content starts in the top viewport, for turning its
    /// page agent's coordinates into the tab's.
    async fn frame_origin(&self, tab: TabId, session: &str) -> Result<(f64, f64), CdpError> {
        let children = self.sessions.children(tab);
        let iframe = children.iter().find(|(s, _)| s == session).and_then(|(_, c)| c.iframe_id);
        let Some(iframe) = iframe else { return Ok((0.0, 0.0)) };
        let origin = self.agent(tab, &format!("alphascout.frameOrigin({iframe})")).await?;
        Ok((origin["x"].as_f64().unwrap_or(0.0), origin["y"].as_f64().unwrap_or(0.0)))
    }

    fn activity(&self, tab: TabId) -> Activity {
        self.sessions.activity(tab).unwrap_or_default()
    }

    /// Where to click element `id` (and the link it is in, if any), or the outcome that
    /// explains why it cannot be.
    async fn point(
        &self,
        tab: TabId,
        id: u32,
    ) -> Result<Result<(f64, f64, u64, Option<String>), ActionOutcome>, CdpError> {
        let point = self.agent_for(tab, id, &format!("alphascout.point({id})")).await?;
        if point.get("gone").is_some() {
            return Ok(Err(ActionOutcome::stale(format!(
                "Element [{id}] is gone: the page changed since the state you saw. \
                 Use an id from the current page state."
            ))));
        }
        if point.get("hidden").is_some() {
            return Ok(Err(ActionOutcome::stale(format!(
                "Element [{id}] is not visible now. It may be in a closed menu or collapsed \
                 section: open that first, or choose another element."
            ))));
        }
        if let Some(cover) = point.get("covered").and_then(Value::as_str) {
            return Ok(Err(ActionOutcome::stale(format!(
                "Element [{id}] is covered by {cover}. Close or accept that first \
                 (a dialog, banner or overlay), then try again."
            ))));
        }
        let (dx, dy) = self.origin_of(tab, id).await?;
        let x = point["x"].as_f64().unwrap_or_default() + dx;
        let y = point["y"].as_f64().unwrap_or_default() + dy;
        let link = point["link"].as_str().map(str::to_owned);
        Ok(Ok((x, y, point["mutations"].as_u64().unwrap_or_default(), link)))
    }

    /// Clicks element `id` as `press` says (once, twice, or with the right button), after
    /// checking a link's destination. A right-click opens the page's menu, not the link.
    async fn click(&self, tab: TabId, id: u32, press: Press) -> Result<ActionOutcome, CdpError> {
        let (x, y, mutations, link) = match self.point(tab, id).await? {
            Ok(point) => point,
            Err(outcome) => return Ok(outcome),
        };
        // A link's destination is checked before the click, so a refused page (in this tab
        // or a new one) is never requested.
        if let Some(link) = link.filter(|_| press != Press::Right)
            && let Err(refusal) = self.firewall.check(&link)
        {
            return Ok(ActionOutcome::fail(format!("Not clicked: [{id}] is a link. {refusal}")));
        }
        let tabs_before = self.tabs.list().await.unwrap_or_default();
        let before = self.activity(tab);
        self.press_at(tab, (x, y), press).await?;
        let settled = self.settle(tab, &before).await;
        let mut outcome = self.describe_settled(tab, press.did(id), settled, Some(mutations)).await;
        if let Ok(after) = self.tabs.list().await
            && let Some(new) = after.iter().find(|t| tabs_before.iter().all(|b| b.id != t.id))
        {
            outcome.message.push_str(&format!(
                "; it opened a new tab {} ({}). Use switch_tab to work there.",
                new.id, new.url
            ));
            outcome.page_changed = true;
        }
        Ok(outcome)
    }

    /// Waits until the page has settled after an action: a navigation that started has
    /// finished loading, the DOM has been quiet for a moment, and requests have drained.
    /// Every wait is for an event or a condition, bounded by [`WaitLimits`].
    pub async fn settle(&self, tab: TabId, before: &Activity) -> Settled {
        self.settle_after(tab, before, None).await
    }

    /// [`Hands::settle`]; after typing into `typed`, it also waits (in that element's frame,
    /// up to `suggestions_ms`) for a popup, list or other new element to appear, and ends as
    /// soon as one has and the DOM is quiet again.
    async fn settle_after(&self, tab: TabId, before: &Activity, typed: Option<u32>) -> Settled {
        let limits = self.limits;
        let started = self.clock.now_ms();
        let mut settled = Settled::default();
        let mut popup_ms = if typed.is_some() { limits.suggestions_ms } else { 0.0 };
        let ask = async |call: String| match typed {
            Some(id) => self.agent_for(tab, id, &call).await,
            None => self.agent(tab, &call).await,
        };
        // In a hidden tab the page's timers are throttled to once a second, so the page hands
        // the waiting back (`pending`): this clock sleeps until its next look.
        let agent = async |call: String| {
            let mut out = ask(call).await?;
            while out["pending"] == true {
                self.clock.sleep(out["nextMs"].as_f64().unwrap_or(20.0)).await;
                out = ask(format!("alphascout.settleStep({})", out["token"])).await?;
            }
            Ok::<Value, CdpError>(out)
        };
        loop {
            let now = self.activity(tab);
            let elapsed = self.clock.now_ms() - started;
            if now.navigation_pending || now.loading {
                if elapsed > limits.navigation_ms {
                    settled.timed_out = true;
                    break;
                }
                self.clock.sleep(20.0).await;
                continue;
            }
            let budget = (limits.navigation_ms - elapsed).max(limits.dom_quiet_ms);
            let quiet_ms = limits.dom_quiet_ms;
            // The wait for suggestions belongs to the document typed into: once only.
            let call =
                format!("alphascout.settle({quiet_ms}, {budget:.0}, {{popupMs: {popup_ms}}})");
            popup_ms = 0.0;
            match agent(call).await {
                Ok(quiet) => {
                    settled.mutations = quiet["mutations"].as_u64();
                    settled.popup |= quiet["popup"] == true;
                }
                // The document went away under us: a navigation we have not heard of yet.
                Err(_) if self.clock.now_ms() - started < limits.navigation_ms => {
                    self.clock.sleep(20.0).await;
                    continue;
                }
                Err(_) => settled.timed_out = true,
            }
            // Requests started by the action (XHR after a click) are part of its effect.
            let network_from = self.clock.now_ms();
            let mut waited = false;
            while !self.activity(tab).inflight.is_empty()
                && self.clock.now_ms() - network_from < limits.network_ms
            {
                waited = true;
                self.clock.sleep(20.0).await;
            }
            let after = self.activity(tab);
            if after.navigation_pending || after.loading {
                continue;
            }
            if waited {
                // Responses are rendered after they arrive: let that happen too.
                let call = format!("alphascout.settle({quiet_ms}, {budget:.0}, {{fresh: true}})");
                if let Ok(quiet) = agent(call).await {
                    settled.mutations = quiet["mutations"].as_u64();
                }
            }
            break;
        }
        let after = self.activity(tab);
        settled.navigated = after.documents > before.documents;
        settled.routed = after.routes > before.routes;
        settled
    }

    /// The outcome of an action whose effect is whatever the page did: where it navigated,
    /// or whether anything changed.
    async fn describe_settled(
        &self,
        tab: TabId,
        did: String,
        settled: Settled,
        mutations_before: Option<u64>,
    ) -> ActionOutcome {
        if settled.navigated || settled.routed {
            let url = page_agent::evaluate(self.sessions, tab, "location.href").await;
            let url = url.ok().and_then(|u| u.as_str().map(str::to_owned)).unwrap_or_default();
            let how = if settled.navigated { "the page navigated to" } else { "the app moved to" };
            return ActionOutcome::ok(format!("{did}; {how} {url}")).changed(true);
        }
        let changed = match (mutations_before, settled.mutations) {
            (Some(before), Some(after)) => after > before,
            _ => true,
        };
        let mut message = did;
        if settled.timed_out {
            message.push_str("; the page was still busy when the wait ran out");
        } else if !changed {
            message.push_str("; nothing on the page changed");
        }
        ActionOutcome::ok(message)
    }

    /// Opens an empty tab and loads `url` in it through the tab's guarded session, so a
    /// redirect on the way is checked like any navigation.
    async fn open_tab(&self, url: &str) -> ActionOutcome {
        let new = match self.tabs.open("about:blank").await {
            Ok(new) => new,
            Err(error) => return ActionOutcome::fail(format!("Could not open {url}: {error}")),
        };
        let mut outcome = match self.navigate(new, url).await {
            Ok(loaded) => {
                ActionOutcome { message: format!("In new tab {new}: {}", loaded.message), ..loaded }
            }
            Err(error) => ActionOutcome::fail(format!("Opened tab {new}, but {error}")),
        };
        outcome.tab = Some(new);
        outcome.changed(true)
    }

    async fn navigate(&self, tab: TabId, url: &str) -> Result<ActionOutcome, CdpError> {
        if let Err(refusal) = self.firewall.check(url) {
            return Ok(ActionOutcome::fail(refusal));
        }
        let before = self.activity(tab);
        let reply = self.sessions.send(tab, "Page.navigate", json!({"url": url})).await?;
        if let Some(error) =
            reply.get("errorText").and_then(Value::as_str).filter(|e| !e.is_empty())
        {
            return Ok(ActionOutcome::fail(format!(
                "Could not open {url}: {error}. Check the address, or try web_search."
            )));
        }
        self.after_navigation(tab, &before, &format!("Opened {url}")).await
    }

    async fn after_navigation(
        &self,
        tab: TabId,
        before: &Activity,
        did: &str,
    ) -> Result<ActionOutcome, CdpError> {
        let settled = self.settle(tab, before).await;
        let mut outcome = ActionOutcome::ok(did).changed(true);
        if settled.timed_out {
            outcome.message.push_str("; it was still loading when the wait ran out");
        }
        Ok(outcome)
    }

    async fn history(&self, tab: TabId, step: i64) -> Result<ActionOutcome, CdpError> {
        let history = self.sessions.send(tab, "Page.getNavigationHistory", json!({})).await?;
        let index = history["currentIndex"].as_i64().unwrap_or(0) + step;
        let entries = history["entries"].as_array().cloned().unwrap_or_default();
        let Some(entry) = usize::try_from(index).ok().and_then(|i| entries.get(i)) else {
            let which = if step < 0 { "previous" } else { "next" };
            return Ok(ActionOutcome::fail(format!(
                "There is no {which} page in this tab's history."
            )));
        };
        // Going back is a navigation too: the page it returns to must still be allowed.
        let url = entry["url"].as_str().unwrap_or_default();
        if let Err(refusal) = self.firewall.check(url) {
            return Ok(ActionOutcome::fail(refusal));
        }
        let before = self.activity(tab);
        let entry_id = entry["id"].clone();
        self.sessions
            .send(tab, "Page.navigateToHistoryEntry", json!({"entryId": entry_id}))
            .await?;
        let did = format!("Went {} to {url}", if step < 0 { "back" } else { "forward" });
        self.after_navigation(tab, &before, &did).await
    }

    async fn type_text(
        &self,
        tab: TabId,
        id: u32,
        text: &str,
        clear: bool,
    ) -> Result<ActionOutcome, CdpError> {
        // Bring it into view and make sure nothing covers it, as a person would.
        if let Err(outcome) = self.point(tab, id).await? {
            return Ok(outcome);
        }
        let focus =
            self.agent_for(tab, id, &format!("alphascout.focusForTyping({id}, {clear})")).await?;
        if focus.get("gone").is_some() {
            return Ok(ActionOutcome::stale(format!(
                "Element [{id}] is gone. Use the current ids."
            )));
        }
        if let Some(what) = focus.get("notTypable").and_then(Value::as_str) {
            return Ok(ActionOutcome::fail(format!(
                "Element [{id}] is {what}, which does not take text. Type into an input, \
                 textarea or editable region; use select_option for dropdowns."
            )));
        }
        if focus.get("readonly").is_some() {
            return Ok(ActionOutcome::fail(format!("Element [{id}] is disabled or read-only.")));
        }
        if let Some(kind) = focus["fill"].as_str().and_then(ValueKind::of) {
            return self.fill(tab, id, kind, text, &focus).await;
        }
        let secret = focus["secret"] == true;
        let before = self.activity(tab);
        if text.is_empty() {
            if clear {
                self.press(tab, &KeyPress::parse("Delete").expect("a known key")).await?;
            }
        } else {
            self.sessions.send(tab, "Input.insertText", json!({"text": text})).await?;
        }
        // Suggestions open a moment after the last key; a password field has none.
        let settled = self.settle_after(tab, &before, (!secret).then_some(id)).await;
        let now = self.agent_for(tab, id, &format!("alphascout.value({id})")).await?;
        let Some(value) = now.get("value").and_then(Value::as_str) else {
            return Ok(ActionOutcome::fail(format!(
                "Typed, but element [{id}] disappeared meanwhile (the page re-rendered)."
            ))
            .changed(settled.navigated));
        };
        let landed = value.contains(text) || squash(value).contains(&squash(text));
        let mut outcome = match (landed, secret) {
            (true, true) => ActionOutcome::ok(format!(
                "Typed into the secret field [{id}] (its value is never shown)"
            )),
            (true, false) => {
                ActionOutcome::ok(format!("Typed into [{id}]; it now reads {value:?}"))
            }
            (false, true) => {
                ActionOutcome::fail(format!("The secret field [{id}] did not take it."))
            }
            (false, false) => ActionOutcome::fail(format!(
                "Typed into [{id}], but it reads {value:?}: the page reformatted or rejected the \
                 text. Check the expected format."
            )),
        };
        if settled.popup {
            outcome.message.push_str("; new elements appeared (suggestions?)");
        }
        outcome.secret = secret;
        Ok(outcome.changed(settled.navigated))
    }

    /// Sets a date, time, colour, slider or number input the way its own picker would: the
    /// value in the input's format, then the input and change events. Reads it back after
    /// the page's handlers ran, with the field's own verdict on it.
    async fn fill(
        &self,
        tab: TabId,
        id: u32,
        kind: ValueKind,
        text: &str,
        focus: &Value,
    ) -> Result<ActionOutcome, CdpError> {
        let attr = |name: &str| focus[name].as_str().map(str::to_owned);
        let limits = Limits { min: attr("min"), max: attr("max"), step: attr("step") };
        let value = match kind.value_for(text, &limits) {
            Ok(value) => value,
            Err(why) => {
                return Ok(ActionOutcome::fail(format!("[{id}] was left as it was: {why}.")));
            }
        };
        let before = self.activity(tab);
        let call = format!("alphascout.fill({id}, {})", Value::from(value.as_str()));
        if self.agent_for(tab, id, &call).await?.get("gone").is_some() {
            return Ok(ActionOutcome::stale(format!(
                "Element [{id}] is gone. Use the current ids."
            )));
        }
        let settled = self.settle(tab, &before).await;
        let now = self.agent_for(tab, id, &format!("alphascout.value({id})")).await?;
        let Some(reads) = now.get("value").and_then(Value::as_str) else {
            return Ok(ActionOutcome::fail(format!(
                "Set [{id}], but it disappeared meanwhile (the page re-rendered)."
            ))
            .changed(settled.navigated));
        };
        let outcome = if reads != value {
            ActionOutcome::fail(format!(
                "Set [{id}] to {value:?}, but it reads {reads:?}: the page reset or rejected it. \
                 The field's format is {}.",
                kind.expected()
            ))
        } else if let Some(invalid) = field_verdict(&now) {
            ActionOutcome::fail(format!(
                "[{id}] now reads {reads:?}, but {invalid}: a form will refuse it. Choose a \
                 value that fits."
            ))
        } else if value.is_empty() {
            ActionOutcome::ok(format!("Cleared [{id}]; it is empty now"))
        } else if value != text.trim() {
            ActionOutcome::ok(format!(
                "Typed into [{id}]; it now reads {reads:?} (its form of {text:?})"
            ))
        } else {
            ActionOutcome::ok(format!("Typed into [{id}]; it now reads {reads:?}"))
        };
        Ok(outcome.changed(settled.navigated))
    }

    async fn send_keys(&self, tab: TabId, keys: &str) -> Result<ActionOutcome, CdpError> {
        let presses: Result<Vec<KeyPress>, String> =
            keys.split_whitespace().map(KeyPress::parse).collect();
        let presses = match presses {
            Ok(presses) if !presses.is_empty() => presses,
            Ok(_) => return Ok(ActionOutcome::fail("No keys given. Example: \"Enter\".")),
            Err(unknown) => return Ok(ActionOutcome::fail(unknown)),
        };
        let before = self.activity(tab);
        for press in &presses {
            self.press(tab, press).await?;
        }
        let settled = self.settle(tab, &before).await;
        Ok(self.describe_settled(tab, format!("Pressed {keys}"), settled, None).await)
    }

    async fn press(&self, tab: TabId, press: &KeyPress) -> Result<(), CdpError> {
        let mut down = json!({"type": if press.text.is_some() { "keyDown" } else { "rawKeyDown" },
            "key": press.key, "code": press.code, "windowsVirtualKeyCode": press.key_code,
            "modifiers": press.modifiers});
        if let Some(text) = &press.text {
            down["text"] = text.as_str().into();
            down["unmodifiedText"] = text.as_str().into();
        }
        if let Some(command) = press.command {
            down["commands"] = json!([command]);
        }
        self.sessions.send(tab, "Input.dispatchKeyEvent", down).await?;
        let up = json!({"type": "keyUp", "key": press.key, "code": press.code,
            "windowsVirtualKeyCode": press.key_code, "modifiers": press.modifiers});
        self.sessions.send(tab, "Input.dispatchKeyEvent", up).await.map(drop)
    }

    async fn scroll(
        &self,
        tab: TabId,
        id: Option<u32>,
        screens: f64,
    ) -> Result<ActionOutcome, CdpError> {
        let target = id.map_or_else(|| "null".to_owned(), |id| id.to_string());
        let call = format!("alphascout.scroll({target}, {screens})");
        let moved = match id {
            Some(id) => self.agent_for(tab, id, &call).await?,
            None => self.agent(tab, &call).await?,
        };
        if moved.get("gone").is_some() {
            return Ok(ActionOutcome::stale(format!(
                "Element [{}] is gone. Use the current ids.",
                id.unwrap_or_default()
            )));
        }
        let pixels = moved["moved"].as_f64().unwrap_or_default();
        let what = id.map_or_else(|| "the page".to_owned(), |id| format!("[{id}]"));
        if pixels == 0.0 {
            let edge = if screens < 0.0 { "top" } else { "bottom" };
            return Ok(ActionOutcome::ok(format!(
                "{what} is already at the {edge}; nothing moved"
            )));
        }
        // Content loaded by scrolling (infinite lists) is part of the effect.
        let before = self.activity(tab);
        self.settle(tab, &before).await;
        let direction = if pixels < 0.0 { "up" } else { "down" };
        let mut message = format!("Scrolled {what} {direction} by {:.0}px", pixels.abs());
        if moved["atEnd"] == true && pixels > 0.0 {
            message.push_str("; it is at the bottom now");
        }
        Ok(ActionOutcome::ok(message))
    }

    async fn options(&self, tab: TabId, id: u32) -> Result<Value, CdpError> {
        self.agent_for(tab, id, &format!("alphascout.options({id})")).await
    }

    async fn list_options(&self, tab: TabId, id: u32) -> Result<ActionOutcome, CdpError> {
        let listed = self.options(tab, id).await?;
        if listed.get("gone").is_some() {
            return Ok(ActionOutcome::stale(format!(
                "Element [{id}] is gone. Use the current ids."
            )));
        }
        if let Some(what) = listed.get("none").and_then(Value::as_str) {
            return Ok(ActionOutcome::fail(format!(
                "Element [{id}] ({what}) has no options to list. Click it to open it, then read \
                 the new page state."
            )));
        }
        Ok(ActionOutcome::ok(options_listing(id, &listed)))
    }

    async fn select_option(
        &self,
        tab: TabId,
        id: u32,
        wanted: &str,
        deselect: bool,
    ) -> Result<ActionOutcome, CdpError> {
        let listed = self.options(tab, id).await?;
        if listed.get("gone").is_some() {
            return Ok(ActionOutcome::stale(format!(
                "Element [{id}] is gone. Use the current ids."
            )));
        }
        let (verb, done) =
            if deselect { ("deselect", "Deselected") } else { ("select", "Selected") };
        let single = || {
            ActionOutcome::fail(format!(
                "[{id}] takes a single choice, so nothing can be deselected: select the option \
                 you want instead."
            ))
        };
        if listed["native"] == true {
            let before = self.activity(tab);
            let call =
                format!("alphascout.selectNative({id}, {}, {deselect})", Value::from(wanted));
            let chosen = self.agent_for(tab, id, &call).await?;
            if chosen.get("gone").is_some() {
                return Ok(ActionOutcome::stale(format!(
                    "Element [{id}] is gone. Use the current ids."
                )));
            }
            if let Some(all) = chosen.get("missing") {
                return Ok(ActionOutcome::fail(format!(
                    "[{id}] has no option {wanted:?}. Its options: {all}"
                )));
            }
            if let Some(option) = chosen.get("disabled") {
                return Ok(ActionOutcome::fail(format!("Option {option} of [{id}] is disabled.")));
            }
            if chosen.get("single").is_some() {
                return Ok(single());
            }
            let option = chosen["option"].as_str().unwrap_or(wanted);
            let now = selected_now(&chosen["selected"]);
            if chosen["ok"] != true {
                return Ok(ActionOutcome::fail(format!(
                    "The page would not {verb} {option:?} in [{id}]; selected now: {now}."
                )));
            }
            let settled = self.settle(tab, &before).await;
            let mut did = format!("{done} {option:?} in [{id}]");
            if chosen["multiple"] == true {
                did.push_str(&format!("; selected now: {now}"));
            }
            return Ok(self.describe_settled(tab, did, settled, None).await);
        }
        if listed.get("none").is_some() {
            return Ok(ActionOutcome::fail(format!(
                "Element [{id}] is neither a <select> nor a combobox with a listbox. Click it and \
                 pick from the page state instead."
            )));
        }
        let multiple = listed["multiple"] == true;
        if deselect && !multiple {
            return Ok(single());
        }
        // An ARIA widget: open it like a person, then click the option.
        let mut option = find_option(&listed, wanted);
        // In a list of several choices a click toggles: leave an option that is already so.
        if multiple
            && let Some(o) = &option
            && (o["selected"] == true) != deselect
        {
            let text = o["text"].as_str().unwrap_or(wanted);
            let now = selected_now(&selected_texts(&listed));
            return Ok(ActionOutcome::ok(format!(
                "{text:?} was already {verb}ed in [{id}]; selected now: {now}"
            )));
        }
        if option.as_ref().is_some_and(|o| o["visible"] != true) {
            let opened = self.click(tab, id, Press::Left).await?;
            if !opened.ok {
                return Ok(opened);
            }
            option = find_option(&self.options(tab, id).await?, wanted);
        }
        let Some(option) = option else {
            let texts: Vec<_> = listed["options"]
                .as_array()
                .map(|all| {
                    all.iter().filter_map(|o| o["text"].as_str()).map(untrusted::inline).collect()
                })
                .unwrap_or_default();
            return Ok(ActionOutcome::fail(format!(
                "[{id}] has no option {wanted:?}. Its options: {}",
                texts.join(", ")
            )));
        };
        let Some(option_id) = option["id"].as_u64() else {
            return Ok(ActionOutcome::fail("That option cannot be targeted."));
        };
        let clicked = self.click(tab, option_id as u32, Press::Left).await?;
        if !clicked.ok || clicked.page_changed {
            return Ok(clicked);
        }
        // Checked: the option is marked as wanted, or a single-choice widget shows its text.
        let text = option["text"].as_str().unwrap_or(wanted).to_owned();
        let after = self.options(tab, id).await?;
        let marked =
            find_option(&after, &text).is_some_and(|o| (o["selected"] == true) != deselect);
        if multiple {
            let now = selected_now(&selected_texts(&after));
            return Ok(if marked {
                ActionOutcome::ok(format!("{done} {text:?} in [{id}]; selected now: {now}"))
            } else {
                ActionOutcome::fail(format!(
                    "Clicked option {text:?}, but [{id}] does not show it {verb}ed; selected now: \
                     {now}. Read the page state and check the widget."
                ))
            });
        }
        let call = format!("alphascout.element({id})?.textContent ?? ''");
        let shown = self.agent_for(tab, id, &call).await?;
        let shows = shown
            .as_str()
            .is_some_and(|s| text_case::lowercase(s).contains(&text_case::lowercase(&text)));
        Ok(if marked || shows {
            ActionOutcome::ok(format!("Selected {text:?} in [{id}]"))
        } else {
            ActionOutcome::fail(format!(
                "Clicked option {text:?}, but [{id}] does not show it as selected. Read the page \
                 state and check the widget."
            ))
        })
    }
}

/// What `list_options` tells the model: how to choose, then one numbered line per option.
pub fn options_listing(id: u32, listed: &Value) -> String {
    let options = listed["options"].as_array().cloned().unwrap_or_default();
    let lines: Vec<String> = options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let text = untrusted::inline(o["text"].as_str().unwrap_or_default());
            let mut line = format!("{}. {text}", i + 1);
            if o["selected"] == true {
                line.push_str(" (selected)");
            }
            if o["disabled"] == true {
                line.push_str(" (disabled)");
            }
            line
        })
        .collect();
    let how = if listed["multiple"] == true {
        "several can be selected: select_option adds one, and with deselect true takes one away"
    } else {
        "choose one with select_option"
    };
    format!("[{id}] has {} options; {how}:\n{}", options.len(), lines.join("\n"))
}

/// The texts of the options `listed` marks selected.
fn selected_texts(listed: &Value) -> Value {
    let options = listed["options"].as_array().into_iter().flatten();
    options.filter(|o| o["selected"] == true).map(|o| o["text"].clone()).collect()
}

/// `"Red", "Blue"`, or `nothing`, from a list of option texts.
fn selected_now(texts: &Value) -> String {
    let texts: Vec<String> = texts
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|t| format!("{t:?}"))
        .collect();
    if texts.is_empty() { "nothing".into() } else { texts.join(", ") }
}

/// The field's own objection to the value it holds, from the page agent's `value()`.
fn field_verdict(read: &Value) -> Option<String> {
    let attr = |name: &str| untrusted::inline(read[name].as_str().unwrap_or("?")).into_owned();
    Some(match read["invalid"].as_str()? {
        "min" => format!("the field's minimum is {}", attr("min")),
        "max" => format!("the field's maximum is {}", attr("max")),
        "step" => format!("it is off the field's step of {}", attr("step")),
        other => format!("the field does not accept it ({other})"),
    })
}

fn find_option(listed: &Value, wanted: &str) -> Option<Value> {
    let options = listed["options"].as_array()?;
    let want = text_case::lowercase(wanted.trim());
    let text = |o: &Value| text_case::lowercase(o["text"].as_str().unwrap_or_default().trim());
    options
        .iter()
        .find(|o| text(o) == want || o["value"].as_str() == Some(wanted))
        .or_else(|| options.iter().find(|o| text(o).contains(&want)))
        .cloned()
}

fn squash(text: &str) -> String {
    text_case::lowercase(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// One key press with its modifiers, as `Input.dispatchKeyEvent` wants it.
#[derive(Debug, Clone, PartialEq)]
struct KeyPress {
    key: String,
    code: String,
    key_code: u32,
    modifiers: u32,
    text: Option<String>,
    /// The editing command a shortcut runs (`copy`, `paste` …): synthetic key events do not
    /// run them by themselves, so CDP is told, and the page hears its clipboard events.
    command: Option<&'static str>,
}

impl KeyPress {
    /// Parses `Enter`, `a`, `Control+A`, `Shift+Tab`, `Meta+ArrowLeft`…
    fn parse(combo: &str) -> Result<KeyPress, String> {
        let mut parts: Vec<&str> = combo.split('+').collect();
        let key = parts.pop().filter(|k| !k.is_empty()).ok_or("empty key")?;
        let mut modifiers = 0;
        for modifier in parts {
            modifiers |= match modifier.to_ascii_lowercase().as_str() {
                "alt" | "option" => 1,
                "control" | "ctrl" => 2,
                "meta" | "cmd" | "command" => 4,
                "shift" => 8,
                other => return Err(format!("Unknown modifier {other:?} in {combo:?}.")),
            };
        }
        let named = [
            ("Enter", "Enter", 13, Some("\r")),
            ("Tab", "Tab", 9, None),
            ("Escape", "Escape", 27, None),
            ("Backspace", "Backspace", 8, None),
            ("Delete", "Delete", 46, None),
            ("Space", "Space", 32, Some(" ")),
            ("ArrowUp", "ArrowUp", 38, None),
            ("ArrowDown", "ArrowDown", 40, None),
            ("ArrowLeft", "ArrowLeft", 37, None),
            ("ArrowRight", "ArrowRight", 39, None),
            ("PageUp", "PageUp", 33, None),
            ("PageDown", "PageDown", 34, None),
            ("Home", "Home", 36, None),
            ("End", "End", 35, None),
        ];
        let lookup = key.to_ascii_lowercase();
        let lookup = match lookup.as_str() {
            "esc" => "escape",
            "return" => "enter",
            "del" => "delete",
            other => other,
        };
        if let Some((name, code, key_code, text)) =
            named.iter().find(|(name, ..)| name.to_ascii_lowercase() == lookup)
        {
            let key = if *name == "Space" { " " } else { name };
            let text = text.filter(|_| modifiers & 0b0110 == 0).map(str::to_owned);
            return Ok(KeyPress {
                key: key.into(),
                code: (*code).into(),
                key_code: *key_code,
                modifiers,
                text,
                command: None,
            });
        }
        let mut chars = key.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_alphanumeric() => {
                let upper = c.to_ascii_uppercase();
                let code =
                    if c.is_ascii_digit() { format!("Digit{c}") } else { format!("Key{upper}") };
                // With Control or Meta it is a shortcut, not text.
                let text = (modifiers & 0b0110 == 0)
                    .then(|| if modifiers & 8 != 0 { upper.to_string() } else { c.to_string() });
                // Control or Meta with these letters edit, on every platform's keyboard.
                let command = match (modifiers & 0b0110 != 0, modifiers & 0b1001 == 0, upper) {
                    (true, true, 'C') => Some("copy"),
                    (true, true, 'V') => Some("paste"),
                    (true, true, 'X') => Some("cut"),
                    (true, true, 'A') => Some("selectAll"),
                    (true, true, 'Z') => Some("undo"),
                    _ => None,
                };
                Ok(KeyPress {
                    key: c.to_string(),
                    code,
                    key_code: upper as u32,
                    modifiers,
                    text,
                    command,
                })
            }
            _ => Err(format!(
                "Unknown key {key:?}. Use names like Enter, Tab, Escape, ArrowDown, PageDown, \
                 or a letter, with modifiers like Control+A."
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdp::fake::FakeCdp;
    use crate::testing::{FakeClock, OneTab};
    use futures::executor::block_on;
    use std::cell::{Cell, OnceCell};

    /// Performs `action` on a page whose agent answers `answers` in order (after injection).
    fn perform(action: Action, answers: Vec<Value>) -> (ActionOutcome, Vec<String>) {
        perform_in(action, answers, vec![], &OneTab)
    }

    /// [`perform`] where releasing the mouse makes the tab send `events` (as a link or a
    /// router would), in a browser with `tabs`.
    fn perform_in(
        action: Action,
        answers: Vec<Value>,
        events: Vec<(&'static str, Value)>,
        tabs: &impl Tabs,
    ) -> (ActionOutcome, Vec<String>) {
        let (outcome, calls, _) =
            perform_with_params(action, answers, events, tabs, &Firewall::default());
        (outcome, calls)
    }

    /// The input events `action` sent (method and parameters), with its outcome.
    fn inputs(action: Action, answers: Vec<Value>) -> (ActionOutcome, Vec<(String, Value)>) {
        let (outcome, _, params) =
            perform_with_params(action, answers, vec![], &OneTab, &Firewall::default());
        (outcome, params.into_iter().filter(|(m, _)| m.starts_with("Input.")).collect())
    }

    fn perform_with_params(
        action: Action,
        answers: Vec<Value>,
        events: Vec<(&'static str, Value)>,
        tabs: &impl Tabs,
        firewall: &Firewall,
    ) -> (ActionOutcome, Vec<String>, Vec<(String, Value)>) {
        let mut fake = FakeCdp::page().answer("Runtime.evaluate", Ok(json!({"result": {}})));
        for answer in answers {
            fake = fake.answer("Runtime.evaluate", Ok(json!({"result": {"value": answer}})));
        }
        let page = EventfulCdp { fake, events, sessions: OnceCell::new() };
        let sessions = Sessions::new(&page);
        let _ = page.sessions.set(&sessions);
        let clock = FakeClock::default();
        let hands = Hands {
            sessions: &sessions,
            clock: &clock,
            tabs,
            search_url: "https://search.example/?q=",
            limits: WaitLimits::default(),
            firewall,
        };
        let outcome = block_on(hands.perform(1, &action));
        let calls = page.fake.calls.borrow().clone();
        let params = page.fake.params.borrow().clone();
        (outcome, calls, params)
    }

    /// [`FakeCdp`] plus events that reach `Sessions` on a mouse release, the way the worker
    /// forwards Chrome's.
    struct EventfulCdp<'a> {
        fake: FakeCdp,
        events: Vec<(&'static str, Value)>,
        sessions: OnceCell<&'a Sessions<&'a EventfulCdp<'a>>>,
    }

    impl Cdp for &EventfulCdp<'_> {
        async fn attach(&self, tab: TabId) -> Result<(), CdpError> {
            (&self.fake).attach(tab).await
        }
        async fn detach(&self, tab: TabId) -> Result<(), CdpError> {
            (&self.fake).detach(tab).await
        }
        async fn send(
            &self,
            tab: TabId,
            session: Option<&str>,
            method: &str,
            params: Value,
        ) -> Result<Value, CdpError> {
            let released = params["type"] == "mouseReleased";
            let answer = (&self.fake).send(tab, session, method, params).await;
            if released && let Some(sessions) = self.sessions.get() {
                for (event, params) in &self.events {
                    sessions.on_event(tab, event, params, 0.0);
                }
            }
            answer
        }
    }

    /// A browser where a new tab turns up after the first look at the tabs.
    #[derive(Default)]
    struct TabOpens(Cell<u32>);

    impl Tabs for TabOpens {
        async fn list(&self) -> Result<Vec<TabInfo>, TabError> {
            self.0.set(self.0.get() + 1);
            let new = TabInfo { id: 7, url: "https://help.example/".into(), title: "Help".into() };
            Ok(if self.0.get() > 1 { vec![new] } else { vec![] })
        }
        async fn open(&self, _: &str) -> Result<TabId, TabError> {
            Err(TabError::Failed("no".into()))
        }
        async fn activate(&self, _: TabId) -> Result<(), TabError> {
            Err(TabError::Gone)
        }
        async fn close(&self, _: TabId) -> Result<(), TabError> {
            Err(TabError::Gone)
        }
    }

    #[test]
    fn a_tab_that_is_gone_is_reported_as_a_change_not_retried() {
        let tabs = TabOpens::default();
        let (switched, _) = perform_in(Action::SwitchTab { tab_id: 9 }, vec![], vec![], &tabs);
        assert!(!switched.ok);
        assert_eq!(switched.message, "Tab 9 is no longer open");
        assert!(switched.page_changed, "the next state lists the tabs there are");
        let (closed, _) = perform_in(Action::CloseTab { tab_id: 9 }, vec![], vec![], &tabs);
        assert!(closed.ok, "closing a closed tab did what was asked");
        assert_eq!(closed.message, "Tab 9 was already closed");
        let (opened, _) =
            perform_in(Action::OpenTab { url: "https://a.example/".into() }, vec![], vec![], &tabs);
        assert_eq!(
            (opened.ok, opened.message.as_str()),
            (false, "Could not open https://a.example/: no")
        );
    }

    fn evaluations(calls: &[String]) -> usize {
        calls.iter().filter(|c| c.starts_with("Runtime.evaluate")).count()
    }

    #[test]
    fn actions_are_a_tagged_union() {
        let click: Action = serde_json::from_value(json!({"action": "click", "id": 4})).unwrap();
        assert_eq!(click, Action::Click { id: 4 });
        let typed: Action =
            serde_json::from_value(json!({"action": "type", "id": 2, "text": "x"})).unwrap();
        assert_eq!(typed, Action::Type { id: 2, text: "x".into(), clear: true });
        assert!(serde_json::from_value::<Action>(json!({"action": "fly"})).is_err());
    }

    #[test]
    fn a_gone_element_is_reported_not_clicked() {
        let (outcome, calls) = perform(Action::Click { id: 9 }, vec![json!({"gone": true})]);
        assert!(!outcome.ok && outcome.stale, "the plan was made on an older page");
        assert!(outcome.message.contains("[9] is gone"), "{}", outcome.message);
        assert!(!calls.iter().any(|c| c.starts_with("Input.")), "no click was sent: {calls:?}");
    }

    #[test]
    fn a_covered_element_names_what_covers_it() {
        let cover = json!({"covered": "<div> \"We use cookies\""});
        let (outcome, _) = perform(Action::Click { id: 3 }, vec![cover]);
        assert!(outcome.stale);
        assert!(
            outcome.message.contains("covered by <div> \"We use cookies\""),
            "{}",
            outcome.message
        );
    }

    #[test]
    fn a_click_sends_real_mouse_events_and_reports_a_quiet_page() {
        let answers = vec![
            json!({"x": 10, "y": 20, "mutations": 5}),
            json!({"waitedMs": 40, "quiet": true, "mutations": 5}),
        ];
        let (outcome, calls) = perform(Action::Click { id: 3 }, answers);
        assert!(outcome.ok);
        assert_eq!(outcome.message, "Clicked [3]; nothing on the page changed");
        assert!(!outcome.page_changed);
        assert_eq!(calls.iter().filter(|c| c.starts_with("Input.dispatchMouseEvent")).count(), 3);
    }

    #[test]
    fn in_a_hidden_tab_the_page_hands_its_settle_back_and_the_engine_waits_it_out() {
        // Hidden tabs throttle the page's timers to once a second; the page says how long
        // to wait, this side sleeps and looks again, until the page is quiet.
        let answers = vec![
            json!({"x": 10, "y": 20, "mutations": 5}),
            json!({"pending": true, "token": 4, "nextMs": 150}),
            json!({"pending": true, "token": 4, "nextMs": 60}),
            json!({"waitedMs": 210, "quiet": true, "mutations": 5}),
        ];
        let (outcome, calls) = perform(Action::Click { id: 3 }, answers);
        // Only the last answer says what the page did.
        assert_eq!(outcome.message, "Clicked [3]; nothing on the page changed");
        let looks = calls.iter().filter(|c| c.starts_with("Runtime.evaluate")).count();
        assert_eq!(looks, 5, "injection, the point, and three looks at the settle: {calls:#?}");
    }

    #[test]
    fn a_dom_change_does_not_end_the_sequence_but_a_navigation_does() {
        let point = json!({"x": 10, "y": 20, "mutations": 5});
        let settled = json!({"waitedMs": 80, "quiet": true, "mutations": 9});
        let (changed, _) = perform(Action::Click { id: 3 }, vec![point.clone(), settled.clone()]);
        assert!(changed.ok && !changed.page_changed, "a class or a line of text: same ids");
        assert_eq!(changed.message, "Clicked [3]");

        let document = ("Page.frameNavigated", json!({"frame": {"id": "F1"}}));
        let url = json!("https://shop.example/next");
        // The new document needs the page agent again before it can answer.
        let answers = vec![point.clone(), json!(null), settled.clone(), url.clone()];
        let (navigated, _) = perform_in(Action::Click { id: 3 }, answers, vec![document], &OneTab);
        assert!(navigated.ok && navigated.page_changed, "{navigated:?}");
        assert!(navigated.message.ends_with("navigated to https://shop.example/next"));

        let route = json!({"frameId": "F1", "navigationType": "historyApi"});
        let events = vec![("Page.navigatedWithinDocument", route)];
        let answers = vec![point.clone(), settled.clone(), url];
        let (routed, _) = perform_in(Action::Click { id: 3 }, answers, events, &OneTab);
        assert!(routed.page_changed, "a single-page app's route is a navigation too");
        assert!(routed.message.contains("moved to https://shop.example/next"), "{routed:?}");

        let answers = vec![point, settled];
        let (opened, _) =
            perform_in(Action::Click { id: 3 }, answers, vec![], &TabOpens::default());
        assert!(opened.page_changed && opened.message.contains("new tab 7"), "{opened:?}");
    }

    #[test]
    fn scrolling_and_waiting_keep_the_sequence_going() {
        let (waited, _) = perform(Action::Wait { seconds: 0.5 }, vec![]);
        assert!(waited.ok && !waited.page_changed);
        let moved = json!({"moved": 900, "atEnd": false});
        let (scrolled, _) = perform(Action::Scroll { id: None, screens: 1.0 }, vec![moved]);
        assert!(scrolled.ok && !scrolled.page_changed, "{scrolled:?}");
        let (gone, _) =
            perform(Action::Scroll { id: Some(4), screens: 1.0 }, vec![json!({"gone": true})]);
        assert!(gone.stale);
    }

    #[test]
    fn a_missing_native_option_lists_the_real_ones() {
        let answers =
            vec![json!({"native": true, "options": []}), json!({"missing": ["Small", "Medium"]})];
        let select = Action::SelectOption { id: 1, option: "XL".into(), deselect: false };
        let (outcome, _) = perform(select, answers);
        assert!(!outcome.ok);
        assert!(outcome.message.contains("Small") && outcome.message.contains("XL"));
    }

    #[test]
    fn a_multiple_select_reports_every_option_selected_after_the_change() {
        let listed = json!({"native": true, "multiple": true, "options": []});
        let chosen = json!({"option": "Red", "ok": true, "multiple": true,
            "selected": ["Red", "Blue"]});
        let quiet = json!({"quiet": true, "mutations": 3});
        let select = Action::SelectOption { id: 2, option: "red".into(), deselect: false };
        let (outcome, _) = perform(select, vec![listed.clone(), chosen, quiet.clone()]);
        assert!(outcome.ok && !outcome.page_changed, "{outcome:?}");
        assert_eq!(outcome.message, "Selected \"Red\" in [2]; selected now: \"Red\", \"Blue\"");

        let emptied = json!({"option": "Blue", "ok": true, "multiple": true, "selected": []});
        let deselect = Action::SelectOption { id: 2, option: "Blue".into(), deselect: true };
        let (outcome, _) = perform(deselect, vec![listed, emptied, quiet]);
        assert_eq!(outcome.message, "Deselected \"Blue\" in [2]; selected now: nothing");

        let single = vec![json!({"native": true, "options": []}), json!({"single": true})];
        let deselect = Action::SelectOption { id: 3, option: "Small".into(), deselect: true };
        let (outcome, _) = perform(deselect, single);
        assert!(!outcome.ok && outcome.message.contains("single choice"), "{outcome:?}");
    }

    #[test]
    fn deselect_is_left_out_of_the_wire_form_unless_asked_for() {
        let plain: Action =
            serde_json::from_value(json!({"action": "select_option", "id": 2, "option": "Red"}))
                .unwrap();
        assert_eq!(plain, Action::SelectOption { id: 2, option: "Red".into(), deselect: false });
        assert_eq!(serde_json::to_value(&plain).unwrap().get("deselect"), None);
        let off = Action::SelectOption { id: 2, option: "Red".into(), deselect: true };
        assert_eq!(serde_json::to_value(&off).unwrap()["deselect"], true);
    }

    #[test]
    fn a_date_is_set_in_the_fields_own_format_and_read_back() {
        let answers = vec![
            json!({"x": 10, "y": 20, "mutations": 5}),
            json!({"fill": "date", "min": null, "max": null, "step": null}),
            json!({"ok": true}),
            json!({"quiet": true, "mutations": 7}),
            json!({"value": "2016-12-25"}),
        ];
        let typed = Action::Type { id: 4, text: "12/25/2016".into(), clear: true };
        let (outcome, calls) = perform(typed, answers);
        assert!(outcome.ok, "{outcome:?}");
        assert_eq!(
            outcome.message,
            "Typed into [4]; it now reads \"2016-12-25\" (its form of \"12/25/2016\")"
        );
        assert!(!calls.iter().any(|c| c.starts_with("Input.insertText")), "no key presses");
    }

    #[test]
    fn a_value_the_field_cannot_hold_is_refused_before_it_is_touched() {
        let point = json!({"x": 10, "y": 20, "mutations": 5});
        let date = json!({"fill": "date"});
        let typed = Action::Type { id: 4, text: "next Friday".into(), clear: true };
        let (outcome, calls) = perform(typed, vec![point.clone(), date]);
        assert!(!outcome.ok && outcome.message.contains("YYYY-MM-DD"), "{outcome:?}");
        assert_eq!(evaluations(&calls), 3, "injection, point, focus: nothing was filled");

        let slider = json!({"fill": "range", "min": "0", "max": "10"});
        let typed = Action::Type { id: 5, text: "50".into(), clear: true };
        let (outcome, _) = perform(typed, vec![point.clone(), slider]);
        assert!(outcome.message.contains("outside the slider's range, 0 to 10"), "{outcome:?}");

        // Within the format but past the field's own limits: the field says so.
        let answers = vec![
            point,
            json!({"fill": "date", "max": "2020-12-31"}),
            json!({"ok": true}),
            json!({"quiet": true}),
            json!({"value": "2030-01-01", "invalid": "max", "max": "2020-12-31"}),
        ];
        let typed = Action::Type { id: 6, text: "2030-01-01".into(), clear: true };
        let (outcome, _) = perform(typed, answers);
        assert!(!outcome.ok && outcome.message.contains("maximum is 2020-12-31"), "{outcome:?}");
    }

    #[test]
    fn typing_into_a_gone_field_is_stale_and_suggestions_are_mentioned() {
        let point = json!({"x": 10, "y": 20, "mutations": 5});
        let typed = Action::Type { id: 4, text: "kettle".into(), clear: true };
        let (outcome, _) = perform(typed.clone(), vec![point.clone(), json!({"gone": true})]);
        assert!(outcome.stale);

        let answers = vec![
            point,
            json!({"ok": true, "secret": false}),
            json!({"quiet": true, "popup": true, "mutations": 12}),
            json!({"value": "kettle"}),
        ];
        let (outcome, calls) = perform(typed, answers);
        assert!(outcome.ok && !outcome.page_changed, "{outcome:?}");
        assert!(outcome.message.contains("new elements appeared"), "{outcome:?}");
        assert!(calls.iter().any(|c| c.starts_with("Input.insertText")));
    }

    #[test]
    fn web_search_encodes_the_query_and_bad_urls_are_refused() {
        assert_eq!(form_encode("rust & wasm?"), "rust+%26+wasm%3F");
        let (outcome, calls) =
            perform(Action::GoToUrl { url: "javascript:alert(1)".into() }, vec![]);
        assert!(!outcome.ok && outcome.message.contains("not a web address"));
        assert!(!calls.iter().any(|c| c.starts_with("Page.navigate")));
    }

    #[test]
    fn key_combos_parse_into_cdp_key_events() {
        let enter = KeyPress::parse("Enter").unwrap();
        assert_eq!((enter.key_code, enter.text.as_deref()), (13, Some("\r")));
        let select_all = KeyPress::parse("Control+a").unwrap();
        assert_eq!((select_all.modifiers, select_all.code.as_str()), (2, "KeyA"));
        assert_eq!(select_all.text, None, "a shortcut types nothing");
        assert!(KeyPress::parse("Hyper+x").is_err());
        assert!(KeyPress::parse("F13").unwrap_err().contains("Unknown key"));
    }

    #[test]
    fn waiting_is_bounded() {
        let (outcome, _) = perform(Action::Wait { seconds: 60.0 }, vec![]);
        assert_eq!(outcome.message, "Waited 10.0 s");
    }

    fn mouse(inputs: &[(String, Value)]) -> Vec<(String, String, i64, i64)> {
        inputs
            .iter()
            .filter(|(m, _)| m == "Input.dispatchMouseEvent")
            .map(|(_, p)| {
                let field = |k: &str| p[k].as_str().unwrap_or_default().to_owned();
                (
                    field("type"),
                    field("button"),
                    p["clickCount"].as_i64().unwrap_or(0),
                    p["buttons"].as_i64().unwrap_or(0),
                )
            })
            .collect()
    }

    #[test]
    fn a_double_click_presses_twice_and_a_right_click_with_the_right_button() {
        let point = json!({"x": 10, "y": 20, "mutations": 5});
        let quiet = json!({"waitedMs": 40, "quiet": true, "mutations": 6});
        let (double, sent) =
            inputs(Action::DoubleClick { id: 3 }, vec![point.clone(), quiet.clone()]);
        assert!(double.message.starts_with("Double-clicked [3]"), "{}", double.message);
        let presses: Vec<i64> =
            mouse(&sent).iter().filter(|e| e.0 == "mousePressed").map(|e| e.2).collect();
        assert_eq!(presses, [1, 2], "the second press makes the dblclick");
        let (right, sent) = inputs(Action::RightClick { id: 3 }, vec![point, quiet]);
        assert!(right.message.starts_with("Right-clicked [3]"), "{}", right.message);
        assert!(mouse(&sent).iter().any(|e| e.0 == "mousePressed" && e.1 == "right" && e.3 == 2));
    }

    #[test]
    fn a_drag_holds_the_button_from_the_element_to_the_target_and_releases_there() {
        let from = json!({"x": 10, "y": 20, "mutations": 5});
        let onto = json!({"x": 110, "y": 220, "mutations": 5});
        let quiet = json!({"waitedMs": 40, "quiet": true, "mutations": 9});
        let drag = Action::Drag { id: 3, to: Some(4), to_text: None, dx: 0.0, dy: 0.0 };
        let (outcome, sent) = inputs(drag, vec![from, onto, quiet]);
        assert_eq!(outcome.message, "Dragged [3] onto [4]");
        let events = mouse(&sent);
        assert_eq!(events.first().map(|e| e.0.as_str()), Some("mouseMoved"));
        let held: Vec<_> = events.iter().filter(|e| e.0 == "mouseMoved" && e.3 == 1).collect();
        assert!(held.len() >= 8, "moves a frame at a time with the button held: {events:?}");
        let (_, last) = sent.iter().rev().find(|(m, _)| m == "Input.dispatchMouseEvent").unwrap();
        assert_eq!(
            (last["type"].as_str(), last["x"].as_f64(), last["y"].as_f64()),
            (Some("mouseReleased"), Some(110.0), Some(220.0))
        );
        // Nowhere to drop is refused before anything is pressed.
        let nowhere = Action::Drag { id: 3, to: None, to_text: None, dx: 0.0, dy: 0.0 };
        let (refused, sent) = inputs(nowhere, vec![]);
        assert!(!refused.ok && refused.message.contains("Say where to drop"));
        assert!(sent.is_empty());
    }

    #[test]
    fn copy_and_paste_run_the_editing_commands_and_paste_reports_what_the_field_holds() {
        let (copied, sent) =
            inputs(Action::Copy { id: Some(2) }, vec![json!({"selected": "ORD-1"})]);
        assert!(copied.ok && copied.message.starts_with("Copied \"ORD-1\""), "{}", copied.message);
        let down =
            sent.iter().find(|(m, p)| m == "Input.dispatchKeyEvent" && p["type"] == "rawKeyDown");
        assert_eq!(down.unwrap().1["commands"], json!(["copy"]));
        let nothing = inputs(Action::Copy { id: None }, vec![json!("")]).0;
        assert!(!nothing.ok && nothing.message.contains("Nothing is selected"));
        let unchanged = vec![json!({"ok": true}), json!({"value": "a"}), json!({"value": "a"})];
        let refused = inputs(Action::Paste { id: 4 }, unchanged).0;
        assert!(!refused.ok && refused.message.contains("did not change"), "{}", refused.message);
        assert_eq!(KeyPress::parse("Control+V").unwrap().command, Some("paste"));
        assert_eq!(KeyPress::parse("Shift+V").unwrap().command, None);
    }

    #[test]
    fn a_slider_value_outside_its_range_is_refused_before_it_is_touched() {
        let info = json!({"min": 0, "max": 20, "now": 5, "vertical": false, "text": "",
                          "thumb": [50, 10], "track": [0, 5, 300, 10]});
        let (outcome, sent) = inputs(Action::SetSlider { id: 6, value: 30.0 }, vec![info]);
        assert!(
            !outcome.ok && outcome.message.contains("goes from 0 to 20"),
            "{}",
            outcome.message
        );
        assert!(sent.is_empty());
    }

    #[test]
    fn a_double_click_or_a_drag_of_a_link_to_a_denied_site_is_refused_like_a_click() {
        let firewall = Firewall::from_lists(&[], &["denied.example".to_owned()]);
        let link = json!({"x": 10, "y": 20, "mutations": 5, "link": "https://denied.example/x"});
        let drag = Action::Drag { id: 3, to: None, to_text: None, dx: 50.0, dy: 0.0 };
        for action in [Action::DoubleClick { id: 3 }, drag] {
            let (outcome, _, params) =
                perform_with_params(action, vec![link.clone()], vec![], &OneTab, &firewall);
            assert!(!outcome.ok && outcome.message.contains("is a link"), "{}", outcome.message);
            assert!(params.iter().all(|(m, _)| !m.starts_with("Input.")), "nothing was pressed");
        }
        // A right-click opens the page's menu, not the link: it goes ahead.
        let quiet = json!({"waitedMs": 40, "quiet": true, "mutations": 6});
        let (right, ..) = perform_with_params(
            Action::RightClick { id: 3 },
            vec![link, quiet],
            vec![],
            &OneTab,
            &firewall,
        );
        assert!(right.ok, "{}", right.message);
    }
}
