use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct DrivenBannerProps {
    /// The MCP client's name.
    pub client: AttrValue,
    pub job_id: AttrValue,
    pub stopping: bool,
    pub connected: bool,
    pub on_stop: Callback<String>,
}

/// Says that an MCP client drives the job in this tab, with a Stop (the Jobs view's).
#[function_component(DrivenBanner)]
pub fn driven_banner(props: &DrivenBannerProps) -> Html {
    let job = props.job_id.to_string();
    let onclick = props.on_stop.reform(move |_: MouseEvent| job.clone());
    html! {
        <div class="driven-banner" data-testid="driven-by" role="status">
            <span class="words">{ "Driven by " }<strong>{ props.client.clone() }</strong></span>
            <button type="button" class="secondary" data-testid="driven-by-stop"
                disabled={props.stopping || !props.connected} {onclick}
                title="Stop the job this MCP client started">
                { if props.stopping { "Stopping…" } else { "Stop" } }
            </button>
        </div>
    }
}
