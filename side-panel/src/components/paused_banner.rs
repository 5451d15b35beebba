use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct PausedBannerProps {
    /// The agent asked a question (else the person paused it, or the worker did).
    pub question: bool,
    /// Why it paused, as the worker put it.
    pub reason: Option<AttrValue>,
    pub on_resume: Callback<()>,
}

const PAUSED_BY_USER: &str = "Agent paused – you can adjust instructions now";

/// Says the agent waits, and for what; offers to resume without a message.
#[function_component(PausedBanner)]
pub fn paused_banner(props: &PausedBannerProps) -> Html {
    let (reason, title, button) = if props.question {
        ("question", "Agent paused – waiting for your answer", "Resume anyway")
    } else {
        ("user", PAUSED_BY_USER, "Resume")
    };
    let detail = props
        .reason
        .clone()
        .filter(|r| !props.question && !r.is_empty() && r.as_str() != PAUSED_BY_USER);
    html! {
        <div class={classes!("paused-banner", reason)} data-testid="paused-banner" data-reason={reason}
            role="status">
            <span class="pause-icon" aria-hidden="true"><span></span><span></span></span>
            <div class="words">
                <strong>{ title }</strong>
                if let Some(detail) = detail {
                    <span class="detail">{ detail }</span>
                }
            </div>
            <button type="button" data-testid="resume-anyway"
                title={if props.question { "Continue without answering; the agent uses its best judgment" } else { "Continue the task" }}
                onclick={props.on_resume.reform(|_: MouseEvent| ())}>
                { button }
            </button>
        </div>
    }
}
