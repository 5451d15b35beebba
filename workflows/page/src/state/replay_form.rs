//! The form that starts a replay: one field per parameter, its example prefilled (a secret
//! starts empty: it is given at each replay), and the tab to run in.

use std::collections::BTreeMap;

use protocol::TabId;
use workflow_format::schema::Workflow;

/// An open web page a replay can run in.
#[derive(Debug, Clone, PartialEq)]
pub struct TabChoice {
    pub id: TabId,
    pub title: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReplayField {
    pub name: String,
    pub description: String,
    pub value: String,
    pub secret: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReplayForm {
    pub workflow_id: String,
    pub version: u32,
    pub name: String,
    pub start_url: String,
    pub fields: Vec<ReplayField>,
    /// `None`: a new tab at the workflow's start page.
    pub tab: Option<TabId>,
    /// On by default: a step whose recorded target is found acts without a model call.
    /// Off, every step asks the model (slower, but it adapts to a page that changed).
    pub fast_path: bool,
}

impl ReplayForm {
    pub fn for_workflow(workflow: &Workflow) -> ReplayForm {
        ReplayForm {
            workflow_id: workflow.id.clone(),
            version: workflow.version,
            name: workflow.name.clone(),
            start_url: workflow.start_url.clone(),
            fields: workflow
                .params
                .iter()
                .map(|p| ReplayField {
                    name: p.name.clone(),
                    description: p.description.clone(),
                    value: if p.secret { String::new() } else { p.example.clone() },
                    secret: p.secret,
                })
                .collect(),
            tab: None,
            fast_path: true,
        }
    }

    pub fn set(&mut self, name: &str, value: String) {
        if let Some(field) = self.fields.iter_mut().find(|f| f.name == name) {
            field.value = value;
        }
    }

    pub fn values(&self) -> BTreeMap<String, String> {
        self.fields.iter().map(|f| (f.name.clone(), f.value.clone())).collect()
    }

    /// What must be filled in before the replay can start.
    pub fn problem(&self) -> Option<String> {
        let empty: Vec<&str> = self
            .fields
            .iter()
            .filter(|f| f.value.trim().is_empty())
            .map(|f| f.name.as_str())
            .collect();
        (!empty.is_empty()).then(|| format!("Give a value for {}.", empty.join(", ")))
    }
}
