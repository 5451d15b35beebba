//! The Settings form: a draft of text fields over [`Settings`], checked as it is edited with
//! the same rules the worker applies ([`Settings::problems`]), so mistakes show at once next
//! to their field. Problems are keyed by the worker's field paths, JSON Pointers into the
//! settings (`/models/navigator/base_url`, `/agent/max_steps`, `/allow/0`, …).

use protocol::settings::{
    AgentOptions, McpServer, ModelConfig, ModelRole, ProviderKind, RoleModels, Secret, Settings,
};
use run_contract::Problem;

/// Every provider, in the order the form lists them, with its wire id and label.
pub const PROVIDERS: [(ProviderKind, &str, &str); 6] = [
    (ProviderKind::OpenAi, "open_ai", "OpenAI"),
    (ProviderKind::Anthropic, "anthropic", "Anthropic"),
    (ProviderKind::Gemini, "gemini", "Google Gemini"),
    (ProviderKind::OpenRouter, "open_router", "OpenRouter"),
    (ProviderKind::Ollama, "ollama", "Ollama (local)"),
    (ProviderKind::OpenAiCompatible, "open_ai_compatible", "OpenAI-compatible"),
];

pub fn provider_id(kind: ProviderKind) -> &'static str {
    PROVIDERS.iter().find(|(k, ..)| *k == kind).map_or("open_ai", |(_, id, _)| id)
}

/// One field of the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Provider(ModelRole),
    BaseUrl(ModelRole),
    ApiKey(ModelRole),
    Model(ModelRole),
    Timeout(ModelRole),
    /// Whether repairs use a model of their own.
    RepairEnabled,
    MaxSteps,
    MaxJobs,
    PlanningInterval,
    FailureThreshold,
    MaxActions,
    /// Characters of page text in each page state.
    StateText,
    /// Steps between the ThinkingAgent's periodic reviews (0: none).
    ThinkingInterval,
    /// Repairs of one answer, and for the whole run.
    RepairRetries,
    RepairBudget,
    /// Recent steps shown in full in the Navigator's history.
    HistorySteps,
    /// Dot-paths of prompt variables kept out of traces, one a line.
    TraceRedactions,
    Vision,
    Allow,
    Deny,
    /// Also stop the pages' own requests to denied hosts.
    BlockPageRequests,
    Variant(ModelRole),
    /// `model = input, output` (USD per million tokens), one model a line.
    Prices,
    /// The MCP server at an index: its name, URL and token.
    McpName(usize),
    McpUrl(usize),
    McpToken(usize),
    /// MCP clients may drive AlphaScout through the native host.
    AllowMcpClients,
}

impl Field {
    /// The field path problems name (as the worker's `Settings::problems` does).
    pub fn path(self) -> String {
        self.names().0
    }

    /// The input's `data-testid`.
    pub fn testid(self) -> String {
        self.names().1
    }

    /// The field's path and its input's testid, from one list of the fields.
    fn names(self) -> (String, String) {
        let model = |role: ModelRole, path: &str, testid: &str| {
            (format!("/models/{}/{path}", role.id()), format!("settings-{}-{testid}", role.id()))
        };
        let other = |path: &str, testid: &str| (path.to_owned(), format!("settings-{testid}"));
        let mcp = |i: usize, key: &str| {
            (format!("/mcp_servers/{i}/{key}"), format!("settings-mcp-{i}-{key}"))
        };
        match self {
            Field::Provider(role) => model(role, "provider", "provider"),
            Field::BaseUrl(role) => model(role, "base_url", "base-url"),
            Field::ApiKey(role) => model(role, "api_key", "key"),
            Field::Model(role) => model(role, "model", "model"),
            Field::Timeout(role) => model(role, "timeout_ms", "timeout"),
            Field::RepairEnabled => other("/models/repair", "repair-enabled"),
            Field::MaxSteps => other("/agent/max_steps", "max-steps"),
            Field::MaxJobs => other("/agent/max_jobs", "max-jobs"),
            Field::PlanningInterval => other("/agent/planning_interval", "planning-interval"),
            Field::FailureThreshold => {
                other("/agent/max_consecutive_failures", "failure-threshold")
            }
            Field::MaxActions => other("/agent/max_actions_per_step", "max-actions"),
            Field::StateText => other("/agent/state_text_chars", "state-text"),
            Field::ThinkingInterval => other("/agent/thinking_interval", "thinking-interval"),
            Field::RepairRetries => other("/agent/repair_retries", "repair-retries"),
            Field::RepairBudget => other("/agent/repair_budget", "repair-budget"),
            Field::HistorySteps => other("/agent/history_steps", "history-steps"),
            Field::TraceRedactions => other("/agent/trace_redactions", "trace-redactions"),
            Field::Vision => other("/agent/vision", "vision"),
            Field::Allow => other("/allow", "allow"),
            Field::Deny => other("/deny", "deny"),
            Field::BlockPageRequests => other("/agent/block_page_requests", "block-page-requests"),
            Field::Variant(role) => {
                (format!("/variants/{}", role.id()), format!("settings-{}-variant", role.id()))
            }
            Field::Prices => other("/prices", "prices"),
            Field::McpName(i) => mcp(i, "name"),
            Field::McpUrl(i) => mcp(i, "url"),
            Field::McpToken(i) => mcp(i, "token"),
            Field::AllowMcpClients => other("/allow_mcp_clients", "allow-mcp-clients"),
        }
    }
}

/// How the worker shows a stored key; sent back, it keeps the stored key.
pub const MASKED: &str = "***";

/// One role's model, as typed.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelDraft {
    pub provider: ProviderKind,
    pub base_url: String,
    /// `***` when a key is stored (the worker never sends keys); typing replaces it.
    pub api_key: String,
    pub model: String,
    pub timeout_ms: String,
    pub max_retries: u32,
}

