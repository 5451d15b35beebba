use run_contract::Problem;
use yew::prelude::*;

use crate::components::settings_field::{InputKind, SettingsField};
use crate::state::settings::{ConnectionTest, Field, McpDraft};

#[derive(Properties, PartialEq)]
pub struct McpServersProps {
    pub servers: Vec<McpDraft>,
    /// Each row's "Test", by row.
    pub tests: Vec<ConnectionTest>,
    pub connected: bool,
    pub on_test: Callback<usize>,
    pub problems: Vec<Problem>,
    pub on_edit: Callback<(Field, String)>,
    pub on_add: Callback<()>,
    pub on_remove: Callback<usize>,
}

/// Settings' MCP servers: each a name pipelines use, its streamable HTTP URL and an
/// optional token, masked like the API keys.
#[function_component(McpServers)]
pub fn mcp_servers(props: &McpServersProps) -> Html {
    let of = |field: Field| {
        let path = field.path();
        props.problems.iter().filter(|p| p.path == path).cloned().collect::<Vec<_>>()
    };
    html! {
        <div class="mcp-servers" data-testid="settings-mcp">
            if props.servers.is_empty() {
                <p class="muted" data-testid="settings-mcp-empty">{ "No MCP server yet." }</p>
            }
            { for props.servers.iter().enumerate().map(|(i, server)| {
                let on_remove = props.on_remove.reform(move |_: MouseEvent| i);
                let on_test = props.on_test.reform(move |_: MouseEvent| i);
                let test = props.tests.get(i).cloned().unwrap_or_default();
                let testing = matches!(test, ConnectionTest::Testing { .. });
                let name = server.name.trim();
                let title = if name.is_empty() { format!("Server {}", i + 1) } else { name.to_owned() };
                let hint = if name.is_empty() {
                    "Name it, e.g. shop: pipelines then say server: shop, and mcp:shop/* in allow_tools.".to_owned()
                } else {
                    format!("What pipelines call it: server: {name}, and mcp:{name}/* in allow_tools.")
                };
                html! {
                    <fieldset class="mcp-server" data-testid={format!("settings-mcp-{i}")}>
                        <legend>{ title.clone() }</legend>
                        <div class="grid">
                            <SettingsField field={Field::McpName(i)} label="Name" value={server.name.clone()}
                                placeholder={AttrValue::from("shop")}
                                hint={AttrValue::from(hint)}
                                problems={of(Field::McpName(i))} on_edit={props.on_edit.clone()} />
                            <SettingsField field={Field::McpUrl(i)} label="URL (streamable HTTP)" kind={InputKind::Url}
                                value={server.url.clone()} placeholder={AttrValue::from("http://127.0.0.1:8000/mcp")}
                                problems={of(Field::McpUrl(i))} on_edit={props.on_edit.clone()} />
                            <SettingsField field={Field::McpToken(i)} label="Bearer token (optional)" kind={InputKind::Password}
                                value={server.token.clone()}
                                hint={AttrValue::from("Sent to this server's origin only.")}
                                problems={of(Field::McpToken(i))} on_edit={props.on_edit.clone()} />
                        </div>
                        <div class="connection-test">
                            <button type="button" class="secondary" data-testid={format!("settings-mcp-{i}-test")}
                                title="Start a session and list the server's tools, as typed"
                                disabled={testing || !props.connected} onclick={on_test}>
                                { if testing { "Testing…" } else { "Test" } }
                            </button>
                            <button type="button" class="secondary" data-testid={format!("settings-mcp-{i}-remove")}
                                aria-label={format!("Remove MCP server {title}")} onclick={on_remove}>
                                { "Remove" }
                            </button>
                            if let ConnectionTest::Done { ok, message } = &test {
                                <p class={classes!("test-result", if *ok { "ok" } else { "error" })}
                                    data-testid={format!("settings-mcp-{i}-test-result")} data-ok={ok.to_string()} role="status">
                                    <span aria-hidden="true">{ if *ok { "✓ " } else { "✗ " } }</span>{ message.clone() }
                                </p>
                            }
                        </div>
                    </fieldset>
                }
            }) }
            <button type="button" class="secondary" data-testid="settings-mcp-add"
                onclick={props.on_add.reform(|_: MouseEvent| ())}>
                { "Add MCP server" }
            </button>
        </div>
    }
}
