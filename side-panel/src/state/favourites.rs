//! Favourite (quick-start) prompts: chips on an empty chat that fill the chat box, an
//! editor to add, change and remove them, and "★ Save as favourite" on a sent task.
//!
//! The worker stores the whole list; every change sends the list as it should be and shows
//! it once the worker has stored it. The editor checks a favourite with the worker's rules
//! ([`Favourite::problem`]) before anything is sent, and stays open until the save is
//! confirmed, so a refused save loses nothing typed.

use protocol::{Favourite, favourites_problem};

/// The favourite being added or edited.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Editor {
    /// The id of the favourite edited; `None` for a new one.
    pub editing: Option<String>,
    pub title: String,
    pub prompt: String,
    /// Why it cannot be saved as it is.
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Favourites {
    /// As the worker stored them.
    pub list: Vec<Favourite>,
    /// Loaded at least once.
    pub loaded: bool,
    /// The `get_favourites` awaiting its answer.
    pub loading: Option<u32>,
    /// The `save_favourites` awaiting its answer.
    pub saving: Option<u32>,
    /// Edit and remove buttons are shown on the chips.
    pub managing: bool,
    pub editor: Option<Editor>,
    /// Why the last load or save failed.
    pub error: Option<String>,
}

/// The first line of `text`, cut to a chip's length.
pub fn title_for(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(48) {
        Some((at, _)) => format!("{}…", line[..at].trim_end()),
        None => line.to_owned(),
    }
}

impl Favourites {
    pub fn get(&self, id: &str) -> Option<&Favourite> {
        self.list.iter().find(|f| f.id == id)
    }

    /// Whether a favourite puts exactly `prompt` in the chat box.
    pub fn has_prompt(&self, prompt: &str) -> bool {
        self.list.iter().any(|f| f.prompt.trim() == prompt.trim())
    }