impl Default for ModelDraft {
    fn default() -> Self {
        ModelDraft {
            provider: ProviderKind::OpenAi,
            base_url: String::new(),
            api_key: String::new(),
            model: String::new(),
            timeout_ms: "60000".into(),
            max_retries: 2,
        }
    }
}

impl ModelDraft {
    fn from_config(config: &ModelConfig) -> Self {
        ModelDraft {
            provider: config.provider,
            base_url: config.base_url.clone(),
            // Whatever the worker sent (it masks keys), shown masked in a password field.
            api_key: config.api_key.expose().to_owned(),
            model: config.model.clone(),
            timeout_ms: config.timeout_ms.to_string(),
            max_retries: config.max_retries,
        }
    }

    /// What "Test connection" sends for this role: the model as typed, and the key when one
    /// was typed anew (`None` uses the stored key). `Err` says what to fix first.
    pub fn connection_test(
        &self,
        role: ModelRole,
    ) -> Result<(ModelConfig, Option<String>), String> {
        let mut problems = Vec::new();
        let model = self.build(role, &mut problems);
        problems.extend(model.problems(role));
        if let Some(Problem { message: problem, .. }) = problems.into_iter().next() {
            return Err(format!("Fix the form first: {problem}"));
        }
        let key = self.api_key.trim();
        let key = (!key.is_empty() && key != MASKED).then(|| key.to_owned());
        Ok((ModelConfig { api_key: Secret::default(), ..model }, key))
    }

    fn build(&self, role: ModelRole, problems: &mut Vec<Problem>) -> ModelConfig {
        ModelConfig {
            provider: self.provider,
            base_url: self.base_url.trim().to_owned(),
            api_key: Secret::new(self.api_key.trim()),
            model: self.model.trim().to_owned(),
            timeout_ms: number(&self.timeout_ms, Field::Timeout(role), 60_000, problems),
            max_retries: self.max_retries,
        }
    }
}

fn number(text: &str, field: Field, fallback: u32, problems: &mut Vec<Problem>) -> u32 {
    match text.trim().parse() {
        Ok(n) => n,
        Err(_) => {
            problems.push(Problem::new(field.path(), "Enter a whole number."));
            fallback
        }
    }
}

/// Typing into a masked secret replaces it; deleting from it clears it.
fn typed_secret(secret: &mut String, value: String) {
    *secret = if secret == MASKED {
        if value.len() < MASKED.len() { String::new() } else { value.replacen(MASKED, "", 1) }
    } else {
        value
    };
}

/// One MCP server, as typed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpDraft {
    pub name: String,
    pub url: String,
    /// `***` when a token is stored; typing replaces it.
    pub token: String,
}

impl McpDraft {
    /// What "Test" sends for this row: the server as typed, and the token when one was typed
    /// anew (`None` uses the stored one). `Err` says what to fix first.
    pub fn connection_test(&self, index: usize) -> Result<(McpServer, Option<String>), String> {
        let server = McpServer {
            name: self.name.trim().to_owned(),
            url: self.url.trim().to_owned(),
            token: Secret::default(),
        };
        if let Some(problem) = server.problems(index).into_iter().next() {
            return Err(format!("Fix the form first: {}", problem.message));
        }
        let token = self.token.trim();
        Ok((server, (!token.is_empty() && token != MASKED).then(|| token.to_owned())))
    }
}

/// The lines of a pattern list that hold a pattern, with their 1-based line numbers.
pub fn pattern_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| (i + 1, line.trim()))
        .collect()
}

/// Where a whole-number option is in `AgentOptions`.
type AgentNumber = fn(&mut AgentOptions) -> &mut u32;

/// The agent's whole-number options: each one's field and where it is in `AgentOptions`.
const AGENT_NUMBERS: [(Field, AgentNumber); 10] = [
    (Field::MaxSteps, |a| &mut a.max_steps),
    (Field::MaxJobs, |a| &mut a.max_jobs),
    (Field::PlanningInterval, |a| &mut a.planning_interval),
    (Field::FailureThreshold, |a| &mut a.max_consecutive_failures),
    (Field::MaxActions, |a| &mut a.max_actions_per_step),
    (Field::StateText, |a| &mut a.state_text_chars),
    (Field::ThinkingInterval, |a| &mut a.thinking_interval),
    (Field::RepairRetries, |a| &mut a.repair_retries),
    (Field::RepairBudget, |a| &mut a.repair_budget),
    (Field::HistorySteps, |a| &mut a.history_steps),
];

/// The agent's whole-number options of `agent`, as the form shows them.
fn agent_numbers(agent: &AgentOptions) -> [String; AGENT_NUMBERS.len()] {
    let mut agent = agent.clone();
    AGENT_NUMBERS.map(|(_, at)| at(&mut agent).to_string())
}

/// The whole form, as typed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SettingsDraft {
    pub models: [ModelDraft; 4],
    pub repair_enabled: bool,
    /// The agent's whole-number options as typed, in `AGENT_NUMBERS`' order.
    numbers: [String; AGENT_NUMBERS.len()],
    /// One dot-path a line.
    pub trace_redactions: String,
    pub vision: bool,
    /// One pattern a line.
    pub allow: String,
    pub deny: String,
    pub block_page_requests: bool,
    /// Planner, Navigator, Thinking; empty means A.
    pub variants: [String; 3],
    /// `model = input, output` a line.
    pub prices: String,
    pub mcp_servers: Vec<McpDraft>,
    pub allow_mcp_clients: bool,
    /// What was loaded, so fields the form does not show (prices, other agent options)
    /// are saved as they were.
    base: Option<Settings>,
}

