use std::cell::RefCell;
use std::collections::HashMap;

use annotation_core::record::ScreenshotRef;
use yew::prelude::*;

use crate::components::app::DbHandle;

thread_local! {
    /// Object URLs of screenshots already read, by key: a key names one image forever
    /// (it is the image's SHA-256), so a URL never goes stale.
    static URLS: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

/// The object URL of the screenshot stored under `key`, read once.
#[hook]
fn use_screenshot(shot: Option<ScreenshotRef>) -> Option<String> {
    let db = use_context::<Option<DbHandle>>().flatten();
    let key = shot.map(|s| s.key);
    let cached = key.as_ref().and_then(|k| URLS.with(|u| u.borrow().get(k).cloned()));
    // The URL with the key it shows, so a new step never shows the last step's image.
    let url = use_state(|| key.clone().zip(cached.clone()));
    {
        let url = url.clone();
        use_effect_with(key.clone(), move |key| {
            let key = key.clone();
            match key.as_ref().and_then(|k| URLS.with(|u| u.borrow().get(k).cloned())) {
                Some(found) => url.set(key.zip(Some(found))),
                None => match (key, db) {
                    (Some(key), Some(db)) => yew::platform::spawn_local(async move {
                        let found =
                            db.0.screenshot(&key).await.and_then(|blob| {
                                web_sys::Url::create_object_url_with_blob(&blob).ok()
                            });
                        if let Some(found) = &found {
                            URLS.with(|u| u.borrow_mut().insert(key.clone(), found.clone()));
                        }
                        url.set(found.map(|f| (key, f)));
                    }),
                    _ => url.set(None),
                },
            }
        });
    }
    cached.or_else(|| (*url).clone().filter(|(k, _)| Some(k) == key.as_ref()).map(|(_, u)| u))
}

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