    /// An id no favourite has: `fav-N`, one past the highest.
    fn next_id(&self) -> String {
        let highest = self
            .list
            .iter()
            .filter_map(|f| f.id.strip_prefix("fav-")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        format!("fav-{}", highest + 1)
    }

    pub fn add(&mut self) {
        self.editor = Some(Editor::default());
    }

    pub fn edit(&mut self, id: &str) {
        if let Some(favourite) = self.get(id) {
            self.editor = Some(Editor {
                editing: Some(id.to_owned()),
                title: favourite.title.clone(),
                prompt: favourite.prompt.clone(),
                problem: None,
            });
        }
    }

    pub fn cancel(&mut self) {
        if self.saving.is_none() {
            self.editor = None;
        }
    }

    /// The list the editor's favourite makes, or why it cannot be saved (shown in it).
    pub fn submit(&mut self) -> Option<Vec<Favourite>> {
        if self.saving.is_some() {
            return None;
        }
        let editor = self.editor.as_mut()?;
        let favourite = Favourite {
            id: editor.editing.clone().unwrap_or_default(),
            title: editor.title.trim().to_owned(),
            prompt: editor.prompt.trim().to_owned(),
        };
        editor.problem = favourite.problem();
        if editor.problem.is_some() {
            return None;
        }
        let mut list = self.list.clone();
        match list.iter_mut().find(|f| editor.editing.as_deref() == Some(f.id.as_str())) {
            Some(slot) => *slot = favourite,
            None => {
                let id = self.next_id();
                list.push(Favourite { id, ..favourite });
            }
        }
        let editor = self.editor.as_mut()?;
        editor.problem = favourites_problem(&list);
        editor.problem.is_none().then_some(list)
    }

    /// The list without favourite `id`.
    pub fn without(&self, id: &str) -> Option<Vec<Favourite>> {
        if self.saving.is_some() || self.get(id).is_none() {
            return None;
        }
        Some(self.list.iter().filter(|f| f.id != id).cloned().collect())
    }

    /// The list with `prompt` added as a favourite (a sent task), unless it is one already.
    pub fn with_prompt(&mut self, prompt: &str) -> Option<Vec<Favourite>> {
        if self.saving.is_some() || self.has_prompt(prompt) {
            return None;
        }
        let favourite = Favourite {
            id: self.next_id(),
            title: title_for(prompt),
            prompt: prompt.trim().into(),
        };
        let mut list = self.list.clone();
        list.push(favourite);
        match favourites_problem(&list) {
            Some(problem) => {
                self.error = Some(problem);
                None
            }
            None => Some(list),
        }
    }

    pub fn saving(&mut self, id: u32) {
        self.saving = Some(id);
        self.error = None;
    }

    /// The worker's list arrived: loaded, or a save confirmed (which closes the editor).
    pub fn stored(&mut self, id: u32, favourites: Vec<Favourite>) -> bool {
        if self.saving == Some(id) {
            self.saving = None;
            self.editor = None;
        } else if self.loading == Some(id) {
            self.loading = None;
        } else {
            return false;
        }
        self.list = favourites;
        self.loaded = true;
        if self.list.is_empty() {
            self.managing = false;
        }
        true
    }

    /// Whether `id` was a request of favourites; if so its failure is shown, in the editor
    /// when one is open.
    pub fn failed(&mut self, id: u32, message: &str) -> bool {
        if self.loading == Some(id) {
            self.loading = None;
            self.error = Some(format!("Could not load your favourites: {message}"));
        } else if self.saving == Some(id) {
            self.saving = None;
            match self.editor.as_mut() {
                Some(editor) => editor.problem = Some(message.to_owned()),
                None => self.error = Some(message.to_owned()),
            }
        } else {
            return false;
        }
        true
    }

    /// The port closed: nothing in flight will be answered.
    pub fn interrupted(&mut self, message: &str) {
        self.loading = None;
        if self.saving.is_some() {
            self.failed(self.saving.unwrap_or_default(), message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn favourite(id: &str, title: &str, prompt: &str) -> Favourite {
        Favourite { id: id.into(), title: title.into(), prompt: prompt.into() }
    }

    #[test]
    fn a_new_favourite_gets_a_fresh_id_and_is_checked_first() {
        let mut favourites = Favourites {
            list: vec![favourite("fav-7", "Kettle", "Find a kettle")],
            ..Favourites::default()
        };
        favourites.add();
        assert_eq!(favourites.submit(), None, "empty");
        assert!(favourites.editor.as_ref().unwrap().problem.as_deref().unwrap().contains("title"));
        let editor = favourites.editor.as_mut().unwrap();
        editor.title = " Toaster ".into();
        editor.prompt = "Find a toaster\n".into();
        let list = favourites.submit().expect("valid");
        assert_eq!(list[1], favourite("fav-8", "Toaster", "Find a toaster"));
        assert_eq!(favourites.editor.as_ref().unwrap().problem, None);
    }

    #[test]
    fn editing_replaces_in_place_and_the_editor_closes_when_stored() {
        let mut favourites = Favourites {
            list: vec![favourite("fav-1", "A", "a"), favourite("fav-2", "B", "b")],
            ..Favourites::default()
        };
        favourites.edit("fav-1");
        favourites.editor.as_mut().unwrap().prompt = "a, better".into();
        let list = favourites.submit().unwrap();
        assert_eq!(list, [favourite("fav-1", "A", "a, better"), favourite("fav-2", "B", "b")]);
        favourites.saving(3);
        assert_eq!(favourites.submit(), None, "one save at a time");
        favourites.cancel();
        assert!(favourites.editor.is_some(), "kept until the save is answered");
        assert!(!favourites.stored(2, vec![]), "not this request");
        assert!(favourites.stored(3, list.clone()));
        assert_eq!(favourites.list, list);
        assert_eq!(favourites.editor, None);
    }

    #[test]
    fn a_refused_save_shows_in_the_open_editor_and_keeps_the_text() {
        let mut favourites = Favourites::default();
        favourites.add();
        let editor = favourites.editor.as_mut().unwrap();
        editor.title = "T".into();
        editor.prompt = "p".into();
        favourites.submit().unwrap();
        favourites.saving(1);
        assert!(favourites.failed(1, "Storage is full."));
        let editor = favourites.editor.as_ref().unwrap();
        assert_eq!(
            (editor.title.as_str(), editor.problem.as_deref()),
            ("T", Some("Storage is full."))
        );
        assert!(favourites.list.is_empty(), "nothing shown that was not stored");
    }

    #[test]
    fn a_sent_task_is_saved_once_with_a_short_title() {
        let mut favourites = Favourites::default();
        let prompt = "Find the cheapest steel kettle on this site and tell me its price\nthanks";
        let list = favourites.with_prompt(prompt).unwrap();
        assert_eq!(list[0].title, "Find the cheapest steel kettle on this site and…");
        assert_eq!(list[0].prompt, prompt);
        favourites.list = list;
        assert!(favourites.has_prompt(prompt));
        assert_eq!(favourites.with_prompt(prompt), None, "already a favourite");
        assert_eq!(favourites.without("fav-1"), Some(vec![]));
        assert_eq!(favourites.without("nope"), None);
    }
}
