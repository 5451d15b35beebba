//! The repair loop of seed `002_…` ("Repair policy"): when a reply does not parse or does
//! not follow its schema, the failed output and the exact violations go back to the model
//! (or to a dedicated repair model) for a bounded number of retries per call, within a
//! budget per run, and every repair is counted per prompt and model.

use std::cell::RefCell;
use std::rc::Rc;

use serde::Serialize;
use serde_json::Value;

use crate::Clock;
use crate::providers::{
    ChatMessage, ChatRequest, Http, LlmError, ModelConfig, RetryWait, Usage, complete_watched,
};
use crate::structured::{Schema, extract_json};

/// How one call may be repaired.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepairPolicy {
    /// Retries after the first answer; 0 opts this call out of repair.
    pub max_repairs: u32,
}

impl Default for RepairPolicy {
    fn default() -> Self {
        RepairPolicy { max_repairs: 2 }
    }
}

/// Repairs left for the whole run, the tally per prompt and model, and every answer's
/// usage, so what a failed call spent is counted too. It also tells the run's watcher when
/// a call waits on the provider (a rate limit), since every call of a run goes through it.
#[derive(Debug, Default)]
pub struct RepairLedger {
    remaining: RefCell<u32>,
    /// (prompt id, model) → repairs attempted.
    pub counts: RefCell<lean::SortedMap<(String, String), u32>>,
    spent: RefCell<Usage>,
    waits: WaitWatcher,
}

/// Who hears of a run's provider waits.
#[derive(Default, Clone)]
pub struct WaitWatcher(Option<Rc<dyn Fn(Option<RetryWait>)>>);

impl WaitWatcher {
    pub fn new(watch: impl Fn(Option<RetryWait>) + 'static) -> WaitWatcher {
        WaitWatcher(Some(Rc::new(watch)))
    }

    pub fn tell(&self, wait: Option<RetryWait>) {
        if let Some(watch) = &self.0 {
            watch(wait);
        }
    }
}

impl std::fmt::Debug for WaitWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "WaitWatcher(set)" } else { "WaitWatcher(none)" })
    }
}

impl RepairLedger {
    pub fn with_budget(budget: u32) -> RepairLedger {
        RepairLedger { remaining: RefCell::new(budget), ..RepairLedger::default() }
    }

    /// The ledger's calls tell `waits` when they wait on the provider.
    pub fn watched(mut self, waits: WaitWatcher) -> RepairLedger {
        self.waits = waits;
        self
    }

    pub fn remaining(&self) -> u32 {
        *self.remaining.borrow()
    }

    /// The usage of every answer received through this ledger, valid or not.
    pub fn spent(&self) -> Usage {
        *self.spent.borrow()
    }

    fn spend(&self, usage: Usage) {
        let mut spent = self.spent.borrow_mut();
        spent.input_tokens += usage.input_tokens;
        spent.output_tokens += usage.output_tokens;
    }

    fn take(&self, prompt: &str, model: &str) -> bool {
        let mut remaining = self.remaining.borrow_mut();
        if *remaining == 0 {
            return false;
        }
        *remaining -= 1;
        *self.counts.borrow_mut().entry_or_default((prompt.to_owned(), model.to_owned())) += 1;
        true
    }
}

pub use run_records::Attempt;

/// A structured answer and how it was reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Structured {
    pub value: Value,
    pub attempts: Vec<Attempt>,
}

impl Structured {
    /// What every attempt cost together.
    pub fn usage(&self) -> Usage {
        self.attempts.iter().fold(Usage::default(), |sum, a| Usage {
            input_tokens: sum.input_tokens + a.usage.input_tokens,
            output_tokens: sum.output_tokens + a.usage.output_tokens,
        })
    }
}

/// Why no valid answer came.
#[derive(Debug, Clone, PartialEq)]
pub enum StructuredError {
    Provider(LlmError),
    /// Still invalid after the allowed repairs (or with none allowed).
    Invalid {
        attempts: Vec<Attempt>,
        budget_exhausted: bool,
    },
}

