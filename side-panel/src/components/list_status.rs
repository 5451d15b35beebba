use yew::prelude::*;

/// Where a list view that the worker answers for (History, Jobs) stands: `reading` while it
/// is read for the first time, the error, or `empty` when it is read and holds nothing. `name`
/// is the list's in test ids: `{name}-error` and `{name}-empty`.
pub fn list_status(
    name: &str,
    reading: Option<&'static str>,
    error: Option<&String>,
    empty: Option<&'static str>,
) -> Html {
    html! {
        <>
            if let Some(reading) = reading {
                <p class="settings-status pending" role="status">{ reading }</p>
            }
            if let Some(error) = error {
                <p class="settings-status error" data-testid={format!("{name}-error")} role="alert">{ error.clone() }</p>
            }
            if let Some(empty) = empty {
                <p class="empty-history" data-testid={format!("{name}-empty")}>{ empty }</p>
            }
        </>
    }
}
