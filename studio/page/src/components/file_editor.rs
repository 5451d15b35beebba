//! The open prompt's files (manifest, variants, schema) or a shared rule: the text in
//! force beside the bundled one, each with its hash; problems shown as typed, in place.

use studio_core::catalogue::{FileKind, PromptFile, error_path, short_hash};
use yew::prelude::*;

use crate::components::{StudioProps, on_input};
use crate::state::Action;

#[function_component(FileEditor)]
pub fn file_editor(props: &StudioProps) -> Html {
    let StudioProps { state, dispatch } = props;
    let catalogue = state.catalogue();
    let entry = catalogue.prompts.iter().find(|p| p.id == state.prompt);
    let new_variant = use_state(String::new);
    let open: Option<&PromptFile> = state.file.as_deref().and_then(|path| {
        let mut files = catalogue.prompts.iter().flat_map(|p| p.files.iter());
        files.find(|f| f.path == path).or_else(|| catalogue.rules.iter().find(|f| f.path == path))
    });
    let tabs = entry.map(|entry| {
        entry.files.iter().map(|file| {
            let label = match &file.kind {
                FileKind::Manifest => "prompt.json".to_owned(),
                FileKind::Variant(name) => format!("variant {name}"),
                FileKind::Schema => "schema".to_owned(),
                FileKind::Rule(name) => name.clone(),
                FileKind::Other => file.path.clone(),
            };
            let active = state.file.as_deref() == Some(file.path.as_str());
            let dispatch = dispatch.clone();
            let (path, kind) = (file.path.clone(), file.kind.clone());
            let onclick = Callback::from(move |_| match &kind {
                FileKind::Variant(name) => dispatch.dispatch(Action::SelectVariant(name.clone())),
                _ => dispatch.dispatch(Action::OpenFile(path.clone())),
            });
            let dirty = state.drafts.contains_key(&file.path);
            html! {
                <button class={if active { "file-tab active" } else { "file-tab" }} data-testid="file-tab"
                    data-path={file.path.clone()} {onclick}>
                    { label }{ if dirty { " •" } else { "" } }
                </button>
            }
        }).collect::<Html>()
    });
    // Loaded once per render: the check and the unknown variables read the same set.
    let checked = state.check();
    let blocked = checked.as_ref().ok().and_then(|prompts| state.unknown_variables(prompts));
    let problem = checked.err();
    let all_paths: Vec<String> = catalogue
        .prompts
        .iter()
        .flat_map(|p| p.files.iter().map(|f| f.path.clone()))
        .chain(catalogue.rules.iter().map(|f| f.path.clone()))
        .collect();
    let problem_path =
        problem.as_deref().and_then(|p| error_path(p, all_paths.iter().map(String::as_str)));
    let editor = match open {
        None => html! { <p class="hint">{ "Choose a file." }</p> },
        Some(file) => {
            let text =
                state.drafts.get(&file.path).cloned().unwrap_or_else(|| file.current().to_owned());
            let here = problem_path.as_deref() == Some(file.path.as_str());
            let oninput = on_input(dispatch, Action::Edit);
            let path = file.path.clone();
            let revert = {
                let dispatch = dispatch.clone();
                Callback::from(move |_| dispatch.dispatch(Action::Revert(path.clone())))
            };
            let discard = {
                let dispatch = dispatch.clone();
                Callback::from(move |_| dispatch.dispatch(Action::DiscardDraft))
            };
            let state_label = if state.drafts.contains_key(&file.path) {
                "unsaved edits"
            } else if state.is_overridden(&file.path) {
                "edited (override saved)"
            } else if file.bundled.is_some() {
                "bundled"
            } else {
                "new"
            };
            html! {
                <div class="file">
                    <div class="file-head">
                        <code data-testid="file-path">{ &file.path }</code>
                        <span class="file-state" data-testid="file-state">{ state_label }</span>
                        <span class="hash" data-testid="current-hash">{ format!("in force: {}", short_hash(&text)) }</span>
                        if let Some(bundled) = &file.bundled {
                            <span class="hash" data-testid="bundled-hash">{ format!("bundled: {}", short_hash(bundled)) }</span>
                        }
                    </div>
                    <div class="side-by-side">
                        <label class="pane">
                            <span>{ "Editing" }</span>
                            <textarea class={if here { "code invalid" } else { "code" }} data-testid="file-text"
                                spellcheck="false" value={text} {oninput} />
                        </label>
                        if let Some(bundled) = &file.bundled {
                            <label class="pane">
                                <span>{ "Bundled" }</span>
                                <textarea class="code" readonly=true data-testid="bundled-text" value={bundled.clone()} />
                            </label>
                        }
                    </div>
                    if here {
                        <p class="error" data-testid="file-error">{ problem.clone().unwrap_or_default() }</p>
                    }
                    if let (Some(blocked), None) = (&blocked, &problem) {
                        <p class="error" data-testid="save-problem">{ blocked.clone() }</p>
                    }
                    <div class="buttons">
                        <button data-testid="save-prompts" disabled={state.drafts.is_empty() || problem.is_some() || blocked.is_some() || state.saving()}
                            onclick={{ let d = dispatch.clone(); Callback::from(move |_| d.dispatch(Action::Save)) }}>
                            { format!("Save {} file(s) as override", state.drafts.len()) }
                        </button>
                        if state.drafts.contains_key(&file.path) {
                            <button data-testid="discard-draft" onclick={discard}>{ "Discard edits" }</button>
                        }
                        if state.is_overridden(&file.path) && file.bundled.is_some() {
                            <button data-testid="revert-bundled" onclick={revert}>{ "Revert to bundled" }</button>
                        }
                    </div>
                </div>
            }
        }
    };
    let on_variant_name = page_kit::keep_text(&new_variant);
    let on_new_variant = {
        let (dispatch, new_variant) = (dispatch.clone(), new_variant.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            dispatch.dispatch(Action::NewVariant((*new_variant).clone()));
            new_variant.set(String::new());
        })
    };
    html! {
        <section class="panel editor" data-testid="file-editor">
            <h2>{ format!("Prompt {} · variant {}", state.prompt, state.variant) }</h2>
            <div class="file-tabs">{ tabs.unwrap_or_default() }</div>
            { editor }
            if problem.is_some() && open.is_none_or(|f| problem_path.as_deref() != Some(f.path.as_str())) {
                <p class="error" data-testid="other-file-error">{ format!("Another file has a problem: {}", problem.clone().unwrap_or_default()) }</p>
            }
            <form class="new" onsubmit={on_new_variant}>
                <input data-testid="new-variant-name" placeholder="variant name" value={(*new_variant).clone()} oninput={on_variant_name} />
                <button data-testid="new-variant">{ format!("New variant from {}", state.variant) }</button>
            </form>
        </section>
    }
}
