use annotation_core::record::ScreenshotRef;
use yew::prelude::*;

use crate::effects::use_screenshot;

#[derive(Properties, PartialEq)]
pub struct ThumbProps {
    pub shot: Option<ScreenshotRef>,
}

#[function_component(Thumbnail)]
pub fn thumbnail(props: &ThumbProps) -> Html {
    match use_screenshot(props.shot.clone()) {
        Some(url) => html! { <img class="thumb" src={url} alt="" loading="lazy" /> },
        None => html! { <span class="thumb none" /> },
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub shot: Option<ScreenshotRef>,
    pub zoomed: bool,
    pub on_zoom: Callback<()>,
}

/// The step's screenshot, fitted to the panel; a click (or Alt+Z) shows it full size.
#[function_component(ScreenshotView)]
pub fn screenshot_view(props: &Props) -> Html {
    let url = use_screenshot(props.shot.clone());
    let Some(url) = url else {
        let text = if props.shot.is_some() {
            "Loading the screenshot…"
        } else {
            "No screenshot was captured for this step."
        };
        return html! { <div class="screenshot none" data-testid="screenshot">{ text }</div> };
    };
    let class = classes!("screenshot", props.zoomed.then_some("zoomed"));
    html! {
        <div class={class} data-testid="screenshot" onclick={props.on_zoom.reform(|_| ())}
            title={if props.zoomed { "Click to fit (Alt+Z)" } else { "Click to zoom (Alt+Z)" }}>
            <img src={url} alt="The page as the agent saw it at this step" data-testid="screenshot-img" />
        </div>
    }
}
