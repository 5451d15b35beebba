use annotation_core::team::{AuditEntry, AuditFilter, audit_changes};
use yew::prelude::*;

use crate::state::team::TeamAction;
use crate::state::{Action, Dispatch};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub entries: Vec<AuditEntry>,
    pub filter: AuditFilter,
    pub dispatch: Dispatch,
}

/// The server's audit log (admins): who wrote what and when, with the ids or versions
/// before and after; filtered by user, action, run and dates, and exported as JSON Lines.
#[function_component(AuditView)]
pub fn audit_view(props: &Props) -> Html {
    let fields = [use_node_ref(), use_node_ref(), use_node_ref(), use_node_ref(), use_node_ref()];
    let read = {
        let fields = fields.clone();
        move || {
            let value = |i: usize| {
                fields[i].cast::<web_sys::HtmlInputElement>().map(|f| f.value()).unwrap_or_default()
            };
            AuditFilter {
                user: value(0),
                action: value(1),
                run_id: value(2),
                since: value(3),
                until: value(4),
            }
        }
    };
    let apply = {
        let (read, dispatch) = (read.clone(), props.dispatch.clone());
        Callback::from(move |_| dispatch.dispatch(Action::Team(TeamAction::AuditFilter(read()))))
    };
    let export = props.dispatch.to_callback().reform(|_| Action::Team(TeamAction::ExportAudit));
    let f = &props.filter;
    let input = |i: usize, id: &str, label: &str, value: &str, hint: &str| {
        html! {
            <label>{ label }<input data-testid={format!("audit-{id}")} ref={fields[i].clone()} value={value.to_owned()} placeholder={hint.to_owned()} size="12" /></label>
        }
    };
    html! {
        <div class="audit">
            <div class="filters">
                { input(0, "user", "User", &f.user, "any") }
                { input(1, "action", "Action", &f.action, "any") }
                { input(2, "run", "Run", &f.run_id, "any") }
                { input(3, "since", "From", &f.since, "YYYY-MM-DD") }
                { input(4, "until", "To", &f.until, "YYYY-MM-DD") }
                <button class="small" data-testid="audit-apply" onclick={apply}>{ "Filter" }</button>
                <button class="small" data-testid="audit-export" onclick={export}>{ "Export JSON Lines" }</button>
            </div>
            <table class="audit-log" data-testid="audit-log">
                <thead><tr><th>{ "#" }</th><th>{ "when" }</th><th>{ "who" }</th><th>{ "action" }</th><th>{ "run" }</th><th>{ "target" }</th><th>{ "what changed" }</th></tr></thead>
                <tbody>
                    { for props.entries.iter().map(|e| {
                        let changes = audit_changes(&e.before, &e.after);
                        let json = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
                        html! {
                            <tr data-testid="audit-entry" data-action={e.action.clone()}>
                                <td>{ e.seq }</td>
                                <td class="when">{ e.at.get(..19).unwrap_or(&e.at).replace('T', " ") }</td>
                                <td>{ &e.user }</td>
                                <td>{ &e.action }</td>
                                <td>{ e.run_id.clone().unwrap_or_default() }</td>
                                <td>{ &e.target }</td>
                                <td class="changes" data-testid="audit-changes">
                                    if changes.is_empty() {
                                        <span class="muted">{ "no change in value" }</span>
                                    }
                                    { for changes.iter().map(|c| html! {
                                        <div class="change" data-testid="audit-change" data-field={c.field.clone()}>
                                            if !c.field.is_empty() { <span class="field">{ &c.field }</span> }
                                            <span class="before">{ &c.before }</span>
                                            <span class="muted">{ " → " }</span>
                                            <span class="after">{ &c.after }</span>
                                        </div>
                                    }) }
                                    <details data-testid="audit-json">
                                        <summary>{ "JSON" }</summary>
                                        <div class="audit-json">
                                            <div><span class="muted">{ "before" }</span><pre>{ json(&e.before) }</pre></div>
                                            <div><span class="muted">{ "after" }</span><pre>{ json(&e.after) }</pre></div>
                                        </div>
                                    </details>
                                </td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
            if props.entries.is_empty() { <p class="muted">{ "No entries match." }</p> }
        </div>
    }
}
