//! What the user configures: a model per role, agent options, the URL allow/deny list,
//! prompt variants, prices and the sync endpoint. The worker stores it; the panel edits it.

use std::collections::BTreeMap;
use std::fmt;

use run_contract::Problem;
use serde::{Deserialize, Serialize};

/// An API key. It prints and serializes as `***`, so it cannot leak into logs, events,
/// traces or exports by accident; only [`Secret::expose`] reads it, when building a request.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with this key replaced by `***`, and any word that begins like the key (a
    /// provider quoting the key it refused, shortened). For messages that reach a person.
    pub fn redact(&self, text: &str) -> String {
        let key = self.0.trim();
        if key.chars().count() < 4 {
            return text.to_owned();
        }
        let text = text.replace(key, "***");
        let Some(prefix) = key.get(..8).filter(|_| key.len() >= 12) else { return text };
        text.split_inclusive(char::is_whitespace)
            .map(|word| {
                if word.contains(prefix) {
                    let end = word.trim_end();
                    format!("***{}", &word[end.len()..])
                } else {
                    word.to_owned()
                }
            })
            .collect()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str("***")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, tagged_de::UnitDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
    OpenRouter,
    Ollama,
    Gemini,
    /// Any server speaking OpenAI chat completions at its own base URL.
    OpenAiCompatible,
}

impl ProviderKind {
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com/v1",
            ProviderKind::OpenRouter => "https://openrouter.ai/api/v1",
            ProviderKind::Ollama => "http://localhost:11434",
            ProviderKind::Gemini => "https://generativelanguage.googleapis.com/v1beta",
            ProviderKind::OpenAiCompatible => "",
        }
    }
}

/// One configured model: which provider, where, with which key.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct ModelConfig {
    pub provider: ProviderKind,
    pub base_url: String,
    pub api_key: Secret,
    pub model: String,
    pub timeout_ms: u32,
    pub max_retries: u32,
}

impl ModelConfig {
    /// The server a key for this model is sent to: the base URL's origin, or the
    /// provider's own endpoint when there is none.
    pub fn server(&self) -> String {
        if self.base_url.trim().is_empty() {
            return format!("{:?}'s endpoint", self.provider);
        }
        run_contract::url::origin(&self.base_url)
    }

    /// Inline problems of this model as `role`'s, as (field path, message): what
    /// [`Settings::problems`] says about it, and what a connection test checks first.
    pub fn problems(&self, role: ModelRole) -> Vec<Problem> {
        let role = role.id();
        let mut problems = Vec::new();
        if self.model.trim().is_empty() {
            problems.push(Problem::new(
                format!("/models/{role}/model"),
                "Enter a model name.".to_owned(),
            ));
        }
        let base = self.base_url.trim();
        if !base.is_empty() && !is_http(base) {
            problems.push(Problem::new(
                format!("/models/{role}/base_url"),
                "A base URL starts with http:// or https://.".to_owned(),
            ));
        }
        if let Some(host) = plain_http_host(base).filter(|_| !self.api_key.is_empty()) {
            problems.push(Problem::new(
                format!("/models/{role}/base_url"),
                format!(
                    "The API key would travel unencrypted to {host}. Use https://, or \
                     http:// only for a server on this computer."
                ),
            ));
        }
        if self.provider == ProviderKind::OpenAiCompatible && base.is_empty() {
            problems.push(Problem::new(
                format!("/models/{role}/base_url"),
                "An OpenAI-compatible provider needs its base URL.".to_owned(),
            ));
        }
        if self.timeout_ms < 1000 {
            problems.push(Problem::new(
                format!("/models/{role}/timeout_ms"),
                "Allow at least 1000 ms.".to_owned(),
            ));
        }
        problems
    }
}

/// A role with a model of its own: the three agents, and the optional repair model. On the
/// wire and in field paths as `planner`, `navigator`, `thinking`, `repair`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, tagged_de::UnitDeserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ModelRole {
    Planner,
    Navigator,
    Thinking,
    Repair,
}

