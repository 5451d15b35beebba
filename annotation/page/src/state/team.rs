//! Annotation for teams (issue 29) on the page: "My queue", assignments, notifications,
//! the overlap run's agreement and merge, and the admin's views (audit log, webhooks,
//! figures, project settings). Each asks the sync server through [`TeamRequest`]s the
//! effect layer carries out, and reads the answers back through [`TeamAction::Loaded`].

use annotation_core::sync::SyncSettings;
use annotation_core::team::{
    Agreement, Assignees, AuditEntry, AuditFilter, Delivery, Figure, Merge, Notification, Project,
    QueueEntry, Webhook, assign_body, known_annotators, round_robin_body, webhook_create,
};
use serde_json::{Value, json};

use super::editor::Tool;
use super::{Effect, Studio};

/// A view of the team's work that is not a run or the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamView {
    Notifications,
    Audit,
    Webhooks,
    Figures,
    Project,
}

impl TeamView {
    pub fn label(self) -> &'static str {
        match self {
            TeamView::Notifications => "Notifications",
            TeamView::Audit => "Audit log",
            TeamView::Webhooks => "Webhooks",
            TeamView::Figures => "Annotators",
            TeamView::Project => "Project",
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            TeamView::Notifications => "notifications",
            TeamView::Audit => "audit",
            TeamView::Webhooks => "webhooks",
            TeamView::Figures => "figures",
            TeamView::Project => "project",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct TeamState {
    pub project: Option<Project>,
    /// The person's queue, as the server last said.
    pub queue: Vec<QueueEntry>,
    pub queue_loaded: bool,
    /// The list shows "My queue" rather than every run.
    pub show_queue: bool,
    /// Runs the person annotates in a version of their own (overlap above 1, not handed in).
    pub own: Vec<String>,
    pub unread: u32,
    pub view: Option<TeamView>,
    pub notifications: Vec<Notification>,
    pub audit: Vec<AuditEntry>,
    pub audit_filter: AuditFilter,
    pub webhooks: Vec<Webhook>,
    /// A hook's deliveries, when one is opened.
    pub deliveries: Option<(String, Vec<Delivery>)>,
    /// A new hook's secret, shown this once: (hook id, secret).
    pub secret: Option<(String, String)>,
    pub figures: Vec<Figure>,
    /// The open run's agreement, for a reviewer.
    pub agreement: Option<Agreement>,
    pub merge: Merge,
    /// The open run's assignees, for whoever may assign.
    pub assignees: Option<Assignees>,
    /// A request under way (its label), so buttons wait.
    pub busy: Option<String>,
    /// The open run's figures on the server (quality, everyone's time).
    pub metrics: Option<annotation_core::metrics_sync::TeamMetrics>,
    /// Agreement over time, by week, as the figures view shows it.
    pub series: Vec<annotation_core::team::Series>,
}

/// What the page asks of the server's team routes.
#[derive(Debug, Clone, PartialEq)]
pub enum TeamRequest {
    Get(Fetch, String),
    /// A write: method, path, body, the version it is based on (`If-Match`), and what to
    /// read back into the page.
    Write {
        method: &'static str,
        path: String,
        body: Value,
        if_match: Option<i64>,
        then: Then,
    },
    /// Download the audit log as JSON Lines, with the filters' query.
    ExportAudit(String),
}

/// Which part of the page a GET answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    Queue,
    Notifications,
    Audit,
    Webhooks,
    Deliveries,
    Figures,
    /// Agreement over time (`/analytics/agreement`).
    Series,
    Project,
    Agreement,
    Assignees,
}

/// What follows a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Then {
    /// Read the notifications again.
    Notifications,
    /// Show a new hook's secret, then list the hooks again.
    Secret,
    Webhooks,
    Project,
    Assignees,
    /// Round-robin: say what was assigned.
    Assigned,
    /// The merge was written: a sync round brings the run's new version.
    Resolved,
}