impl std::fmt::Display for StructuredError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StructuredError::Provider(error) => error.fmt(f),
            StructuredError::Invalid { attempts, .. } => {
                let last = attempts.last().map(|a| a.problems.join("; ")).unwrap_or_default();
                write!(f, "{}: {last}", self.headline().trim_end_matches('.'))
            }
        }
    }
}

impl StructuredError {
    /// One sentence for a person: what went wrong, without the list of problems.
    pub fn headline(&self) -> String {
        match self {
            StructuredError::Provider(error) => error.to_string(),
            StructuredError::Invalid { attempts, budget_exhausted } => {
                let why = if *budget_exhausted {
                    "the run's repair budget is used up"
                } else {
                    "repairs did not fix it"
                };
                format!(
                    "The model's answer did not follow the expected format after {} attempt(s) ({why}).",
                    attempts.len()
                )
            }
        }
    }

    /// What the last answer got wrong, where, for whoever wants to look.
    pub fn details(&self) -> Option<String> {
        match self {
            StructuredError::Provider(_) => None,
            StructuredError::Invalid { .. } => Some(self.to_string()),
        }
    }
}

/// Asks for an answer that follows `schema`, repairing invalid ones per `policy` within the
/// run's `ledger`. `repair_model`, when given, handles the repairs.
#[allow(clippy::too_many_arguments)]
pub async fn ask_structured(
    http: &impl Http,
    clock: &impl Clock,
    model: &ModelConfig,
    repair_model: Option<&ModelConfig>,
    prompt_id: &str,
    chat: &ChatRequest,
    schema: &Schema,
    policy: RepairPolicy,
    ledger: &RepairLedger,
) -> Result<Structured, StructuredError> {
    let mut attempts = Vec::new();
    let mut request = chat.clone();
    let mut current = model;
    loop {
        let on_wait = |wait| ledger.waits.tell(wait);
        let reply = complete_watched(http, clock, current, &request, &on_wait)
            .await
            .map_err(StructuredError::Provider)?;
        ledger.spend(reply.usage);
        let problems = match extract_json(&reply.text) {
            Ok(value) => {
                let violations: Vec<String> =
                    schema.validate(&value).iter().map(ToString::to_string).collect();
                if violations.is_empty() {
                    attempts.push(Attempt {
                        model: current.model.clone(),
                        raw: reply.text,
                        problems: vec![],
                        usage: reply.usage,
                    });
                    return Ok(Structured { value, attempts });
                }
                violations
            }
            Err(error) => vec![error.message],
        };
        attempts.push(Attempt {
            model: current.model.clone(),
            raw: reply.text.clone(),
            problems: problems.clone(),
            usage: reply.usage,
        });
        let repairs_done = attempts.len() as u32 - 1;
        if repairs_done >= policy.max_repairs {
            return Err(StructuredError::Invalid { attempts, budget_exhausted: false });
        }
        current = repair_model.unwrap_or(model);
        if !ledger.take(prompt_id, &current.model) {
            return Err(StructuredError::Invalid { attempts, budget_exhausted: true });
        }
        request.messages.push(ChatMessage::assistant(reply.text));
        request.messages.push(ChatMessage::user(repair_message(&problems)));
    }
}