impl ModelRole {
    /// Every role, in the order Settings shows them.
    pub const ALL: [ModelRole; 4] =
        [ModelRole::Planner, ModelRole::Navigator, ModelRole::Thinking, ModelRole::Repair];
    /// The agents, which have prompts (and so prompt variants).
    pub const AGENTS: [ModelRole; 3] =
        [ModelRole::Planner, ModelRole::Navigator, ModelRole::Thinking];

    /// The wire name, also the prompt id of an agent.
    pub fn id(self) -> &'static str {
        match self {
            ModelRole::Planner => "planner",
            ModelRole::Navigator => "navigator",
            ModelRole::Thinking => "thinking",
            ModelRole::Repair => "repair",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ModelRole::Planner => "Planner",
            ModelRole::Navigator => "Navigator",
            ModelRole::Thinking => "Thinking",
            ModelRole::Repair => "Repair",
        }
    }
}

/// The model each agent role uses; `repair` handles repairs of invalid answers when set.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct RoleModels {
    pub planner: ModelConfig,
    pub navigator: ModelConfig,
    pub thinking: ModelConfig,
    #[serde(default)]
    pub repair: Option<ModelConfig>,
}

impl RoleModels {
    /// The same model for every role.
    pub fn all(model: ModelConfig) -> RoleModels {
        RoleModels {
            planner: model.clone(),
            navigator: model.clone(),
            thinking: model,
            repair: None,
        }
    }

    /// The model of `role`; only the repair model may be missing.
    pub fn get(&self, role: ModelRole) -> Option<&ModelConfig> {
        match role {
            ModelRole::Planner => Some(&self.planner),
            ModelRole::Navigator => Some(&self.navigator),
            ModelRole::Thinking => Some(&self.thinking),
            ModelRole::Repair => self.repair.as_ref(),
        }
    }

    fn each_mut(&mut self) -> impl Iterator<Item = (ModelRole, &mut ModelConfig)> {
        [
            (ModelRole::Planner, &mut self.planner),
            (ModelRole::Navigator, &mut self.navigator),
            (ModelRole::Thinking, &mut self.thinking),
        ]
        .into_iter()
        .chain(self.repair.as_mut().map(|m| (ModelRole::Repair, m)))
    }
}

/// How the executor runs a task.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
#[serde(default)]
pub struct AgentOptions {
    /// Navigator steps per task before it stops and asks.
    pub max_steps: u32,
    /// The Planner may re-plan every this many steps: when a step went wrong or its plan is
    /// used up (a Navigator's done goes to the ThinkingAgent's exit gate instead).
    pub planning_interval: u32,
    /// Failed steps in a row before the ThinkingAgent arbitrates; twice this asks the user.
    pub max_consecutive_failures: u32,
    /// Actions the Navigator may chain in one step.
    pub max_actions_per_step: u32,
    /// The ThinkingAgent reviews progress every this many steps (0: only at the exit gate).
    pub thinking_interval: u32,
    /// Send the Navigator a screenshot with the page state.
    pub vision: bool,
    /// Repairs per call of an answer that breaks its schema (0 opts out).
    pub repair_retries: u32,
    /// Repairs per run, across all calls.
    pub repair_budget: u32,
    /// Steps the Navigator sees in full; older ones are condensed.
    pub history_steps: u32,
    /// Characters of working memory (history, findings, progress) in a prompt.
    pub memory_budget_chars: u32,
    /// Characters of page text (paragraphs, table rows, headings) in each page state;
    /// elements are always listed, and the state says what text it left out.
    pub state_text_chars: u32,
    /// Template variables replaced by `[redacted]` in stored traces (e.g. `page_state`).
    pub trace_redactions: Vec<String>,
    /// Jobs (tasks, replays, reflections, pipeline runs) that may run at once, each in its
    /// own tab.
    pub max_jobs: u32,
    /// Also stop a task's pages' own requests (scripts, images, fetches) to hosts on the
    /// deny list, not only the pages and frames the agent opens. Off by default: every
    /// request of the page then waits for the worker's check.
    pub block_page_requests: bool,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            max_steps: 40,
            planning_interval: 3,
            max_consecutive_failures: 3,
            max_actions_per_step: 5,
            thinking_interval: 10,
            vision: false,
            repair_retries: 2,
            repair_budget: 8,
            history_steps: 4,
            memory_budget_chars: 6000,
            state_text_chars: 6000,
            trace_redactions: Vec::new(),
            max_jobs: 3,
            block_page_requests: false,
        }
    }
}

