//! The open file's saved versions, newest first: number, local time and what is known of
//! each; a chosen one's diff against the text in the editor; restore (a new version, after
//! asking when the file has unsaved edits).

use page_port::local_time;
use studio_core::diff::{self, Piece, Row};
use studio_core::versions;
use yew::prelude::*;

use crate::components::StudioProps;
use crate::state::Action;

#[function_component(VersionsPanel)]
pub fn versions_panel(props: &StudioProps) -> Html {
    let StudioProps { state, dispatch } = props;
    let Some(path) = state.file.clone() else { return html! {} };
    let click = |action: Action| {
        let dispatch = dispatch.clone();
        Callback::from(move |_| dispatch.dispatch(action.clone()))
    };
    let all = state.versions.as_deref().unwrap_or_default();
    let listed = state.file_versions();
    let catalogue = state.catalogue();
    let bundled = catalogue
        .prompts
        .iter()
        .flat_map(|p| p.files.iter())
        .chain(catalogue.rules.iter())
        .find(|f| f.path == path)
        .and_then(|f| f.bundled.clone());
    let shown = state.diff_version.as_ref().filter(|(p, _)| *p == path).map(|(_, n)| *n);
    let rows = listed.iter().map(|version| {
        let number = version.number;
        let open = shown == Some(number);
        let note = versions::note(all, version, bundled.as_deref());
        html! {
            <li class={if open { "version open" } else { "version" }} data-testid="prompt-version" data-number={number.to_string()}>
                <span class="number">{ format!("v{number}") }</span>
                <time datetime={version.saved_at.clone()}>{ local_time(&version.saved_at) }</time>
                <span class="who">{ "saved in the Studio" }</span>
                if let Some(note) = note { <span class="badge" data-testid="version-note">{ note }</span> }
                <button class="small" data-testid="version-diff"
                    onclick={click(Action::ShowDiff(if open { None } else { Some(number) }))}>
                    { if open { "Hide diff" } else { "Diff with current" } }
                </button>
                <button class="small" data-testid="version-restore" onclick={click(Action::Restore(number))}>{ "Restore" }</button>
            </li>
        }
    });
    let confirm = state.confirm_restore.as_ref().filter(|(p, _)| *p == path).map(|(_, number)| html! {
        <div class="confirm" data-testid="restore-confirm" role="alertdialog">
            <span>{ format!("{path} has unsaved edits. Restoring version {number} discards them.") }</span>
            <button data-testid="restore-confirm-yes" onclick={click(Action::ConfirmRestore(true))}>{ format!("Discard edits and restore v{number}") }</button>
            <button data-testid="restore-confirm-no" onclick={click(Action::ConfirmRestore(false))}>{ "Keep editing" }</button>
        </div>
    });
    let diff_view = shown.and_then(|number| {
        let version = listed.iter().find(|v| v.number == number)?;
        let current = state.current_text(&path).unwrap_or_default();
        let lines = diff::diff(&version.text, &current);
        let (added, removed) = diff::counts(&lines);
        let rows = diff::fold(lines, 3).into_iter().map(|row| match row {
            Row::Unchanged(n) => html! { <div class="diff-skip">{ format!("… {n} unchanged line(s)") }</div> },
            Row::Line(line) => {
                let mark = match line.kind { diff::LineKind::Same => " ", diff::LineKind::Removed => "−", diff::LineKind::Added => "+" };
                let pieces = line.pieces.iter().map(|piece| match (piece, line.kind) {
                    (Piece::Same(text), _) => html! { { text } },
                    (Piece::Changed(text), diff::LineKind::Removed) => html! { <del>{ text }</del> },
                    (Piece::Changed(text), _) => html! { <ins>{ text }</ins> },
                });
                html! {
                    <div class={format!("diff-line {}", line.kind.name())} data-testid="diff-line" data-kind={line.kind.name()}>
                        <span class="mark">{ mark }</span>{ for pieces }
                    </div>
                }
            }
        });
        Some(html! {
            <div class="version-diff" data-testid="version-diff-view" data-number={number.to_string()}>
                <p class="meta" data-testid="version-diff-summary">
                    { if added + removed == 0 {
                        format!("Version {number} is the same as the current text.")
                    } else {
                        format!("Version {number} → current text: {added} line(s) added, {removed} removed (− only in v{number}, + only in the current text)")
                    } }
                </p>
                <pre class="diff">{ for rows }</pre>
            </div>
        })
    });
    html! {
        <section class="panel versions-panel" data-testid="versions-panel">
            <h2>{ format!("Saved versions of {path}") }</h2>
            if state.versions.is_none() {
                <p class="hint">{ "Reading the saved versions…" }</p>
            } else if listed.is_empty() {
                <p class="hint" data-testid="no-versions">{ "Not saved from the Studio yet: each save keeps a numbered version here." }</p>
            } else {
                <ul class="versions" data-testid="prompt-versions">{ for rows }</ul>
            }
            { confirm.unwrap_or_default() }
            { diff_view.unwrap_or_default() }
        </section>
    }
}