fn repair_message(problems: &[String]) -> String {
    let mut message =
        String::from("Your answer does not follow the required JSON schema. Problems:\n");
    for problem in problems {
        message.push_str("- ");
        message.push_str(problem);
        message.push('\n');
    }
    message.push_str("Send the corrected JSON object only, with nothing around it.");
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{ProviderKind, Secret};
    use crate::testing::{FakeClock, Scripted};
    use futures::executor::block_on;
    use serde_json::json;

    fn model(name: &str) -> ModelConfig {
        ModelConfig {
            provider: ProviderKind::OpenAi,
            base_url: String::new(),
            api_key: Secret::new("k"),
            model: name.into(),
            timeout_ms: 1000,
            max_retries: 0,
        }
    }

    fn schema() -> Schema {
        Schema::compile(json!({"type": "object", "required": ["done"], "properties": {"done": {"type": "boolean"}}})).unwrap()
    }

    fn ask(
        http: &Scripted,
        repair: Option<&ModelConfig>,
        policy: RepairPolicy,
        ledger: &RepairLedger,
    ) -> Result<Structured, StructuredError> {
        let chat = ChatRequest {
            system: "s".into(),
            messages: vec![ChatMessage::user("go")],
            ..Default::default()
        };
        block_on(ask_structured(
            http,
            &FakeClock::default(),
            &model("main"),
            repair,
            "planner",
            &chat,
            &schema(),
            policy,
            ledger,
        ))
    }

    #[test]
    fn a_valid_first_answer_needs_no_repair() {
        let http = Scripted::new(["```json\n{\"done\": true}\n```"]);
        let ledger = RepairLedger::with_budget(5);
        let answer = ask(&http, None, RepairPolicy::default(), &ledger).unwrap();
        assert_eq!((answer.value.clone(), answer.attempts.len()), (json!({"done": true}), 1));
        assert_eq!(ledger.remaining(), 5);
    }

    #[test]
    fn repair_sends_back_the_failed_output_and_its_violations_then_succeeds() {
        let http = Scripted::new(["{\"done\": \"yes\"}", "{\"done\": true}"]);
        let ledger = RepairLedger::with_budget(5);
        let answer = ask(&http, None, RepairPolicy::default(), &ledger).unwrap();
        assert_eq!(answer.attempts.len(), 2);
        assert_eq!(answer.usage().input_tokens, 200, "usage adds up across attempts");
        let second = &http.seen.borrow()[1].body["messages"];
        let messages = second.as_array().unwrap();
        assert_eq!(messages[messages.len() - 2]["content"], "{\"done\": \"yes\"}");
        assert!(
            messages.last().unwrap()["content"]
                .as_str()
                .unwrap()
                .contains("at /done: expected boolean, got string")
        );
        assert_eq!(ledger.counts.borrow()[&("planner".to_owned(), "main".to_owned())], 1);
        assert_eq!(ledger.remaining(), 4);
    }

    #[test]
    fn a_dedicated_repair_model_handles_the_repairs() {
        let http = Scripted::new(["not json at all", "{\"done\": false}"]);
        let ledger = RepairLedger::with_budget(5);
        let answer = ask(&http, Some(&model("fixer")), RepairPolicy::default(), &ledger).unwrap();
        assert_eq!(answer.attempts[1].model, "fixer");
        assert_eq!(http.seen.borrow()[1].body["model"], "fixer");
    }

    #[test]
    fn repair_fails_after_the_allowed_retries_with_the_last_problems() {
        let http = Scripted::new(["{}", "{}", "{}"]);
        let error =
            ask(&http, None, RepairPolicy { max_repairs: 2 }, &RepairLedger::with_budget(9))
                .unwrap_err();
        let StructuredError::Invalid { attempts, budget_exhausted } = &error else {
            panic!("{error}")
        };
        assert_eq!((attempts.len(), *budget_exhausted), (3, false));
        assert!(error.to_string().contains("missing required field \"done\""), "{error}");
    }

    #[test]
    fn a_call_can_opt_out_of_repair() {
        let http = Scripted::new(["{}"]);
        let error =
            ask(&http, None, RepairPolicy { max_repairs: 0 }, &RepairLedger::with_budget(9))
                .unwrap_err();
        assert!(
            matches!(error, StructuredError::Invalid { ref attempts, .. } if attempts.len() == 1)
        );
    }

    #[test]
    fn the_run_budget_caps_repairs_across_calls() {
        let http = Scripted::new(["{}", "{}"]);
        let ledger = RepairLedger::with_budget(1);
        let error = ask(&http, None, RepairPolicy { max_repairs: 5 }, &ledger).unwrap_err();
        assert!(
            matches!(error, StructuredError::Invalid { budget_exhausted: true, .. }),
            "{error}"
        );
        assert!(error.to_string().contains("repair budget is used up"));
        assert_eq!(ledger.remaining(), 0);
    }
}
