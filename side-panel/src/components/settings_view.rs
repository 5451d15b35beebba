use yew::prelude::*;

use crate::components::field_errors::FieldErrors;
use crate::components::mcp_clients::McpClients;
use crate::components::mcp_servers::McpServers;
use crate::components::model_fields::ModelFields;
use crate::components::settings_field::{InputKind, SettingsField};
use crate::components::variant_select::VariantSelect;
use protocol::settings::ModelRole;

use crate::components::view_head::ViewHead;
use crate::state::settings::{Field, Load, Saved, SettingsForm, pattern_lines};

#[derive(Properties, PartialEq)]
pub struct SettingsViewProps {
    pub form: SettingsForm,
    pub connected: bool,
    /// The MCP server's state (the native host and its clients).
    pub mcp: protocol::mcp::McpStatus,
    pub on_edit: Callback<(Field, String)>,
    pub on_test: Callback<ModelRole>,
    pub on_add_mcp: Callback<()>,
    pub on_remove_mcp: Callback<usize>,
    pub on_test_mcp: Callback<usize>,
    pub on_save: Callback<()>,
    pub on_close: Callback<()>,
    /// Asks for the settings again after loading failed.
    pub on_reload: Callback<()>,
}

/// Settings inside the panel: a model per role, agent options, where the agent may go,
/// prompt variants and the sync endpoint. Problems show next to their field as they are
/// typed, and again (from the worker) if a save is refused.
const PATTERNS: &str = "one pattern per line, e.g. shop.example.com or https://*.example.org/*";

