//! The team's side of the page (issue 29): what each choice asks of the server.

use annotation_core::record::{ReviewStatus, Run, Step, Thought};
use annotation_core::review::PassageRef;
use annotation_core::roles::{Role, User};
use annotation_core::sync::SyncSettings;
use annotation_core::team::{Project, QueueEntry};
use serde_json::json;

use super::editor::{Loaded, RunData, Tool};
use super::team::{Fetch, TeamAction, TeamRequest, Then};
use super::*;

fn studio(role: Role) -> Studio {
    let mut studio = Studio::default();
    studio.apply(Action::UserLoaded(User { name: "ann".into(), role }));
    let settings = SyncSettings { endpoint: "http://127.0.0.1:8787".into(), token: "t".into() };
    studio.apply(Action::SyncSettings(settings));
    studio.effects.clear();
    studio
}

fn open(studio: &mut Studio, qa: bool, annotator: &str) {
    let steps = (0..2)
        .map(|index| {
            let mut step = Step { run_id: "r1".into(), index, ..Step::default() };
            step.thoughts.thought2 = "I see the search box. I type kettle.".into();
            step
        })
        .collect();
    let run = Run {
        id: "r1".into(),
        annotator: Some(annotator.into()),
        server_version: Some(4),
        ..Run::default()
    };
    let user = studio.user.clone();
    studio.apply(Action::RunLoaded(Box::new(Loaded {
        data: RunData::new(run, steps),
        qa,
        user,
        draft: None,
    })));
}

fn requests(studio: &Studio) -> Vec<&TeamRequest> {
    studio
        .effects
        .iter()
        .filter_map(|(_, e)| match e {
            Effect::Team { request, .. } => Some(request),
            _ => None,
        })
        .collect()
}

fn entry(run_id: &str) -> QueueEntry {
    QueueEntry {
        run_id: run_id.into(),
        task_prompt: format!("Task {run_id}"),
        status: "draft".into(),
        steps: 2,
        assigned_by: "ada".into(),
        assigned_at: "t".into(),
    }
}

fn round(queue: Vec<QueueEntry>, own: Vec<String>) -> RoundDone {
    RoundDone {
        team: Some(TeamRound {
            project: Some(Project { overlap: 2, ..Project::default() }),
            unread: 3,
            queue,
            own,
        }),
        ..RoundDone::default()
    }
}

#[test]
fn an_annotators_list_opens_on_my_queue_and_next_run_follows_it() {
    let mut studio = studio(Role::Annotator);
    studio.apply(Action::RoundDone(Box::new(round(
        vec![entry("r1"), entry("r2")],
        vec!["r1".into()],
    ))));
    assert!(studio.team.show_queue, "an annotator starts on their queue");
    assert_eq!(studio.team.unread, 3);
    open(&mut studio, false, "ada");
    let editor = studio.editor.as_ref().unwrap();
    assert!(editor.own_version, "the overlap run is annotated in the annotator's own version");
    assert!(
        editor.permissions().edit,
        "their own version is theirs to edit, whoever uploaded the run"
    );
    assert!(editor.targets().contains(&ReviewStatus::InReview), "and to hand in");
    studio.list.loaded = true;
    studio.effects.clear();
    studio.apply(Action::NextRun);
    assert!(
        studio
            .effects
            .iter()
            .any(|(_, e)| matches!(e, Effect::OpenRun { run_id, .. } if run_id == "r2")),
        "{:?}",
        studio.effects
    );
    // A reviewer's list stays on every run.
    let mut reviewer = super::team_tests::studio(Role::Reviewer);
    reviewer.apply(Action::RoundDone(Box::new(round(vec![], vec![]))));
    assert!(!reviewer.team.show_queue);
}

#[test]
fn the_assign_field_offers_the_annotators_the_page_has_seen() {
    let mut admin = studio(Role::Admin);
    open(&mut admin, true, "ada");
    assert!(
        requests(&admin).iter().any(|r| matches!(r, TeamRequest::Get(Fetch::Figures, _))),
        "an admin's figures name the annotators"
    );
    let figure = |annotator: Option<&str>| annotation_core::team::Figure {
        label: annotator.unwrap_or("Annotator 1").into(),
        annotator: annotator.map(Into::into),
        you: false,
        runs: 1,
        average_quality: None,
        consistency: None,
        agreement: None,
        review_completion: None,
    };
    admin.apply(Action::Team(TeamAction::Loaded(crate::state::team::TeamData::Figures(vec![
        figure(Some("bea")),
        figure(None),
    ]))));
    admin.apply(Action::Team(TeamAction::Loaded(crate::state::team::TeamData::Assignees(
        annotation_core::team::Assignees {
            run_id: "r1".into(),
            overlap: 1,
            annotators: vec![("cid".into(), false)],
        },
    ))));
    assert_eq!(admin.assign_choices(), ["bea", "cid"]);

    // A reviewer sees peers only anonymised: the page does not ask.
    let mut reviewer = studio(Role::Reviewer);
    open(&mut reviewer, true, "ada");
    assert!(!requests(&reviewer).iter().any(|r| matches!(r, TeamRequest::Get(Fetch::Figures, _))));
}

