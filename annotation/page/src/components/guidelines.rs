use annotation_core::team::{Block, Project, guideline_blocks};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub project: Project,
}

/// The project's guidelines in the editor's header: the link, and the markdown read as
/// text blocks (never as HTML).
#[function_component(Guidelines)]
pub fn guidelines(props: &Props) -> Html {
    let project = &props.project;
    if project.link().is_none() && project.guidelines_markdown.is_none() {
        return html! {};
    }
    html! {
        <div class="guidelines" data-testid="guidelines">
            if let Some(url) = project.link() {
                <a data-testid="guidelines-link" href={url.to_owned()} target="_blank" rel="noopener noreferrer">{ "Guidelines ↗" }</a>
            }
            if let Some(markdown) = &project.guidelines_markdown {
                <details data-testid="guidelines-text">
                    <summary>{ "Read the guidelines" }</summary>
                    { for guideline_blocks(markdown).into_iter().map(|block| match block {
                        Block::Heading(text) => html! { <h4>{ text }</h4> },
                        Block::Item(text) => html! { <p class="item">{ format!("• {text}") }</p> },
                        Block::Paragraph(text) => html! { <p>{ text }</p> },
                    }) }
                </details>
            }
        </div>
    }
}