/// Everything in Settings.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct Settings {
    pub models: RoleModels,
    #[serde(default)]
    pub agent: AgentOptions,
    /// URL patterns the agent may visit (empty: any). `*` matches any run of characters; a
    /// pattern without a scheme matches the host and its subdomains.
    #[serde(default)]
    pub allow: Vec<String>,
    /// URL patterns the agent must not visit; deny wins over allow.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Prompt id → variant (A when absent).
    #[serde(default)]
    pub variants: BTreeMap<String, String>,
    /// Edited prompt files by path under `prompts/` (e.g. `navigator/A.md`), replacing the
    /// bundled ones; checked like them before a task starts.
    #[serde(default)]
    pub prompt_overrides: BTreeMap<String, String>,
    /// Model → (input, output) USD per million tokens.
    #[serde(default)]
    pub prices: lean::StrMap<(f64, f64)>,
    /// MCP servers whose tools pipelines may call (streamable HTTP).
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
    /// MCP clients (desktop apps, local agents) may drive AlphaScout through the native
    /// host `alphascout-mcp`. Off unless the person switches it on.
    #[serde(default)]
    pub allow_mcp_clients: bool,
}

/// An MCP server the user configured: its tools are what a pipeline's `tool: mcp` step
/// calls and what `{{tools.list}}` lists. The client talks to `url`'s origin only.
#[derive(Debug, Clone, PartialEq, Serialize, tagged_de::FieldsDeserialize)]
pub struct McpServer {
    /// How pipelines name it (`server: shop`, `mcp:shop/*`).
    pub name: String,
    /// The streamable HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    pub url: String,
    /// Sent as `Authorization: Bearer …`, to this server only; serializes as `***` (and as
    /// nothing when there is none, so the form does not show a token that is not there).
    #[serde(default, serialize_with = "masked_unless_empty")]
    pub token: Secret,
}

fn masked_unless_empty<S: serde::Serializer>(
    token: &Secret,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(if token.is_empty() { "" } else { "***" })
}

impl McpServer {
    /// The key of this server's token among the stored keys (beside the roles' keys).
    pub fn key_name(&self) -> String {
        format!("mcp:{}", self.name)
    }

