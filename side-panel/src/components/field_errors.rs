use run_contract::Problem;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct FieldErrorsProps {
    /// The element id the field's `aria-describedby` points at.
    pub id: AttrValue,
    /// (field path, message); the path goes in `data-field`.
    pub problems: Vec<Problem>,
    /// For a pattern list: the line number of each pattern index (`allow.1` → line 3).
    #[prop_or_default]
    pub lines: Vec<usize>,
}

/// The inline errors of one Settings field.
#[function_component(FieldErrors)]
pub fn field_errors(props: &FieldErrorsProps) -> Html {
    if props.problems.is_empty() {
        return html! {};
    }
    html! {
        <div class="field-errors" id={props.id.clone()}>
            { for props.problems.iter().map(|Problem { path, message }| {
                let line = path
                    .rsplit_once('.')
                    .and_then(|(_, index)| index.parse::<usize>().ok())
                    .and_then(|index| props.lines.get(index));
                let text = match line {
                    Some(line) => format!("Line {line}: {message}"),
                    None => message.clone(),
                };
                html! {
                    <p class="field-error" data-testid="settings-error" data-field={path.clone()}>{ text }</p>
                }
            }) }
        </div>
    }
}