/// An answer read back.
#[derive(Debug, Clone, PartialEq)]
pub enum TeamData {
    Queue(Vec<QueueEntry>),
    Notifications(Vec<Notification>),
    Audit(Vec<AuditEntry>),
    Webhooks(Vec<Webhook>),
    Deliveries(String, Vec<Delivery>),
    Figures(Vec<Figure>),
    /// `/analytics/agreement` as the server sent it; who may see whom is read here.
    Series(Value),
    Project(Project),
    Agreement(Agreement),
    Assignees(Assignees),
    Secret(String, String),
    /// A write done, with what to tell the person.
    Done(String),
}

pub enum TeamAction {
    ShowQueue(bool),
    Open(Option<TeamView>),
    Loaded(TeamData),
    Failed(String),
    MarkRead(Option<String>),
    AuditFilter(AuditFilter),
    ExportAudit,
    CreateHook { url: String, events: Vec<String>, description: String },
    PauseHook { id: String, paused: bool },
    Deliveries(String),
    ForgetSecret,
    SaveProject { overlap: String, url: String, markdown: String },
    Assign(String),
    RoundRobin(String),
    Choose { index: u32, annotator: String },
    PickAll(String),
    Resolve,
}

fn encoded(id: &str) -> String {
    run_contract::url::component_encode(id)
}

impl Studio {
    fn team_request(&mut self, request: TeamRequest) {
        let settings: SyncSettings = self.sync.settings.clone();
        if !settings.enabled() {
            return self
                .notify(false, "This needs the team's sync server: set it in Sync & checks.");
        }
        self.queue(Effect::Team { settings, request });
    }

    fn get(&mut self, fetch: Fetch, path: String) {
        self.team_request(TeamRequest::Get(fetch, path));
    }

    fn write(
        &mut self,
        method: &'static str,
        path: String,
        body: Value,
        if_match: Option<i64>,
        then: Then,
    ) {
        self.team.busy = Some(path.clone());
        self.team_request(TeamRequest::Write { method, path, body, if_match, then });
    }

    /// The annotators the assign field offers (`annotation_core::team::known_annotators`).
    pub fn assign_choices(&self) -> Vec<String> {
        let assignees = self.team.assignees.iter().flat_map(|a| &a.annotators).map(|(a, _)| a);
        let figures = self.team.figures.iter().filter_map(|f| f.annotator.as_ref());
        let runs = self.list.summaries.iter().filter_map(|s| s.annotator.as_ref());
        known_annotators(assignees.chain(figures).chain(runs).map(String::as_str))
    }

    /// The open run's team data, for whoever reads it: the agreement in its tab, the
    /// assignees for those who assign.
    pub(super) fn load_run_team(&mut self) {
        let Some(editor) = &self.editor else { return };
        if !self.sync.settings.enabled() {
            return;
        }
        let run = encoded(&editor.run.id);
        let (manager, agreement) = (
            self.user.role != annotation_core::roles::Role::Annotator,
            editor.shown_tool() == Tool::Agreement,
        );
        self.team.agreement = None;
        self.team.assignees = None;
        self.team.merge = Merge::default();
        if manager {
            self.get(Fetch::Assignees, format!("/runs/{run}/assignees"));
        }
        // An admin's figures name every annotator: the assign field offers them.
        if self.user.role == annotation_core::roles::Role::Admin && self.team.figures.is_empty() {
            self.get(Fetch::Figures, "/analytics/annotators".into());
        }
        if agreement {
            self.get(Fetch::Agreement, format!("/runs/{run}/agreement"));
        }
    }

