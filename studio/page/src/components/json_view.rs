//! An answer as pretty JSON, the lines a schema violation names highlighted with it.

use prompt_files::structured::Problem;
use serde_json::Value;
use studio_core::output::lines;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct JsonViewProps {
    pub value: Value,
    #[prop_or_default]
    pub violations: Vec<Problem>,
}

#[function_component(JsonView)]
pub fn json_view(props: &JsonViewProps) -> Html {
    let rows = lines(&props.value, &props.violations).into_iter().map(|line| {
        let bad = !line.violations.is_empty();
        html! {
            <div class={if bad { "json-line violation" } else { "json-line" }}
                data-testid={if bad { "violation-line" } else { "json-line" }}
                data-pointer={line.pointer.clone()}
                style={format!("padding-left: {}em", line.indent * 2)}>
                <span>{ &line.text }</span>
                if bad {
                    <span class="why" data-testid="violation-message">{ format!("  ← {}", line.violations.join("; ")) }</span>
                }
            </div>
        }
    });
    html! { <div class="json-view">{ for rows }</div> }
}
