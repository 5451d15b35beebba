use yew::prelude::*;

use protocol::settings::ModelRole;

use crate::state::settings::ConnectionTest;

#[derive(Properties, PartialEq)]
pub struct ConnectionTestProps {
    pub role: ModelRole,
    pub test: ConnectionTest,
    pub connected: bool,
    pub on_test: Callback<ModelRole>,
}

/// "Test connection" for one role's model as typed, and how it went.
#[function_component(ConnectionTestButton)]
pub fn connection_test(props: &ConnectionTestProps) -> Html {
    let role = props.role;
    let testid = format!("settings-{}-test", role.id());
    let testing = matches!(props.test, ConnectionTest::Testing { .. });
    html! {
        <div class="connection-test">
            <button type="button" class="secondary" data-testid={testid.clone()}
                title="Make one tiny call with this model, as typed"
                disabled={testing || !props.connected}
                onclick={props.on_test.reform(move |_: MouseEvent| role)}>
                { if testing { "Testing…" } else { "Test connection" } }
            </button>
            if let ConnectionTest::Done { ok, message } = &props.test {
                <p class={classes!("test-result", if *ok { "ok" } else { "error" })}
                    data-testid={format!("{testid}-result")} data-ok={ok.to_string()} role="status">
                    <span aria-hidden="true">{ if *ok { "✓ " } else { "✗ " } }</span>{ message.clone() }
                </p>
            }
        </div>
    }
}