    pub(super) fn team(&mut self, action: TeamAction) {
        match action {
            TeamAction::ShowQueue(on) => {
                self.team.show_queue = on;
                if on {
                    self.get(Fetch::Queue, "/users/me/queue?limit=200".into());
                }
            }
            TeamAction::Open(view) => {
                self.team.view = view;
                self.team.secret = None;
                match view {
                    Some(TeamView::Notifications) => {
                        self.get(Fetch::Notifications, "/users/me/notifications?limit=200".into())
                    }
                    Some(TeamView::Audit) => self.load_audit(),
                    Some(TeamView::Webhooks) => self.get(Fetch::Webhooks, "/webhooks".into()),
                    Some(TeamView::Figures) => {
                        self.get(Fetch::Figures, "/analytics/annotators".into());
                        self.get(Fetch::Series, "/analytics/agreement".into());
                    }
                    Some(TeamView::Project) => self.get(Fetch::Project, "/project".into()),
                    None => {}
                }
            }
            TeamAction::Loaded(data) => self.team_loaded(data),
            TeamAction::Failed(why) => {
                self.team.busy = None;
                self.notify(false, why);
            }
            TeamAction::MarkRead(id) => {
                let path = match &id {
                    Some(id) => format!("/users/me/notifications/{}/read", encoded(id)),
                    None => "/users/me/notifications:readAll".into(),
                };
                self.write("POST", path, json!({}), None, Then::Notifications);
            }
            TeamAction::AuditFilter(filter) => {
                self.team.audit_filter = filter;
                self.load_audit();
            }
            TeamAction::ExportAudit => match self.team.audit_filter.query() {
                Ok(query) => self.team_request(TeamRequest::ExportAudit(query)),
                Err(why) => self.notify(false, why),
            },
            TeamAction::CreateHook { url, events, description } => {
                match webhook_create(&url, &events, &description) {
                    Ok(body) => self.write("POST", "/webhooks".into(), body, None, Then::Secret),
                    Err(why) => self.notify(false, why),
                }
            }
            TeamAction::PauseHook { id, paused } => {
                let path = format!("/webhooks/{}", encoded(&id));
                self.write("PATCH", path, json!({ "paused": paused }), None, Then::Webhooks);
            }
            TeamAction::Deliveries(id) => self
                .get(Fetch::Deliveries, format!("/webhooks/{}/deliveries?limit=200", encoded(&id))),
            TeamAction::ForgetSecret => self.team.secret = None,
            TeamAction::SaveProject { overlap, url, markdown } => {
                match Project::write(&overlap, &url, &markdown) {
                    Ok(body) => {
                        let version = self.team.project.as_ref().map_or(0, |p| p.version);
                        self.write("PUT", "/project".into(), body, Some(version), Then::Project);
                    }
                    Err(why) => self.notify(false, why),
                }
            }
            TeamAction::Assign(typed) => {
                let Some(editor) = &self.editor else { return };
                let (run, version) = (encoded(&editor.run.id), editor.run.server_version);
                let Some(version) = version else {
                    return self.notify(
                        false,
                        "This run is not on the server yet: it is assigned once it is synced.",
                    );
                };
                match assign_body(&typed) {
                    Ok(body) => self.write(
                        "PUT",
                        format!("/runs/{run}/assignees"),
                        body,
                        Some(version),
                        Then::Assignees,
                    ),
                    Err(why) => self.notify(false, why),
                }
            }
            TeamAction::RoundRobin(typed) => match round_robin_body(&self.list.filter, &typed) {
                Ok(body) => {
                    self.write("POST", "/assignments:roundRobin".into(), body, None, Then::Assigned)
                }
                Err(why) => self.notify(false, why),
            },
            TeamAction::Choose { index, annotator } => self.team.merge.choose(index, &annotator),
            TeamAction::PickAll(annotator) => self.team.merge.pick_all(&annotator),
            TeamAction::Resolve => {
                let Some(editor) = &self.editor else { return };
                let (run, version) = (encoded(&editor.run.id), editor.run.server_version);
                let Some(body) = self.team.merge.body() else {
                    return self
                        .notify(false, "Pick a version, or choose one for each step, first.");
                };
                match version {
                    Some(version) => self.write(
                        "POST",
                        format!("/runs/{run}/resolve"),
                        body,
                        Some(version),
                        Then::Resolved,
                    ),
                    None => self.notify(false, "This run is not on the server yet."),
                }
            }
        }
    }