#[test]
fn assigning_and_merging_are_based_on_the_run_version_read() {
    let mut studio = studio(Role::Reviewer);
    open(&mut studio, true, "ada");
    assert!(matches!(requests(&studio)[..], [TeamRequest::Get(Fetch::Assignees, _)]));
    studio.effects.clear();
    studio.apply(Action::Team(TeamAction::Assign("ann, bea".into())));
    let [
        TeamRequest::Write { method: "PUT", path, body, if_match: Some(4), then: Then::Assignees },
    ] = requests(&studio)[..]
    else {
        panic!("{:?}", studio.effects)
    };
    assert_eq!(
        (path.as_str(), body),
        ("/runs/r1/assignees", &json!({"annotators": ["ann", "bea"]}))
    );

    studio.effects.clear();
    studio.apply(Action::ShowTool(Tool::Agreement));
    assert!(
        requests(&studio).iter().any(
            |r| matches!(r, TeamRequest::Get(Fetch::Agreement, p) if p == "/runs/r1/agreement")
        )
    );
    studio.effects.clear();
    studio.apply(Action::Team(TeamAction::Resolve));
    assert!(requests(&studio).is_empty(), "nothing chosen: nothing sent");
    studio.apply(Action::Team(TeamAction::PickAll("ann".into())));
    studio.apply(Action::Team(TeamAction::Choose { index: 1, annotator: "bea".into() }));
    studio.apply(Action::Team(TeamAction::Resolve));
    let [TeamRequest::Write { path, body, if_match: Some(4), then: Then::Resolved, .. }] =
        requests(&studio)[..]
    else {
        panic!("{:?}", studio.effects)
    };
    assert_eq!(path, "/runs/r1/resolve");
    assert_eq!(body, &json!({"pick": "ann", "steps": [{"index": 1, "from": "bea"}]}));
    // Written: a round brings the new version.
    let kicked = studio.sync.kick;
    studio.apply(Action::TeamWritten { then: Then::Resolved, answer: json!({"version": 5}) });
    assert!(studio.sync.kick > kicked);
    assert_eq!(studio.notice.as_ref().unwrap().text, "The merge is saved as version 5 of the run.");
}

#[test]
fn round_robin_is_refused_for_filters_the_server_cannot_apply() {
    let mut studio = studio(Role::Admin);
    studio.list.filter.min_quality = Some(80);
    studio.apply(Action::Team(TeamAction::RoundRobin("ann bea".into())));
    assert!(requests(&studio).is_empty());
    assert!(studio.notice.as_ref().unwrap().text.contains("quality"));
    studio.list.filter.min_quality = None;
    studio.apply(Action::Team(TeamAction::RoundRobin("ann bea".into())));
    assert!(matches!(requests(&studio)[..], [TeamRequest::Write { then: Then::Assigned, .. }]));
}

