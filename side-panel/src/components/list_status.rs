use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ListStatusProps {
    /// The list's name in test ids: `{name}-error` and `{name}-empty`.
    pub name: AttrValue,
    /// What is said while the list is read for the first time, if it is.
    pub reading: Option<AttrValue>,
    pub error: Option<String>,
    /// What is said when the list is read and holds nothing, if so.
    pub empty: Option<AttrValue>,
}

/// Where a list view that the worker answers for (History, Jobs) stands: being read, failed,
/// or empty.
#[function_component(ListStatus)]
pub fn list_status(props: &ListStatusProps) -> Html {
    html! {
        <>
            if let Some(reading) = &props.reading {
                <p class="settings-status pending" role="status">{ reading.clone() }</p>
            }
            if let Some(error) = &props.error {
                <p class="settings-status error" data-testid={format!("{}-error", props.name)} role="alert">{ error.clone() }</p>
            }
            if let Some(empty) = &props.empty {
                <p class="empty-history" data-testid={format!("{}-empty", props.name)}>{ empty.clone() }</p>
            }
        </>
    }
}