impl SettingsDraft {
    pub fn new(settings: Option<&Settings>) -> Self {
        let defaults = AgentOptions::default();
        let Some(settings) = settings else {
            return SettingsDraft {
                numbers: agent_numbers(&defaults),
                trace_redactions: defaults.trace_redactions.join("\n"),
                vision: defaults.vision,
                block_page_requests: defaults.block_page_requests,
                ..SettingsDraft::default()
            };
        };
        let m = &settings.models;
        let agent = &settings.agent;
        let variant =
            |role: ModelRole| settings.variants.get(role.id()).cloned().unwrap_or_default();
        SettingsDraft {
            models: [
                ModelDraft::from_config(&m.planner),
                ModelDraft::from_config(&m.navigator),
                ModelDraft::from_config(&m.thinking),
                m.repair.as_ref().map(ModelDraft::from_config).unwrap_or_default(),
            ],
            repair_enabled: m.repair.is_some(),
            numbers: agent_numbers(agent),
            trace_redactions: agent.trace_redactions.join("\n"),
            vision: agent.vision,
            block_page_requests: agent.block_page_requests,
            allow: settings.allow.join("\n"),
            deny: settings.deny.join("\n"),
            variants: [
                variant(ModelRole::Planner),
                variant(ModelRole::Navigator),
                variant(ModelRole::Thinking),
            ],
            prices: settings
                .prices
                .iter()
                .map(|(model, (input, output))| format!("{model} = {input}, {output}"))
                .collect::<Vec<_>>()
                .join("\n"),
            mcp_servers: settings
                .mcp_servers
                .iter()
                .map(|s| McpDraft {
                    name: s.name.clone(),
                    url: s.url.clone(),
                    token: s.token.expose().to_owned(),
                })
                .collect(),
            allow_mcp_clients: settings.allow_mcp_clients,
            base: Some(settings.clone()),
        }
    }

    /// A whole-number agent option as typed; empty for any other field.
    pub fn number(&self, field: Field) -> &str {
        AGENT_NUMBERS.iter().position(|(f, _)| *f == field).map_or("", |i| self.numbers[i].as_str())
    }

    pub fn model(&self, role: ModelRole) -> &ModelDraft {
        &self.models[role as usize]
    }

    pub fn variant(&self, role: ModelRole) -> &str {
        self.variants.get(role as usize).map_or("", String::as_str)
    }

    /// Applies one edit; `value` is the input's value (`true`/`false` for checkboxes, the
    /// provider id for the provider select).
    pub fn set(&mut self, field: Field, value: String) {
        let flag = value == "true";
        match field {
            Field::Provider(role) => {
                if let Some((kind, ..)) = PROVIDERS.iter().find(|(_, id, _)| *id == value) {
                    self.models[role as usize].provider = *kind;
                }
            }
            Field::BaseUrl(role) => self.models[role as usize].base_url = value,
            Field::ApiKey(role) => typed_secret(&mut self.models[role as usize].api_key, value),
            Field::Model(role) => self.models[role as usize].model = value,
            Field::Timeout(role) => self.models[role as usize].timeout_ms = value,
            Field::RepairEnabled => self.repair_enabled = flag,
            Field::MaxSteps
            | Field::MaxJobs
            | Field::PlanningInterval
            | Field::FailureThreshold
            | Field::MaxActions
            | Field::StateText
            | Field::ThinkingInterval
            | Field::RepairRetries
            | Field::RepairBudget
            | Field::HistorySteps => {
                if let Some(i) = AGENT_NUMBERS.iter().position(|(f, _)| *f == field) {
                    self.numbers[i] = value;
                }
            }
            Field::TraceRedactions => self.trace_redactions = value,
            Field::Vision => self.vision = flag,
            Field::BlockPageRequests => self.block_page_requests = flag,
            Field::Allow => self.allow = value,
            Field::Deny => self.deny = value,
            Field::Variant(role) => {
                if let Some(slot) = self.variants.get_mut(role as usize) {
                    *slot = value;
                }
            }
            Field::Prices => self.prices = value,
            Field::AllowMcpClients => self.allow_mcp_clients = flag,
            Field::McpName(i) | Field::McpUrl(i) | Field::McpToken(i) => {
                let Some(server) = self.mcp_servers.get_mut(i) else { return };
                match field {
                    Field::McpName(_) => server.name = value,
                    Field::McpUrl(_) => server.url = value,
                    _ => typed_secret(&mut server.token, value),
                }
            }
        }
    }

    /// The settings this draft stands for, and what is wrong with them (empty: savable).
    pub fn build(&self) -> (Settings, Vec<Problem>) {
        let mut problems = Vec::new();
        let base = self.base.clone();
        let mut agent = base.as_ref().map(|b| b.agent.clone()).unwrap_or_default();
        for ((field, at), text) in AGENT_NUMBERS.iter().zip(&self.numbers) {
            let slot = at(&mut agent);
            *slot = number(text, *field, *slot, &mut problems);
        }
        agent.trace_redactions =
            pattern_lines(&self.trace_redactions).into_iter().map(|(_, p)| p.to_owned()).collect();
        agent.vision = self.vision;
        agent.block_page_requests = self.block_page_requests;
        let [planner, navigator, thinking, repair] = &self.models;
        let models = RoleModels {
            planner: planner.build(ModelRole::Planner, &mut problems),
            navigator: navigator.build(ModelRole::Navigator, &mut problems),
            thinking: thinking.build(ModelRole::Thinking, &mut problems),
            repair: self.repair_enabled.then(|| repair.build(ModelRole::Repair, &mut problems)),
        };
        let mut variants = base.as_ref().map(|b| b.variants.clone()).unwrap_or_default();
        for role in ModelRole::AGENTS {
            let variant = self.variant(role).trim();
            if variant.is_empty() {
                variants.remove(role.id());
            } else {
                if variant.contains(char::is_whitespace) {
                    problems.push(Problem::new(
                        Field::Variant(role).path(),
                        "A variant is one word, like A or B.",
                    ));
                }
                variants.insert(role.id().to_owned(), variant.to_owned());
            }
        }
        let list =
            |text: &str| pattern_lines(text).into_iter().map(|(_, p)| p.to_owned()).collect();
        let settings = Settings {
            models,
            agent,
            allow: list(&self.allow),
            deny: list(&self.deny),
            variants,
            prompt_overrides: base.as_ref().map(|b| b.prompt_overrides.clone()).unwrap_or_default(),
            prices: prices(&self.prices, &mut problems),
            mcp_servers: self
                .mcp_servers
                .iter()
                .map(|s| McpServer {
                    name: s.name.trim().to_owned(),
                    url: s.url.trim().to_owned(),
                    token: Secret::new(s.token.trim()),
                })
                .collect(),
            allow_mcp_clients: self.allow_mcp_clients,
        };
        // A field that is not a number gets one complaint, not two.
        let unreadable = |path: &str| problems.iter().any(|p| p.path == path);
        let mut checked: Vec<Problem> =
            settings.problems().into_iter().filter(|p| !unreadable(&p.path)).collect();
        problems.append(&mut checked);
        (settings, problems)
    }
}

