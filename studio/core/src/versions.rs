//! Saved prompt versions (the `promptVersions` store, written by the worker on every save):
//! a file's versions newest first, and what is known of each (the text of an earlier
//! version again, or the bundled text).

/// One saved text of a prompt file (`{path, number, text, savedAt}`).
#[derive(Debug, Clone, PartialEq, tagged_de::FieldsDeserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptVersion {
    pub path: String,
    pub number: u32,
    pub text: String,
    #[serde(default)]
    pub saved_at: String,
}

/// `path`'s versions, newest first.
pub fn of_file<'a>(all: &'a [PromptVersion], path: &str) -> Vec<&'a PromptVersion> {
    let mut out: Vec<&PromptVersion> = all.iter().filter(|v| v.path == path).collect();
    lean::sort_by_key(&mut out, |v| std::cmp::Reverse(v.number));
    out
}

/// What a version's text was: an earlier version's again (a restore), or the bundled file.
pub fn note(
    all: &[PromptVersion],
    version: &PromptVersion,
    bundled: Option<&str>,
) -> Option<String> {
    let earlier = all
        .iter()
        .filter(|v| v.path == version.path && v.number < version.number && v.text == version.text)
        .map(|v| v.number)
        .min();
    match earlier {
        Some(number) => Some(format!("same text as v{number} (restored)")),
        None if bundled == Some(version.text.as_str()) => Some("the bundled text".into()),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(path: &str, number: u32, text: &str) -> PromptVersion {
        PromptVersion {
            path: path.into(),
            number,
            text: text.into(),
            saved_at: format!("2026-11-2{number}T10:00:00.000Z"),
        }
    }

    #[test]
    fn a_files_versions_list_newest_first_and_say_which_restore_an_earlier_one() {
        let all = vec![
            version("navigator/A.md", 1, "one"),
            version("planner/A.md", 1, "plan"),
            version("navigator/A.md", 3, "one"),
            version("navigator/A.md", 2, "two"),
        ];
        let listed: Vec<u32> = of_file(&all, "navigator/A.md").iter().map(|v| v.number).collect();
        assert_eq!(listed, [3, 2, 1]);
        assert_eq!(note(&all, &all[2], None).as_deref(), Some("same text as v1 (restored)"));
        assert_eq!(note(&all, &all[0], None), None);
        assert_eq!(note(&all, &all[3], Some("two")).as_deref(), Some("the bundled text"));
        // A row as the worker writes it.
        let row: PromptVersion = serde_json::from_str(
            r#"{"path": "navigator/A.md", "number": 4, "text": "t", "savedAt": "2026-11-27T07:00:00.000Z"}"#,
        )
        .unwrap();
        assert_eq!((row.number, row.saved_at.as_str()), (4, "2026-11-27T07:00:00.000Z"));
    }
}
