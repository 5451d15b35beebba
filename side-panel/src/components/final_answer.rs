use yew::prelude::*;

use crate::components::markdown::Markdown;

#[derive(Properties, PartialEq)]
pub struct FinalAnswerProps {
    pub text: AttrValue,
}

/// The task's result, set apart from the work that led to it.
#[function_component(FinalAnswer)]
pub fn final_answer(props: &FinalAnswerProps) -> Html {
    html! {
        <section class="final-answer" data-testid="final-answer" aria-label="Final answer">
            <h2 class="final-answer-title"><span aria-hidden="true">{ "✓ " }</span>{ "Final answer" }</h2>
            <Markdown source={props.text.clone()} />
        </section>
    }
}
