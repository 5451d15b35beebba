//! The Studio's address: `#trace=<id>` opens a trace, `#run=<runId>&step=<n>` lists a
//! step's traces (the annotation page links here), `#prompt=<id>` opens a prompt. `n` is
//! the step's stored index (from 0); the page shows it 1-based.

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Route {
    pub trace: Option<String>,
    pub run: Option<String>,
    pub step: Option<u32>,
    pub prompt: Option<String>,
}

impl Route {
    pub fn parse(hash: &str) -> Route {
        let mut route = Route::default();
        for (key, value) in run_contract::url::params(hash) {
            match key {
                "trace" if !value.is_empty() => route.trace = Some(value),
                "run" if !value.is_empty() => route.run = Some(value),
                "step" => route.step = value.parse().ok(),
                "prompt" if !value.is_empty() => route.prompt = Some(value),
                _ => {}
            }
        }
        route
    }

    /// The Studio link to one trace.
    pub fn trace_link(id: &str) -> String {
        format!("studio.html#trace={}", encode(id))
    }

    /// The annotation page's link to a captured run, opened on `step` (the stored index,
    /// as the annotation page's `step` parameter takes it).
    pub fn annotation_link(run_id: &str, step: u32) -> String {
        format!("annotation.html?agentRunId={}&step={step}", encode(run_id))
    }
}

pub use run_contract::url::component_encode as encode;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_round_trip_through_the_hash() {
        let link = Route::trace_link("a b&c");
        let route = Route::parse(link.split_once('#').unwrap().1);
        assert_eq!(route.trace.as_deref(), Some("a b&c"));
        let route = Route::parse("#run=r%3A1&step=2");
        assert_eq!((route.run.as_deref(), route.step), (Some("r:1"), Some(2)));
        assert_eq!(Route::annotation_link("r 1", 2), "annotation.html?agentRunId=r%201&step=2");
        assert_eq!(Route::parse(""), Route::default());
    }
}