#[function_component(SettingsView)]
pub fn settings_view(props: &SettingsViewProps) -> Html {
    let form = &props.form;
    let draft = &form.draft;
    let problems = form.problems();
    let on_edit = &props.on_edit;
    let of = |field: Field| form.problems_of(field);
    let onsubmit = props.on_save.reform(|event: SubmitEvent| event.prevent_default());
    let checkbox = |field: Field| {
        on_edit.reform(move |event: Event| (field, page_kit::checked(&event).to_string()))
    };
    let textarea =
        |field: Field| on_edit.reform(move |event: InputEvent| (field, page_kit::value(&event)));
    let list = |field: Field,
                label: &'static str,
                text: &str,
                hint: &'static str,
                example: &'static str| {
        let testid = field.testid();
        let lines: Vec<usize> = pattern_lines(text).into_iter().map(|(line, _)| line).collect();
        let list_problems = of(field);
        let invalid = !list_problems.is_empty();
        html! {
            <div class={classes!("field", invalid.then_some("invalid"))}>
                <label for={testid.clone()}>{ label }</label>
                <textarea id={testid.clone()} data-testid={testid.clone()} rows="3" spellcheck="false"
                    placeholder={example}
                    value={text.to_owned()} aria-invalid={invalid.to_string()}
                    aria-describedby={format!("{testid}-hint {testid}-errors")}
                    oninput={textarea(field)} />
                <p class="field-hint" id={format!("{testid}-hint")}>{ hint }</p>
                <FieldErrors id={format!("{testid}-errors")} problems={list_problems} {lines} />
            </div>
        }
    };
    let status = match (&form.load, &form.saved, form.saving) {
        (_, _, Some(_)) => Some(("pending", "Saving…".to_owned())),
        (Load::NotLoaded, ..) => Some(("pending", "Waiting for the agent…".to_owned())),
        (Load::Loading { .. }, ..) => Some(("pending", "Loading your settings…".to_owned())),
        (Load::Failed { message }, ..) => {
            Some(("error", format!("Could not load settings: {message}")))
        }
        (_, Some(Saved::Ok), _) => Some(("ok", "Saved.".to_owned())),
        (_, Some(Saved::Refused), _) => {
            Some(("error", "Not saved: fix the fields marked below.".to_owned()))
        }
        (_, Some(Saved::Failed(message)), _) => Some(("error", format!("Not saved: {message}"))),
        (Load::Ready { stored: false }, None, None) => Some((
            "info",
            "Nothing is saved yet: choose a provider, model and API key for each role.".to_owned(),
        )),
        _ => None,
    };
    let status_html = |id: &'static str| match &status {
        Some((class, text)) => html! {
            <p class={classes!("settings-status", *class)} data-testid={id} role="status">{ text.clone() }</p>
        },
        None => html! {},
    };
    let mut roles: Vec<ModelRole> = ModelRole::AGENTS.to_vec();
    if draft.repair_enabled {
        roles.push(ModelRole::Repair);
    }
    let ready = matches!(form.load, Load::Ready { .. });
    // The agent's whole-number options: (field, label, hint).
    let agent_numbers: [(Field, &'static str, Option<&'static str>); 10] = [
        (Field::MaxSteps, "Max steps", None),
        (Field::MaxJobs, "Jobs at once", None),
        (Field::PlanningInterval, "Planning interval (steps)", None),
        (Field::FailureThreshold, "Failures before review", None),
        (Field::MaxActions, "Max actions per step", None),
        (Field::StateText, "Page text (characters)", None),
        (
            Field::ThinkingInterval,
            "ThinkingAgent review every N steps",
            Some("0: only on a claim, a message, a question or a failure streak."),
        ),
        (Field::HistorySteps, "Steps shown in full in history", None),
        (Field::RepairRetries, "Repairs per answer", None),
        (Field::RepairBudget, "Repairs per run", None),
    ];
    html! {
        <section class="settings" data-testid="settings" aria-labelledby="settings-title">
            <ViewHead name="settings" title="Settings" on_close={props.on_close.clone()} />
            { status_html("settings-status") }
            if matches!(form.load, Load::Failed { .. }) {
                <button type="button" class="secondary" onclick={props.on_reload.reform(|_: MouseEvent| ())}>
                    { "Try again" }
                </button>
            }
            <form class="settings-form" {onsubmit} novalidate=true>
                <h3>{ "Models" }</h3>
                <p class="section-hint">
                    { "Each agent can use its own model. Keys are stored in this browser only and never shown again." }
                </p>
                { for roles.iter().map(|role| html! {
                    <ModelFields role={*role} model={draft.model(*role).clone()} problems={problems.clone()}
                        on_edit={on_edit.clone()} test={form.connection_of(*role).clone()}
                        connected={props.connected} on_test={props.on_test.clone()} />
                }) }
                <label class="check">
                    <input type="checkbox" data-testid={Field::RepairEnabled.testid()}
                        checked={draft.repair_enabled} onchange={checkbox(Field::RepairEnabled)} />
                    { "Use a separate model to repair malformed answers" }
                </label>

                <h3>{ "Agent" }</h3>
                <div class="grid">
                    { for agent_numbers.into_iter().map(|(field, label, hint)| html! {
                        <SettingsField {field} label={label} kind={InputKind::Number} value={draft.number(field).to_owned()}
                            hint={hint.map(AttrValue::from)} problems={of(field)} on_edit={on_edit.clone()} />
                    }) }
                </div>
                <label class="check">
                    <input type="checkbox" data-testid={Field::Vision.testid()} checked={draft.vision}
                        onchange={checkbox(Field::Vision)} />
                    { "Vision: send the Navigator a screenshot with each step" }
                </label>

                <h3>{ "Where the agent may go" }</h3>
                { list(Field::Allow, "Allow list", &draft.allow, "Empty: any site. A pattern without a scheme matches the host and its subdomains; * matches anything.", PATTERNS) }
                { list(Field::Deny, "Deny list", &draft.deny, "Never visited, even if allowed: no page, frame or tab the agent reaches loads from these, and no link pings them.", PATTERNS) }
                <label class="check">
                    <input type="checkbox" data-testid={Field::BlockPageRequests.testid()}
                        checked={draft.block_page_requests} onchange={checkbox(Field::BlockPageRequests)} />
                    { "Also block page requests to denied hosts (scripts, images, fetches; pages load a little slower)" }
                </label>

                { list(Field::TraceRedactions, "Kept out of traces", &draft.trace_redactions, "Prompt variables replaced by [redacted] in every trace, rendered prompt included.", "one variable path a line, e.g. page_state") }

                <h3>{ "Prompt variants" }</h3>
                <div class="grid">
                    { for ModelRole::AGENTS.iter().map(|role| html! {
                        <VariantSelect role={*role} choices={form.variant_choices(*role)}
                            value={draft.variant(*role).to_owned()}
                            problems={of(Field::Variant(*role))} on_edit={on_edit.clone()} />
                    }) }
                </div>

                <h3>{ "MCP servers" }</h3>
                <p class="section-hint">
                    { "Servers whose tools pipelines may call (tool: mcp) and list ({{tools.list}}). AlphaScout talks to each server's own origin only; plain http:// only to this computer." }
                </p>
                <McpServers servers={draft.mcp_servers.clone()} problems={problems.clone()}
                    tests={form.mcp_tests.clone()} connected={props.connected} on_test={props.on_test_mcp.clone()}
                    on_edit={on_edit.clone()} on_add={props.on_add_mcp.clone()} on_remove={props.on_remove_mcp.clone()} />

                <h3>{ "MCP clients" }</h3>
                <McpClients allowed={draft.allow_mcp_clients} status={props.mcp.clone()} on_edit={on_edit.clone()} />

                <h3>{ "Prices" }</h3>
                { list(Field::Prices, "Price per million tokens (USD)", &draft.prices, "For the cost shown with each task. A model without a price costs nothing here.", "one model per line, e.g. gpt-4o = 2.5, 10") }

                <p class="muted" data-testid="settings-sync-note">{ "Runs sync to your team's server from the annotation page: its sync pill holds the server and token." }</p>

                <div class="settings-actions">
                    <button type="submit" class="primary" data-testid="settings-save"
                        disabled={!props.connected || !ready || form.saving.is_some()}>
                        { "Save settings" }
                    </button>
                    if !problems.is_empty() {
                        <span class="problem-count" role="status">
                            { match problems.len() { 1 => "1 field needs attention".to_owned(), n => format!("{n} fields need attention") } }
                        </span>
                    }
                </div>
            </form>
        </section>
    }
}