    /// Whether `name` can name a server in a pipeline: letters, digits, `_` and `-`.
    pub fn valid_name(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= 40
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    /// Problems of the server at `index`, as (field path, message). The URL firewall's
    /// scheme rules: http(s) only, and plain http only to this computer, token or not
    /// (what a tool is asked carries the pipeline's data).
    pub fn problems(&self, index: usize) -> Vec<Problem> {
        let mut problems = Vec::new();
        if !McpServer::valid_name(&self.name) {
            problems.push(Problem::new(
                format!("/mcp_servers/{index}/name"),
                "A server name is letters, digits, _ and - (at most 40), like shop.".to_owned(),
            ));
        }
        let url = self.url.trim();
        let parsed = run_contract::url::WebUrl::parse(url);
        let http = parsed.as_ref().is_some_and(|u| {
            matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
        });
        if !http {
            problems.push(Problem::new(
                format!("/mcp_servers/{index}/url"),
                "An MCP server URL starts with http:// or https://, like http://127.0.0.1:8000/mcp."
                    .to_owned(),
            ));
        } else if let Some(host) = plain_http_host(url) {
            problems.push(Problem::new(
                format!("/mcp_servers/{index}/url"),
                format!(
                    "Requests would travel unencrypted to {host}. Use https://, or http:// only \
                     for a server on this computer."
                ),
            ));
        }
        problems
    }
}

impl Settings {
    /// The keys, by role, for storage (the serialized settings carry `***`).
    pub fn keys(&self) -> BTreeMap<String, String> {
        let mut copy = self.clone();
        let mut keys: BTreeMap<String, String> = lean::map_of(
            copy.models
                .each_mut()
                .map(|(role, m)| (role.id().to_owned(), m.api_key.expose().to_owned())),
        );
        for server in &self.mcp_servers {
            keys.insert(server.key_name(), server.token.expose().to_owned());
        }
        keys
    }

    /// Puts stored keys back, and keeps `previous` keys where this copy says `***` (the
    /// panel only ever sees masked keys).
    pub fn restore_keys(&mut self, keys: &BTreeMap<String, String>) {
        for (role, model) in self.models.each_mut() {
            if model.api_key.is_empty() || model.api_key.expose() == "***" {
                model.api_key = Secret::new(keys.get(role.id()).cloned().unwrap_or_default());
            }
        }
        for server in &mut self.mcp_servers {
            if server.token.is_empty() || server.token.expose() == "***" {
                server.token =
                    Secret::new(keys.get(&server.key_name()).cloned().unwrap_or_default());
            }
        }
    }

    /// Keys left empty in this copy take `previous` ones, but only for a model on the same
    /// server: a key is never sent to a server it was not entered for. A stored key whose
    /// server changed is dropped, and the role's key field gets a problem asking for the
    /// new server's key.
    pub fn keep_keys_of(&mut self, previous: Option<&Settings>) -> Vec<Problem> {
        let mut problems = Vec::new();
        let Some(previous) = previous else { return problems };
        for (role, model) in self.models.each_mut() {
            let Some(old) = previous.models.get(role) else { continue };
            if !model.api_key.is_empty() || old.api_key.is_empty() {
                continue;
            }
            if model.server() == old.server() {
                model.api_key = old.api_key.clone();
            } else {
                problems.push(Problem::new(
                    format!("/models/{}/api_key", role.id()),
                    format!(
                        "The server changed (from {} to {}): enter the API key for it. The stored key is only sent to the server it was entered for.",
                        old.server(),
                        model.server()
                    ),
                ));
            }
        }
        // A server's token likewise stays with the server and its origin: found by name, or
        // at the same row when that row was renamed (its old name is no longer used).
        let names: Vec<String> = self.mcp_servers.iter().map(|s| s.name.clone()).collect();
        for (i, server) in self.mcp_servers.iter_mut().enumerate() {
            let renamed = previous.mcp_servers.get(i).filter(|old| !names.contains(&old.name));
            let Some(old) = previous.mcp_servers.iter().find(|s| s.name == server.name).or(renamed)
            else {
                continue;
            };
            if !server.token.is_empty() || old.token.is_empty() {
                continue;
            }
            let (now, before) =
                (run_contract::url::origin(&server.url), run_contract::url::origin(&old.url));
            if now == before {
                server.token = old.token.clone();
            } else {
                problems.push(Problem::new(
                    format!("/mcp_servers/{i}/token"),
                    format!(
                        "The server's origin changed (from {before} to {now}): enter its token again. A stored token is only sent to the origin it was entered for."
                    ),
                ));
            }
        }
        problems
    }

    /// The token of each MCP server, to mask wherever text leaves the worker.
    pub fn mcp_tokens(&self) -> Vec<String> {
        self.mcp_servers
            .iter()
            .map(|s| s.token.expose().to_owned())
            .filter(|t| !t.is_empty() && t != "***")
            .collect()
    }

