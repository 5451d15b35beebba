use yew::prelude::*;

use crate::markdown::{Block, Inline, parse};

#[derive(Properties, PartialEq)]
pub struct MarkdownProps {
    /// Agent text; read as Markdown and rendered as nodes, never as HTML.
    pub source: AttrValue,
}

/// Agent text with its Markdown rendered safely: text nodes only, links that open in a new
/// tab with `rel=noopener`, and only for `http(s)` and `mailto`.
#[function_component(Markdown)]
pub fn markdown(props: &MarkdownProps) -> Html {
    let blocks = use_memo(props.source.clone(), |source| parse(source));
    html! { <div class="md">{ for blocks.iter().map(block) }</div> }
}

fn block(block: &Block) -> Html {
    match block {
        // Headings sit inside a message, so they start below the panel's own.
        Block::Heading(level, content) => {
            let tag = format!("h{}", (level + 2).min(6));
            html! { <@{tag}>{ inlines(content) }</@> }
        }
        Block::Paragraph(content) => html! { <p>{ inlines(content) }</p> },
        Block::Code { lang, text } => html! {
            <pre data-lang={(!lang.is_empty()).then(|| lang.clone())}><code>{ text.clone() }</code></pre>
        },
        Block::List { ordered: true, start, items } => html! {
            <ol start={(*start != 1).then(|| start.to_string())}>
                { for items.iter().map(|item| html! { <li>{ inlines(item) }</li> }) }
            </ol>
        },
        Block::List { ordered: false, items, .. } => html! {
            <ul>{ for items.iter().map(|item| html! { <li>{ inlines(item) }</li> }) }</ul>
        },
        Block::Quote(content) => html! { <blockquote>{ inlines(content) }</blockquote> },
        Block::Rule => html! { <hr /> },
    }
}

fn inlines(content: &[Inline]) -> Html {
    content.iter().map(inline).collect()
}

fn inline(inline: &Inline) -> Html {
    match inline {
        Inline::Text(text) => html! { { text.clone() } },
        Inline::Strong(content) => html! { <strong>{ inlines(content) }</strong> },
        Inline::Em(content) => html! { <em>{ inlines(content) }</em> },
        Inline::Code(code) => html! { <code>{ code.clone() }</code> },
        Inline::Link { href, children } => html! {
            <a href={href.clone()} target="_blank" rel="noopener noreferrer">{ inlines(children) }</a>
        },
        Inline::Break => html! { <br /> },
    }
}