    fn load_audit(&mut self) {
        match self.team.audit_filter.query() {
            Ok(query) => {
                let joiner = if query.is_empty() { "?" } else { "&" };
                self.get(Fetch::Audit, format!("/audit{query}{joiner}limit=200"))
            }
            Err(why) => self.notify(false, why),
        }
    }

    fn team_loaded(&mut self, data: TeamData) {
        match data {
            TeamData::Queue(queue) => {
                self.team.queue = queue;
                self.team.queue_loaded = true;
            }
            TeamData::Notifications(list) => {
                self.team.unread = list.iter().filter(|n| !n.read).count() as u32;
                self.team.notifications = list;
            }
            TeamData::Audit(entries) => self.team.audit = entries,
            TeamData::Webhooks(hooks) => self.team.webhooks = hooks,
            TeamData::Deliveries(id, list) => self.team.deliveries = Some((id, list)),
            TeamData::Figures(figures) => self.team.figures = figures,
            TeamData::Series(answer) => {
                let admin = self.user.role == annotation_core::roles::Role::Admin;
                self.team.series =
                    annotation_core::team::agreement_series(&answer, &self.user.name, admin);
            }
            TeamData::Project(project) => self.team.project = Some(project),
            TeamData::Agreement(agreement) => {
                if self.editor.as_ref().is_some_and(|e| e.run.id == agreement.run_id) {
                    self.team.agreement = Some(agreement);
                }
            }
            TeamData::Assignees(assignees) => {
                if self.editor.as_ref().is_some_and(|e| e.run.id == assignees.run_id) {
                    self.team.assignees = Some(assignees);
                }
            }
            TeamData::Secret(id, secret) => {
                self.team.secret = Some((id, secret));
                self.get(Fetch::Webhooks, "/webhooks".into());
            }
            TeamData::Done(text) => {
                self.team.busy = None;
                self.notify(true, text);
            }
        }
    }

    /// What follows a write the server took.
    pub(super) fn team_written(&mut self, then: Then, answer: Value) {
        self.team.busy = None;
        match then {
            Then::Notifications => {
                self.get(Fetch::Notifications, "/users/me/notifications?limit=200".into())
            }
            Then::Secret => {
                let (id, secret) = (answer["id"].as_str(), answer["secret"].as_str());
                if let (Some(id), Some(secret)) = (id, secret) {
                    self.team_loaded(TeamData::Secret(id.to_owned(), secret.to_owned()));
                }
            }
            Then::Webhooks => self.get(Fetch::Webhooks, "/webhooks".into()),
            Then::Project => {
                self.team.project = Some(Project::from_server(&answer));
                self.notify(true, "Project settings saved.");
            }
            Then::Assignees => {
                let assignees = Assignees::from_server(&answer);
                let names: Vec<&str> =
                    assignees.annotators.iter().map(|(a, _)| a.as_str()).collect();
                let text = format!("Assigned to {}.", names.join(", "));
                self.team_loaded(TeamData::Assignees(assignees));
                self.notify(true, text);
                // The assignment is a new run version: a round brings it.
                self.kick_sync();
            }
            Then::Assigned => {
                self.notify(true, annotation_core::team::round_robin_text(&answer));
                self.kick_sync();
            }
            Then::Resolved => {
                self.team.merge = Merge::default();
                let version = answer["version"].as_i64().unwrap_or_default();
                self.notify(true, format!("The merge is saved as version {version} of the run."));
                self.kick_sync();
                if let Some(editor) = &self.editor {
                    let run = encoded(&editor.run.id);
                    self.get(Fetch::Agreement, format!("/runs/{run}/agreement"));
                }
            }
        }
    }
}