#[test]
fn a_comment_on_a_selection_carries_its_passage_and_a_suggestion_replaces_only_it() {
    let mut studio = studio(Role::Reviewer);
    open(&mut studio, true, "ann");
    let text = "I see the search box. I type kettle.";
    let passage = PassageRef::capture(Thought::Two, text, 22, 35).unwrap();
    studio.apply(Action::SelectPassage(Some(passage.clone())));
    studio.apply(Action::PostComment {
        id: "c1".into(),
        text: "Which field?".into(),
        kind: annotation_core::review::CommentKind::Question,
        reply_to: None,
        at: "t".into(),
    });
    let comment = studio
        .effects
        .iter()
        .find_map(|(_, e)| match e {
            Effect::PutComment(c) => Some(c),
            _ => None,
        })
        .unwrap();
    assert_eq!(comment.passage.as_ref().map(|p| p.quote.as_str()), Some("I type kettle"));
    assert_eq!(studio.editor.as_ref().unwrap().passage, None, "the next comment is on the step");

    studio.apply(Action::SuggestPassage(passage));
    studio.apply(Action::SubmitSuggestion {
        id: "s1".into(),
        text: "I type teapot".into(),
        at: "t".into(),
    });
    let suggestion = studio
        .effects
        .iter()
        .find_map(|(_, e)| match e {
            Effect::PutSuggestion { suggestion, .. } => Some(suggestion),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (suggestion.before.as_str(), suggestion.after.as_str()),
        ("I type kettle", "I type teapot")
    );
    assert_eq!(suggestion.passage.as_ref().map(|p| (p.start, p.end)), Some((22, 35)));
}

#[test]
fn a_new_webhooks_secret_is_shown_once() {
    let mut studio = studio(Role::Admin);
    studio.apply(Action::Team(TeamAction::Open(Some(super::team::TeamView::Webhooks))));
    studio.apply(Action::Team(TeamAction::CreateHook {
        url: "http://127.0.0.1:9/hook".into(),
        events: vec!["run.approved".into()],
        description: String::new(),
    }));
    assert!(
        requests(&studio)
            .iter()
            .any(|r| matches!(r, TeamRequest::Write { then: Then::Secret, .. }))
    );
    studio.apply(Action::TeamWritten {
        then: Then::Secret,
        answer: json!({"id": "h1", "secret": "whsec_1"}),
    });
    assert_eq!(studio.team.secret, Some(("h1".into(), "whsec_1".into())));
    studio.apply(Action::Team(TeamAction::ForgetSecret));
    assert_eq!(studio.team.secret, None);
    studio.apply(Action::Team(TeamAction::CreateHook {
        url: "http://hooks.test/x".into(),
        events: vec!["run.approved".into()],
        description: String::new(),
    }));
    assert!(studio.notice.as_ref().unwrap().text.contains("https://"));
}

#[test]
fn the_figures_view_reads_agreement_over_time_and_anonymises_peers_for_non_admins() {
    let mut studio = studio(Role::Reviewer);
    studio.apply(Action::Team(TeamAction::Open(Some(super::team::TeamView::Figures))));
    let paths: Vec<&str> = requests(&studio)
        .iter()
        .filter_map(|r| match r {
            TeamRequest::Get(_, path) => Some(path.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(paths, ["/analytics/annotators", "/analytics/agreement"]);
    let answer = json!({"items": [
        {"annotator": "bea", "points": [{"weekStart": "2026-11-23", "runs": 1, "agreement": 0.5}]},
    ]});
    studio.apply(Action::Team(TeamAction::Loaded(super::team::TeamData::Series(answer.clone()))));
    assert_eq!(studio.team.series.len(), 1);
    assert_eq!(studio.team.series[0].label, "Peers (anonymised mean)");
    studio.apply(Action::UserLoaded(User { name: "ada".into(), role: Role::Admin }));
    studio.apply(Action::Team(TeamAction::Loaded(super::team::TeamData::Series(answer))));
    assert_eq!(studio.team.series[0].label, "bea");
}

#[test]
fn a_round_says_syncing_while_it_runs_and_brings_collections_and_the_open_runs_figures() {
    let mut studio = studio(Role::QaManager);
    studio.apply(Action::RoundDone(Box::default()));
    studio.apply(Action::SyncKick);
    assert_eq!(studio.sync.state, annotation_core::sync::SyncState::Syncing);
    open(&mut studio, false, "ann");
    let collection =
        annotation_core::collections::Collection { name: "Toasters".into(), ..Default::default() };
    let metrics = |run: &str| annotation_core::metrics_sync::TeamMetrics {
        run_id: run.into(),
        time_spent_ms: 5000,
        ..Default::default()
    };
    let round = RoundDone {
        state: annotation_core::sync::SyncState::Synced { at: "now".into() },
        collections: Some(vec![collection.clone()]),
        metrics: Some(metrics("r1")),
        ..RoundDone::default()
    };
    studio.apply(Action::RoundDone(Box::new(round.clone())));
    assert_eq!(studio.collections, vec![collection]);
    assert_eq!(studio.team.metrics, Some(metrics("r1")));
    // Figures of another run (the page moved on while the round ran) are not shown.
    studio.apply(Action::RoundDone(Box::new(RoundDone { metrics: Some(metrics("r9")), ..round })));
    assert_eq!(studio.team.metrics, None);
}