/// Where loading the settings stands.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Load {
    #[default]
    NotLoaded,
    Loading {
        id: u32,
    },
    /// `stored`: false when nothing was saved yet (the form shows defaults).
    Ready {
        stored: bool,
    },
    Failed {
        message: String,
    },
}

/// The outcome of the last save.
#[derive(Debug, Clone, PartialEq)]
pub enum Saved {
    Ok,
    Refused,
    Failed(String),
}

/// A role's "Test connection".
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ConnectionTest {
    #[default]
    Idle,
    Testing {
        id: u32,
    },
    /// The worker's answer (or why the test could not be made).
    Done {
        ok: bool,
        message: String,
    },
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SettingsForm {
    pub load: Load,
    pub draft: SettingsDraft,
    /// Fields edited since loading; their problems show as they are typed. A list: a set
    /// type would be one more copy of the B-tree's code in the bundle.
    touched: Vec<String>,
    /// After a save was tried, every problem shows.
    show_all: bool,
    /// What the draft's own check finds now.
    local: Vec<Problem>,
    /// What the worker refused in the last save, until the field is edited.
    server: Vec<Problem>,
    pub saving: Option<u32>,
    pub saved: Option<Saved>,
    /// By role, in [`ModelRole::ALL`]'s order.
    pub connection: [ConnectionTest; 4],
    /// Each MCP server row's "Test", by row.
    pub mcp_tests: Vec<ConnectionTest>,
    /// Prompt id → the variants it has, as the worker last said (overrides included).
    pub variants: lean::StrMap<Vec<String>>,
}

/// The form field a problem's path belongs to: `allow.2` → `allow`.
/// The price table as typed: `model = input, output` a line, in USD per million tokens.
/// A line that does not read is a problem at `/prices/<index>`.
fn prices(text: &str, problems: &mut Vec<Problem>) -> lean::StrMap<(f64, f64)> {
    let mut table = lean::StrMap::new();
    for (index, (_, line)) in pattern_lines(text).into_iter().enumerate() {
        let parsed = line.split_once('=').and_then(|(model, rest)| {
            let (input, output) = rest.split_once(',')?;
            let number = |n: &str| n.trim().trim_start_matches('$').parse::<f64>().ok();
            let (input, output) = (number(input)?, number(output)?);
            let model = model.trim();
            (!model.is_empty() && input >= 0.0 && output >= 0.0)
                .then(|| (model.to_owned(), (input, output)))
        });
        match parsed {
            Some((model, price)) => {
                table.insert(model, price);
            }
            None => problems.push(Problem::new(
                format!("/prices/{index}"),
                "Write model = input, output in USD per million tokens, e.g. gpt-4o = 2.5, 10.",
            )),
        }
    }
    table
}

/// The field a problem belongs to: a list's line (`/deny/1`) belongs to the list.
fn owner(path: &str) -> &str {
    ["/allow", "/deny", "/prices"]
        .into_iter()
        .find(|list| path.strip_prefix(list).is_some_and(|rest| rest.starts_with('/')))
        .unwrap_or(path)
}

impl SettingsForm {
    pub fn needs_loading(&self) -> bool {
        matches!(self.load, Load::NotLoaded | Load::Failed { .. })
    }

    pub fn loading(&mut self, id: u32) {
        self.load = Load::Loading { id };
    }

    pub fn awaits_load(&self, answer: u32) -> bool {
        matches!(self.load, Load::Loading { id } if id == answer)
    }

    pub fn loaded(&mut self, settings: Option<&protocol::settings::Settings>) {
        *self = SettingsForm {
            load: Load::Ready { stored: settings.is_some() },
            draft: SettingsDraft::new(settings),
            connection: std::mem::take(&mut self.connection),
            variants: std::mem::take(&mut self.variants),
            ..SettingsForm::default()
        };
        self.local = self.draft.build().1;
    }

    /// The variants a role's prompt offers, A first; the one chosen stays among them even
    /// when no prompt has it (then its problem says so), so the choice shows what is stored.
    pub fn variant_choices(&self, role: ModelRole) -> Vec<String> {
        let mut choices = self.variants.get(role.id()).cloned().unwrap_or_default();
        if choices.is_empty() {
            choices.push("A".into());
        }
        let chosen = self.draft.variant(role).trim();
        if !chosen.is_empty() && !choices.iter().any(|c| c == chosen) {
            choices.push(chosen.to_owned());
        }
        choices
    }

    pub fn edit(&mut self, field: Field, value: String) {
        self.draft.set(field, value);
        if let Field::Provider(role)
        | Field::BaseUrl(role)
        | Field::ApiKey(role)
        | Field::Model(role)
        | Field::Timeout(role) = field
        {
            // The result no longer describes the form.
            let test = &mut self.connection[role as usize];
            if matches!(test, ConnectionTest::Done { .. }) {
                *test = ConnectionTest::Idle;
            }
        }
        if let Field::McpName(i) | Field::McpUrl(i) | Field::McpToken(i) = field
            && let Some(test) = self.mcp_tests.get_mut(i)
            && matches!(test, ConnectionTest::Done { .. })
        {
            *test = ConnectionTest::Idle;
        }
        let path = field.path();
        self.server.retain(|p| owner(&p.path) != path);
        if !self.touched.contains(&path) {
            self.touched.push(path);
        }
        self.local = self.draft.build().1;
        self.saved = None;
    }

    /// "Add server": an empty row, its problems shown once typed in or saved.
    pub fn add_mcp_server(&mut self) {
        self.draft.mcp_servers.push(McpDraft::default());
        self.local = self.draft.build().1;
        self.saved = None;
    }

    /// "Remove": the row goes; the rows after it move up, so what was said about any row
    /// (touched fields, the worker's refusals) is forgotten rather than shown on another.
    pub fn remove_mcp_server(&mut self, index: usize) {
        if index >= self.draft.mcp_servers.len() {
            return;
        }
        self.draft.mcp_servers.remove(index);
        if index < self.mcp_tests.len() {
            self.mcp_tests.remove(index);
        }
        self.server.retain(|p| !p.path.starts_with("/mcp_servers/"));
        self.touched.retain(|path| !path.starts_with("/mcp_servers/"));
        self.local = self.draft.build().1;
        self.saved = None;
    }

    /// Checks the draft before saving: the settings to send, or `None` (problems shown).
    pub fn submit(&mut self) -> Option<protocol::settings::Settings> {
        self.show_all = true;
        self.saved = None;
        let (settings, problems) = self.draft.build();
        self.local = problems;
        if self.local.is_empty() && self.saving.is_none() { Some(settings) } else { None }
    }

    pub fn saved(
        &mut self,
        settings: Option<&protocol::settings::Settings>,
        problems: Vec<Problem>,
    ) {
        self.saving = None;
        if problems.is_empty() {
            let mut fresh = SettingsForm {
                connection: std::mem::take(&mut self.connection),
                variants: std::mem::take(&mut self.variants),
                ..Default::default()
            };
            fresh.loaded(settings);
            fresh.saved = Some(Saved::Ok);
            *self = fresh;
        } else {
            self.server = problems;
            self.show_all = true;
            self.saved = Some(Saved::Refused);
        }
    }

    pub fn save_failed(&mut self, message: String) {
        self.saving = None;
        self.saved = Some(Saved::Failed(message));
    }

    /// The "Test" of MCP server row `index`.
    pub fn mcp_test_of(&self, index: usize) -> ConnectionTest {
        self.mcp_tests.get(index).cloned().unwrap_or_default()
    }

    /// The test of MCP server row `index` was sent as request `id`, or could not be.
    pub fn testing_mcp(&mut self, index: usize, sent: Result<u32, String>) {
        if self.mcp_tests.len() <= index {
            self.mcp_tests.resize(index + 1, ConnectionTest::Idle);
        }
        self.mcp_tests[index] = match sent {
            Ok(id) => ConnectionTest::Testing { id },
            Err(message) => ConnectionTest::Done { ok: false, message },
        };
    }

    pub fn connection_of(&self, role: ModelRole) -> &ConnectionTest {
        &self.connection[role as usize]
    }

    /// The test of `role` was sent as request `id`, or could not be (`Err`).
    pub fn testing(&mut self, role: ModelRole, sent: Result<u32, String>) {
        self.connection[role as usize] = match sent {
            Ok(id) => ConnectionTest::Testing { id },
            Err(message) => ConnectionTest::Done { ok: false, message },
        };
    }

    /// Whether request `id` was a connection test; if so its outcome is shown.
    pub fn tested(&mut self, id: u32, ok: bool, message: String) -> bool {
        let Some(test) = self
            .connection
            .iter_mut()
            .chain(self.mcp_tests.iter_mut())
            .find(|t| matches!(t, ConnectionTest::Testing { id: i } if *i == id))
        else {
            return false;
        };
        *test = ConnectionTest::Done { ok, message };
        true
    }

    /// The port closed: tests under way will not be answered.
    pub fn tests_interrupted(&mut self, message: &str) {
        for test in self.connection.iter_mut().chain(self.mcp_tests.iter_mut()) {
            if matches!(test, ConnectionTest::Testing { .. }) {
                *test = ConnectionTest::Done { ok: false, message: message.to_owned() };
            }
        }
    }

    /// The problems to show now, as (field path, message), without repeats.
    pub fn problems(&self) -> Vec<Problem> {
        let mut shown: Vec<Problem> = self
            .local
            .iter()
            .filter(|p| self.show_all || self.touched.iter().any(|t| t == owner(&p.path)))
            .cloned()
            .collect();
        for problem in &self.server {
            if !shown.contains(problem) {
                shown.push(problem.clone());
            }
        }
        shown
    }

    /// The problems of one field (for a list: of its lines, as `allow.3`).
    pub fn problems_of(&self, field: Field) -> Vec<Problem> {
        let path = field.path();
        self.problems().into_iter().filter(|p| owner(&p.path) == path).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn the_variant_is_a_choice_of_those_the_prompt_has() {
        let mut form = SettingsForm {
            variants: lean::StrMap::from([("navigator".to_owned(), vec!["A".into(), "B".into()])]),
            ..SettingsForm::default()
        };
        form.loaded(None);
        assert_eq!(form.variant_choices(ModelRole::Navigator), ["A", "B"], "kept across a load");
        assert_eq!(form.variant_choices(ModelRole::Planner), ["A"], "not told: A only");
        // A stored variant no prompt has stays visible, with its problem.
        form.edit(Field::Variant(ModelRole::Navigator), "C".into());
        assert_eq!(form.variant_choices(ModelRole::Navigator), ["A", "B", "C"]);
    }

    #[test]
    fn the_seeds_tunables_are_edited_and_checked() {
        let mut draft = SettingsDraft::new(Some(&stored()));
        assert_eq!(draft.number(Field::HistorySteps), "7");
        draft.set(Field::ThinkingInterval, "5".into());
        draft.set(Field::RepairRetries, "1".into());
        draft.set(Field::RepairBudget, "12".into());
        draft.set(Field::HistorySteps, "3".into());
        draft.set(Field::TraceRedactions, "page_state\n\nplanner.reasoning".into());
        let (settings, problems) = draft.build();
        assert!(problems.is_empty(), "{problems:?}");
        let agent = &settings.agent;
        assert_eq!(
            (
                agent.thinking_interval,
                agent.repair_retries,
                agent.repair_budget,
                agent.history_steps
            ),
            (5, 1, 12, 3)
        );
        assert_eq!(agent.trace_redactions, ["page_state", "planner.reasoning"]);
        draft.set(Field::TraceRedactions, "page state".into());
        draft.set(Field::RepairRetries, "9".into());
        let (settings, _) = draft.build();
        let problems: Vec<String> = settings.problems().into_iter().map(|p| p.path).collect();
        assert!(problems.contains(&"/agent/trace_redactions".to_owned()), "{problems:?}");
        assert!(problems.contains(&"/agent/repair_retries".to_owned()), "{problems:?}");
    }

    #[test]
    fn prices_are_edited_as_lines_and_bad_lines_are_named() {
        let mut draft = SettingsDraft::new(Some(&stored()));
        assert_eq!(draft.prices, "claude-test = 1, 2");
        draft.set(Field::Prices, "claude-test = 3, 15\n\ngpt-x: 1 2".into());
        let (settings, problems) = draft.build();
        assert_eq!(settings.prices.get("claude-test"), Some(&(3.0, 15.0)));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "/prices/1");
    }

    #[test]
    fn mcp_clients_are_off_until_switched_on_and_the_switch_is_saved() {
        let mut draft = SettingsDraft::new(Some(&stored()));
        assert!(!draft.allow_mcp_clients);
        assert!(!SettingsDraft::new(None).allow_mcp_clients, "off by default");
        draft.set(Field::AllowMcpClients, "true".into());
        let (settings, problems) = draft.build();
        assert!(settings.allow_mcp_clients && problems.is_empty());
        assert_eq!(Field::AllowMcpClients.testid(), "settings-allow-mcp-clients");
        assert!(SettingsDraft::new(Some(&settings)).allow_mcp_clients);
    }

    #[test]
    fn mcp_servers_are_added_edited_and_removed_with_their_problems_at_their_fields() {
        let mut form = form(Some(&stored()));
        assert_eq!(
            form.draft.mcp_servers,
            [McpDraft {
                name: "shop".into(),
                url: "http://127.0.0.1:8000/mcp".into(),
                token: MASKED.into()
            }]
        );
        form.add_mcp_server();
        // A new row says nothing until it is typed into or a save is tried.
        assert!(form.problems().is_empty());
        form.edit(Field::McpName(1), "shop".into());
        form.edit(Field::McpUrl(1), "http://tools.lan:9000/mcp".into());
        let paths = |form: &SettingsForm| -> Vec<String> {
            form.problems().into_iter().map(|p| p.path).collect()
        };
        assert_eq!(paths(&form), ["/mcp_servers/1/url", "/mcp_servers/1/name"]);
        assert!(form.problems_of(Field::McpUrl(1))[0].message.contains("unencrypted"));
        form.edit(Field::McpName(1), "crm".into());
        form.edit(Field::McpUrl(1), "https://crm.example/mcp".into());
        form.edit(Field::McpToken(1), "tok-crm".into());
        assert!(form.problems().is_empty(), "{:?}", form.problems());
        // Typing into the stored token replaces it.
        form.edit(Field::McpToken(0), "***n".into());
        let settings = form.submit().expect("savable");
        let servers: Vec<(&str, &str, &str)> = settings
            .mcp_servers
            .iter()
            .map(|s| (s.name.as_str(), s.url.as_str(), s.token.expose()))
            .collect();
        assert_eq!(
            servers,
            [
                ("shop", "http://127.0.0.1:8000/mcp", "n"),
                ("crm", "https://crm.example/mcp", "tok-crm")
            ]
        );
        // Only tokens typed anew travel, beside the settings that carry ***.
        let protocol::PanelRequest::SaveSettings { keys, settings, .. } =
            protocol::PanelRequest::save_settings(1, settings)
        else {
            panic!()
        };
        assert_eq!(keys.get("mcp:crm").map(String::as_str), Some("tok-crm"));
        assert!(!serde_json::to_string(&settings).unwrap().contains("tok-crm"));
        form.remove_mcp_server(0);
        assert_eq!(form.draft.mcp_servers.len(), 1);
        assert_eq!(form.draft.mcp_servers[0].name, "crm");
        assert!(form.problems().is_empty());
    }

    #[test]
    fn an_mcp_servers_test_sends_only_a_typed_token_and_is_reset_by_an_edit() {
        let mut form = form(Some(&stored()));
        let draft = &form.draft.mcp_servers[0];
        let (server, token) = draft.connection_test(0).unwrap();
        assert_eq!((server.url.as_str(), token), ("http://127.0.0.1:8000/mcp", None));
        assert_eq!(server.token, Secret::default());
        form.edit(Field::McpToken(0), "***tok".into());
        let (_, token) = form.draft.mcp_servers[0].connection_test(0).unwrap();
        assert_eq!(token.as_deref(), Some("tok"));
        form.testing_mcp(0, Ok(9));
        assert!(form.tested(9, true, "Connected in 3 ms; 1 tool: lookup.".into()));
        assert!(matches!(form.mcp_test_of(0), ConnectionTest::Done { ok: true, .. }));
        form.edit(Field::McpUrl(0), "http://127.0.0.1:8001/mcp".into());
        assert_eq!(form.mcp_test_of(0), ConnectionTest::Idle);
        form.edit(Field::McpUrl(0), "http://tools.lan/mcp".into());
        assert!(form.draft.mcp_servers[0].connection_test(0).unwrap_err().contains("unencrypted"));
    }

    #[test]
    fn the_workers_refusal_of_a_row_is_forgotten_when_rows_move() {
        let mut form = form(Some(&stored()));
        form.add_mcp_server();
        form.saved(
            None,
            vec![Problem::new(
                "/mcp_servers/0/token",
                "The server's origin changed: enter its token again.",
            )],
        );
        assert_eq!(form.problems_of(Field::McpToken(0)).len(), 1);
        form.remove_mcp_server(0);
        assert!(form.problems_of(Field::McpToken(0)).is_empty());
    }

    fn stored() -> Settings {
        let model = ModelConfig {
            provider: ProviderKind::Anthropic,
            base_url: String::new(),
            api_key: Secret::new("***"),
            model: "claude-test".into(),
            timeout_ms: 30_000,
            max_retries: 3,
        };
        let mut settings = Settings {
            models: RoleModels::all(model),
            agent: AgentOptions { history_steps: 7, ..AgentOptions::default() },
            allow: vec!["shop.test".into()],
            deny: vec![],
            variants: BTreeMap::from([
                ("navigator".into(), "B".into()),
                ("extra".into(), "C".into()),
            ]),
            prompt_overrides: BTreeMap::new(),
            prices: lean::StrMap::from([("claude-test".to_owned(), (1.0, 2.0))]),
            mcp_servers: vec![McpServer {
                name: "shop".into(),
                url: "http://127.0.0.1:8000/mcp".into(),
                token: Secret::new("***"),
            }],
            allow_mcp_clients: false,
        };
        settings.models.navigator.model = "nav-model".into();
        settings
    }

    fn form(settings: Option<&Settings>) -> SettingsForm {
        let mut form = SettingsForm::default();
        form.loading(1);
        form.loaded(settings);
        form
    }

    fn fields(problems: &[Problem]) -> Vec<&str> {
        problems.iter().map(|p| p.path.as_str()).collect()
    }

    #[test]
    fn a_field_names_its_path_as_the_worker_does_and_its_own_testid() {
        let navigator = ModelRole::Navigator;
        assert_eq!(Field::BaseUrl(navigator).path(), "/models/navigator/base_url");
        assert_eq!(Field::BaseUrl(navigator).testid(), "settings-navigator-base-url");
        assert_eq!(Field::ApiKey(navigator).path(), "/models/navigator/api_key");
        assert_eq!(Field::ApiKey(navigator).testid(), "settings-navigator-key");
        assert_eq!(Field::Timeout(navigator).path(), "/models/navigator/timeout_ms");
        assert_eq!(Field::Timeout(navigator).testid(), "settings-navigator-timeout");
        assert_eq!(Field::RepairEnabled.path(), "/models/repair");
        assert_eq!(Field::FailureThreshold.path(), "/agent/max_consecutive_failures");
        assert_eq!(Field::FailureThreshold.testid(), "settings-failure-threshold");
        assert_eq!(Field::Allow.path(), "/allow");
        assert_eq!(Field::Allow.testid(), "settings-allow");
        assert_eq!(Field::Variant(navigator).path(), "/variants/navigator");
        assert_eq!(Field::Variant(navigator).testid(), "settings-navigator-variant");
    }

    #[test]
    fn loading_and_saving_unchanged_settings_gives_them_back_with_what_the_form_hides() {
        let stored = stored();
        let mut form = form(Some(&stored));
        assert_eq!(form.draft.model(ModelRole::Navigator).model, "nav-model");
        assert_eq!(form.draft.variant(ModelRole::Navigator), "B");
        assert!(!form.draft.repair_enabled);
        assert_eq!(form.submit(), Some(stored), "prices, other options and variants survive");
    }

    #[test]
    fn nothing_stored_shows_defaults_that_ask_for_a_model() {
        let mut form = form(None);
        assert_eq!(form.load, Load::Ready { stored: false });
        assert_eq!(form.draft.number(Field::MaxSteps), "40");
        assert!(form.problems().is_empty(), "no complaints before anything is typed");
        assert_eq!(form.submit(), None);
        assert!(fields(&form.problems()).contains(&"/models/navigator/model"));
    }

    #[test]
    fn problems_show_next_to_the_field_being_typed() {
        let mut form = form(Some(&stored()));
        form.edit(Field::MaxSteps, "0".into());
        form.edit(Field::BaseUrl(ModelRole::Navigator), "ftp://x".into());
        form.edit(Field::Timeout(ModelRole::Planner), "soon".into());
        form.edit(Field::Deny, "evil.test\n\ntwo words".into());
        assert_eq!(
            fields(&form.problems()),
            [
                "/models/planner/timeout_ms",
                "/models/navigator/base_url",
                "/agent/max_steps",
                "/deny/1"
            ]
        );
        assert_eq!(
            form.problems_of(Field::Timeout(ModelRole::Planner))[0].message,
            "Enter a whole number."
        );
        assert_eq!(form.problems_of(Field::Deny).len(), 1);
        assert_eq!(pattern_lines(&form.draft.deny)[1], (3, "two words"), "shown as line 3");
        assert_eq!(form.submit(), None, "nothing is sent while something is wrong");
    }

    #[test]
    fn how_many_jobs_run_at_once_is_a_setting_checked_as_typed() {
        let mut form = form(Some(&stored()));
        assert_eq!(form.draft.number(Field::MaxJobs), "3");
        form.edit(Field::MaxJobs, "0".into());
        assert_eq!(fields(&form.problems()), ["/agent/max_jobs"]);
        form.edit(Field::MaxJobs, "4".into());
        assert_eq!(form.submit().map(|s| s.agent.max_jobs), Some(4));
    }

    #[test]
    fn the_workers_refusal_shows_until_the_field_is_edited() {
        let mut form = form(Some(&stored()));
        let settings = form.submit().expect("valid");
        form.saving = Some(2);
        assert_eq!(settings.models.planner.api_key.expose(), "***", "the stored key is kept");
        form.saved(None, vec![Problem::new("/models/navigator/model", "Unknown model.")]);
        assert_eq!(form.saved, Some(Saved::Refused));
        assert_eq!(
            form.problems_of(Field::Model(ModelRole::Navigator))[0].message,
            "Unknown model."
        );
        form.edit(Field::Model(ModelRole::Navigator), "other".into());
        assert!(form.problems().is_empty());
    }

    #[test]
    fn a_new_key_repair_model_and_variants_are_built() {
        let mut form = form(Some(&stored()));
        form.edit(Field::ApiKey(ModelRole::Navigator), "***sk-new".into());
        form.edit(Field::ApiKey(ModelRole::Planner), "**".into());
        form.edit(Field::Provider(ModelRole::Navigator), "open_ai_compatible".into());
        form.edit(Field::BaseUrl(ModelRole::Navigator), "http://127.0.0.1:9/v1".into());
        form.edit(Field::RepairEnabled, "true".into());
        form.edit(Field::Model(ModelRole::Repair), "fixer".into());
        form.edit(Field::Variant(ModelRole::Navigator), "".into());
        form.edit(Field::Variant(ModelRole::Planner), "B".into());
        form.edit(Field::Vision, "true".into());
        form.edit(Field::BlockPageRequests, "true".into());
        let settings = form.submit().expect("valid");
        assert_eq!(settings.models.navigator.api_key.expose(), "sk-new", "typed over the mask");
        assert_eq!(settings.models.planner.api_key.expose(), "", "deleted");
        assert_eq!(settings.models.navigator.provider, ProviderKind::OpenAiCompatible);
        assert_eq!(settings.models.repair.as_ref().map(|m| m.model.as_str()), Some("fixer"));
        assert_eq!(settings.variants.get("navigator"), None, "empty means A");
        assert_eq!(settings.variants.get("planner").map(String::as_str), Some("B"));
        assert!(settings.agent.vision);
        assert!(settings.agent.block_page_requests);
        form.edit(Field::Variant(ModelRole::Thinking), "B C".into());
        assert_eq!(fields(&form.problems()), ["/variants/thinking"]);
    }

    #[test]
    fn a_connection_test_sends_the_typed_model_and_only_a_new_key() {
        let mut form = form(Some(&stored()));
        let (model, key) =
            form.draft.model(ModelRole::Navigator).connection_test(ModelRole::Navigator).unwrap();
        assert_eq!((model.model.as_str(), key), ("nav-model", None), "the stored key is used");
        assert_eq!(model.api_key.expose(), "", "never the mask");
        form.edit(Field::ApiKey(ModelRole::Navigator), "***sk-new".into());
        form.edit(Field::Model(ModelRole::Navigator), "other".into());
        let (model, key) =
            form.draft.model(ModelRole::Navigator).connection_test(ModelRole::Navigator).unwrap();
        assert_eq!((model.model.as_str(), key.as_deref()), ("other", Some("sk-new")));
        form.edit(Field::Timeout(ModelRole::Planner), "soon".into());
        let refused =
            form.draft.model(ModelRole::Planner).connection_test(ModelRole::Planner).unwrap_err();
        assert_eq!(refused, "Fix the form first: Enter a whole number.");
    }

    #[test]
    fn a_test_result_shows_for_its_role_until_that_role_is_edited() {
        let mut form = form(Some(&stored()));
        form.testing(ModelRole::Navigator, Ok(7));
        form.testing(ModelRole::Planner, Err("Fix the form first.".into()));
        assert!(!form.tested(8, true, "?".into()));
        assert!(form.tested(7, true, "Connected".into()));
        assert_eq!(
            *form.connection_of(ModelRole::Navigator),
            ConnectionTest::Done { ok: true, message: "Connected".into() }
        );
        form.edit(Field::Model(ModelRole::Thinking), "x".into());
        assert!(matches!(form.connection_of(ModelRole::Navigator), ConnectionTest::Done { .. }));
        form.saving = Some(9);
        form.saved(Some(&stored()), vec![]);
        assert!(
            matches!(form.connection_of(ModelRole::Navigator), ConnectionTest::Done { .. }),
            "kept"
        );
        form.edit(Field::BaseUrl(ModelRole::Navigator), "http://x".into());
        assert_eq!(*form.connection_of(ModelRole::Navigator), ConnectionTest::Idle);
        form.testing(ModelRole::Repair, Ok(10));
        form.tests_interrupted("Lost.");
        assert_eq!(
            *form.connection_of(ModelRole::Repair),
            ConnectionTest::Done { ok: false, message: "Lost.".into() }
        );
    }

    #[test]
    fn a_saved_form_reloads_from_what_the_worker_stored() {
        let mut form = form(None);
        form.saving = Some(3);
        form.saved(Some(&stored()), vec![]);
        assert_eq!(form.saved, Some(Saved::Ok));
        assert_eq!(form.saving, None);
        assert_eq!(form.draft.model(ModelRole::Navigator).api_key, "***");
    }
}
