//! Screenshots read from storage as object URLs, for the components that show them.

use std::cell::RefCell;
use std::collections::HashMap;

use annotation_core::record::ScreenshotRef;
use yew::prelude::*;

use super::DbHandle;

thread_local! {
    /// Object URLs of screenshots already read, by key: a key names one image forever
    /// (it is the image's SHA-256), so a URL never goes stale.
    static URLS: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

/// The object URL of the screenshot stored under `shot`'s key, read once. A read, not a
/// change: it goes through no action, and its answer is cached per page rather than held in
/// the state, which every thumbnail would otherwise re-render on.
#[hook]
pub fn use_screenshot(shot: Option<ScreenshotRef>) -> Option<String> {
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