    /// Inline problems, as (field path, message).
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut copy = self.clone();
        for (role, model) in copy.models.each_mut() {
            problems.extend(model.problems(role));
        }
        let agent = &self.agent;
        for (field, value, min, max) in [
            ("/agent/max_steps", agent.max_steps, 1, 500),
            ("/agent/planning_interval", agent.planning_interval, 1, 50),
            ("/agent/max_consecutive_failures", agent.max_consecutive_failures, 1, 20),
            ("/agent/max_actions_per_step", agent.max_actions_per_step, 1, 10),
            ("/agent/history_steps", agent.history_steps, 1, 20),
            ("/agent/memory_budget_chars", agent.memory_budget_chars, 500, 100_000),
            ("/agent/state_text_chars", agent.state_text_chars, 0, 100_000),
            ("/agent/thinking_interval", agent.thinking_interval, 0, 100),
            ("/agent/repair_retries", agent.repair_retries, 0, 5),
            ("/agent/repair_budget", agent.repair_budget, 0, 200),
            ("/agent/max_jobs", agent.max_jobs, 1, 10),
        ] {
            if value < min || value > max {
                problems.push(Problem::new(
                    field.to_owned(),
                    format!("Use a number from {min} to {max}."),
                ));
            }
        }
        for path in &agent.trace_redactions {
            let segments_ok = path
                .split('.')
                .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
            if !segments_ok {
                problems.push(Problem::new(
                    "/agent/trace_redactions".to_owned(),
                    format!(
                        "{path:?} is not a variable path like page_state or planner.reasoning."
                    ),
                ));
            }
        }
        for (list, patterns) in [("allow", &self.allow), ("deny", &self.deny)] {
            for (i, pattern) in patterns.iter().enumerate() {
                if pattern.trim().is_empty() || pattern.contains(char::is_whitespace) {
                    problems.push(Problem::new(
                        format!("/{list}/{i}"),
                        "A pattern is one URL or host, without spaces.".to_owned(),
                    ));
                }
            }
        }
        for (i, server) in self.mcp_servers.iter().enumerate() {
            problems.extend(server.problems(i));
            if self.mcp_servers[..i].iter().any(|s| s.name == server.name) {
                problems.push(Problem::new(
                    format!("/mcp_servers/{i}/name"),
                    format!("Another server is already named {:?}.", server.name),
                ));
            }
        }
        problems
    }
}

