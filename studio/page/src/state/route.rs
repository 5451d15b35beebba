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
        for pair in hash.trim_start_matches('#').split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode(value);
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

/// Percent-encodes everything but unreserved characters.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

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
