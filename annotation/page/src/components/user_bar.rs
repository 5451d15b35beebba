use annotation_core::roles::{Role, User};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub user: User,
    pub on_change: Callback<User>,
    /// With a sync server the token decides who you are, so it is shown, not chosen.
    pub from_server: bool,
}

/// Who is annotating, and in which role. Locally this decides which buttons show; with a
/// sync server the server's token decides what is allowed.
#[function_component(UserBar)]
pub fn user_bar(props: &Props) -> Html {
    // Each change reads both fields: the other may have changed since the last render.
    let (name_field, role_field) = (use_node_ref(), use_node_ref());
    let read = {
        let (name_field, role_field, user) =
            (name_field.clone(), role_field.clone(), props.user.clone());
        move || {
            let name =
                name_field.cast::<web_sys::HtmlInputElement>().map(|i| i.value().trim().to_owned());
            let role = role_field
                .cast::<web_sys::HtmlSelectElement>()
                .and_then(|s| Role::parse(&s.value()));
            User {
                name: name.filter(|n| !n.is_empty()).unwrap_or_else(|| user.name.clone()),
                role: role.unwrap_or(user.role),
            }
        }
    };
    let on_name = {
        let (read, on_change) = (read.clone(), props.on_change.clone());
        Callback::from(move |_: Event| on_change.emit(read()))
    };
    let on_role = {
        let on_change = props.on_change.clone();
        Callback::from(move |_: Event| on_change.emit(read()))
    };
    if props.from_server {
        return html! {
            <div class="user-bar" title="Your sync token decides who you are">
                <span data-testid="user-name">{ &props.user.name }</span>
                <span class="muted" data-testid="user-role">{ props.user.role.label() }</span>
            </div>
        };
    }
    html! {
        <div class="user-bar">
            <label>{ "You" }
                <input data-testid="user-name" value={props.user.name.clone()} onchange={on_name} size="10" ref={name_field} />
            </label>
            <label>{ "as" }
                <select data-testid="user-role" onchange={on_role} ref={role_field}>
                    { for Role::ALL.iter().map(|role| html! {
                        <option value={role.as_str()} selected={*role == props.user.role}>{ role.label() }</option>
                    }) }
                </select>
            </label>
        </div>
    }
}