/// The host `url` reaches over plain `http://` when that host is another computer: what a
/// key, a token or a prompt sent there crosses the network unencrypted to. `None` for
/// https, for this computer (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`) and for what
/// is not a URL at all (other checks report that).
pub fn plain_http_host(url: &str) -> Option<String> {
    let url = run_contract::url::WebUrl::parse(url.trim())?;
    if url.scheme() != "http" {
        return None;
    }
    let loopback = match url.host()? {
        run_contract::url::Host::Domain(name) => {
            let name = name.trim_end_matches('.');
            name == "localhost" || name.ends_with(".localhost")
        }
        run_contract::url::Host::Ipv4(ip) => ip.is_loopback(),
        run_contract::url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    (!loopback).then(|| url.host_str().unwrap_or_default().to_owned())
}

fn is_http(url: &str) -> bool {
    let url = url.to_ascii_lowercase();
    url.starts_with("http://") || url.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        let model = ModelConfig {
            provider: ProviderKind::OpenAi,
            base_url: String::new(),
            api_key: Secret::new("sk-secret"),
            model: "gpt-test".into(),
            timeout_ms: 30_000,
            max_retries: 2,
        };
        Settings {
            models: RoleModels::all(model),
            agent: AgentOptions::default(),
            allow: vec![],
            deny: vec![],
            variants: BTreeMap::new(),
            prompt_overrides: BTreeMap::new(),
            prices: lean::StrMap::new(),
            mcp_servers: vec![],
            allow_mcp_clients: false,
        }
    }

    fn shop(url: &str, token: &str) -> McpServer {
        McpServer { name: "shop".into(), url: url.into(), token: Secret::new(token) }
    }

    #[test]
    fn an_mcp_token_is_masked_stored_apart_and_restored() {
        let mut original = settings();
        original.mcp_servers = vec![shop("http://127.0.0.1:8000/mcp", "tok-mcp-0123456789")];
        let json = serde_json::to_string(&original).unwrap();
        assert!(!json.contains("tok-mcp"), "{json}");
        assert!(!format!("{original:?}").contains("tok-mcp"));
        assert_eq!(original.keys()["mcp:shop"], "tok-mcp-0123456789");
        let mut loaded: Settings = serde_json::from_str(&json).unwrap();
        loaded.restore_keys(&original.keys());
        assert_eq!(loaded, original);
        assert_eq!(original.mcp_tokens(), ["tok-mcp-0123456789"]);
        // No token reads as none, not as a stored one.
        let open = shop("http://127.0.0.1:8000/mcp", "");
        assert_eq!(serde_json::to_value(&open).unwrap()["token"], "");
    }

    #[test]
    fn an_mcp_token_stays_with_its_origin() {
        let mut previous = settings();
        previous.mcp_servers = vec![shop("https://tools.example/mcp", "tok-1")];
        let mut same = previous.clone();
        same.mcp_servers[0] = shop("https://tools.example/v2/mcp", "");
        assert!(same.keep_keys_of(Some(&previous)).is_empty());
        assert_eq!(same.mcp_servers[0].token.expose(), "tok-1");
        let mut moved = previous.clone();
        moved.mcp_servers[0] = shop("https://collector.evil/mcp", "");
        let problems = moved.keep_keys_of(Some(&previous));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].path, "/mcp_servers/0/token");
        assert!(moved.mcp_servers[0].token.is_empty());
        // Renamed in place: the row keeps its token.
        let mut renamed = previous.clone();
        renamed.mcp_servers[0].name = "store".into();
        renamed.mcp_servers[0].token = Secret::default();
        assert!(renamed.keep_keys_of(Some(&previous)).is_empty());
        assert_eq!(renamed.mcp_servers[0].token.expose(), "tok-1");
    }

    #[test]
    fn mcp_server_problems_name_the_field() {
        let mut s = settings();
        s.mcp_servers = vec![
            shop("http://127.0.0.1:8000/mcp", ""),
            McpServer { name: "bad name".into(), url: "ftp://x".into(), token: Secret::default() },
            shop("http://tools.lan:8000/mcp", ""),
        ];
        let fields: Vec<String> = s.problems().into_iter().map(|p| p.path).collect();
        assert_eq!(
            fields,
            [
                "/mcp_servers/1/name",
                "/mcp_servers/1/url",
                "/mcp_servers/2/url",
                "/mcp_servers/2/name"
            ]
        );
        s.mcp_servers.truncate(1);
        assert!(s.problems().is_empty(), "{:?}", s.problems());
    }

    #[test]
    fn serialized_settings_mask_keys_and_stored_keys_come_back() {
        let original = settings();
        let json = serde_json::to_string(&original).unwrap();
        assert!(!json.contains("sk-secret"), "{json}");
        let mut loaded: Settings = serde_json::from_str(&json).unwrap();
        loaded.restore_keys(&original.keys());
        assert_eq!(loaded, original);
    }

    #[test]
    fn a_key_quoted_in_a_message_is_redacted() {
        let key = Secret::new("sk-e2e-secret-key-0123456789");
        assert_eq!(
            key.redact("Incorrect API key provided: sk-e2e-se**********6789. See docs."),
            "Incorrect API key provided: *** See docs."
        );
        assert_eq!(key.redact("bad key sk-e2e-secret-key-0123456789!"), "bad key ***!");
        assert_eq!(Secret::new("").redact("no key here"), "no key here");
    }

    #[test]
    fn a_key_goes_over_plain_http_only_to_this_computer() {
        for local in [
            "http://localhost:11434",
            "http://LOCALHOST./v1",
            "http://models.localhost:8080",
            "http://127.0.0.1:8000/v1",
            "http://127.9.9.9",
            "http://2130706433/",
            "http://[::1]:1234",
            "https://api.example/v1",
        ] {
            assert_eq!(plain_http_host(local), None, "{local}");
            let mut ok = settings();
            ok.models.planner.base_url = local.into();
            assert!(ok.problems().is_empty(), "{local}: {:?}", ok.problems());
        }
        for (remote, host) in [
            ("http://api.example/v1", "api.example"),
            ("HTTP://192.168.1.20:11434", "192.168.1.20"),
            ("http://127.0.0.1.evil.test/", "127.0.0.1.evil.test"),
            ("http://localhost.evil.test", "localhost.evil.test"),
            ("http://[2001:db8::1]/", "[2001:db8::1]"),
        ] {
            assert_eq!(plain_http_host(remote).as_deref(), Some(host), "{remote}");
            let mut keyed = settings();
            keyed.models.planner.base_url = remote.into();
            let problems = keyed.problems();
            assert!(
                problems
                    .iter()
                    .any(|Problem { path: field, message }| field == "/models/planner/base_url"
                        && message.contains("unencrypted")),
                "{remote}: {problems:?}"
            );
            // Without a key (a model server on the local network) only prompts travel: allowed.
            keyed.models.planner.api_key = Secret::new("");
            assert!(keyed.problems().is_empty(), "{remote}");
        }
    }

    #[test]
    fn a_stored_key_stays_with_its_server() {
        let mut previous = settings();
        previous.models.navigator.base_url = "https://api.example/v1".into();
        previous.models.navigator.api_key = Secret::new("sk-stored");
        // Same origin, another path: the key is kept.
        let mut moved_path = previous.clone();
        moved_path.models.navigator.base_url = "HTTPS://API.EXAMPLE/v2/".into();
        moved_path.models.navigator.api_key = Secret::new("");
        assert!(moved_path.keep_keys_of(Some(&previous)).is_empty());
        assert_eq!(moved_path.models.navigator.api_key.expose(), "sk-stored");
        // Another host: the key is dropped and asked for.
        for other in [
            "https://collector.evil/v1",
            "https://api.example@collector.evil/v1",
            "http://api.example/v1",
        ] {
            let mut moved = previous.clone();
            moved.models.navigator.base_url = other.into();
            moved.models.navigator.api_key = Secret::new("");
            let problems = moved.keep_keys_of(Some(&previous));
            assert_eq!(problems.len(), 1, "{other}: {problems:?}");
            assert_eq!(problems[0].path, "/models/navigator/api_key");
            assert!(moved.models.navigator.api_key.is_empty(), "{other}: the key was kept");
        }
        // A key typed anew for the new server is used as typed.
        let mut retyped = previous.clone();
        retyped.models.navigator.base_url = "https://collector.evil/v1".into();
        retyped.models.navigator.api_key = Secret::new("sk-new");
        assert!(retyped.keep_keys_of(Some(&previous)).is_empty());
        assert_eq!(retyped.models.navigator.api_key.expose(), "sk-new");
    }

    #[test]
    fn problems_name_the_field() {
        let mut s = settings();
        s.agent.max_steps = 0;
        s.models.navigator.base_url = "ftp://x".into();
        s.deny = vec!["two words".into()];
        let fields: Vec<String> = s.problems().into_iter().map(|p| p.path).collect();
        assert_eq!(fields, ["/models/navigator/base_url", "/agent/max_steps", "/deny/0"]);
    }
}
