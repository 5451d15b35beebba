use protocol::mcp::McpStatus;
use yew::prelude::*;

use crate::state::settings::Field;

#[derive(Properties, PartialEq)]
pub struct McpClientsProps {
    /// The switch as drafted in the form.
    pub allowed: bool,
    /// The worker's state of the host, as last told.
    pub status: McpStatus,
    pub on_edit: Callback<(Field, String)>,
}

/// Settings' "Allow MCP clients": the switch, whether the native host answers (or why not),
/// and the clients connected through it.
#[function_component(McpClients)]
pub fn mcp_clients(props: &McpClientsProps) -> Html {
    let status = &props.status;
    let field = Field::AllowMcpClients;
    let onchange =
        props.on_edit.reform(move |event: Event| (field, page_kit::checked(&event).to_string()));
    let (class, line) = match (status.allowed, status.connected, &status.problem) {
        (false, ..) => ("off", "Off: no MCP client can reach AlphaScout.".to_owned()),
        (true, true, _) => ("ok", "The MCP host is connected.".to_owned()),
        (true, false, Some(problem)) => ("error", problem.clone()),
        (true, false, None) => ("pending", "Connecting to the MCP host…".to_owned()),
    };
    html! {
        <div class="mcp-clients" data-testid="settings-mcp-clients">
            <label class="check">
                <input type="checkbox" data-testid={field.testid()} checked={props.allowed} {onchange} />
                { "Allow MCP clients" }
            </label>
            <p class="field-hint">
                { "Desktop apps and local agents may run tasks, workflows and published pipelines in this browser, under the same firewall. Takes effect when you save." }
            </p>
            <p class={classes!("mcp-host", class)} data-testid="mcp-host-status" data-state={class} role="status">
                { line }
            </p>
            if status.connected {
                if status.clients.is_empty() {
                    <p class="muted" data-testid="mcp-clients-empty">{ "No client is connected." }</p>
                } else {
                    <ul class="mcp-client-list" data-testid="mcp-client-list">
                        { for status.clients.iter().map(|client| {
                            let since = js_sys::Date::new(&client.since.into())
                                .to_locale_time_string("default")
                                .as_string()
                                .unwrap_or_default();
                            html! {
                                <li data-testid="mcp-client" data-transport={client.transport.clone()}>
                                    <strong>{ client.name.clone() }</strong>
                                    if !client.version.is_empty() {
                                        <span class="muted">{ format!(" {}", client.version) }</span>
                                    }
                                    <span class="detail">{ format!(" · {} · since {since}", client.transport) }</span>
                                </li>
                            }
                        }) }
                    </ul>
                }
            }
        </div>
    }
}
