//! Stamps: what a build step last read and wrote, so `dist` can skip a step whose inputs did
//! not change and whose outputs are still there, untouched.
//!
//! A stamp is a small text file under `target/dist-stamps/`, written only after its step
//! succeeded (and removed before the step runs again). It records the step's settings (tool
//! versions, flags), each input file and each file of its output folder as (size, mtime,
//! content hash). A file counts as unchanged when its size and mtime are the recorded ones, or
//! when its size is and its content hashes to the recorded value (a rebuild that wrote the same
//! bytes). The output folder must hold exactly the recorded files: a file missing, added or
//! replaced makes the step run again.

use std::collections::BTreeMap;
use std::fs;
use std::hash::Hasher;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// One file as last seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub len: u64,
    /// Modification time in nanoseconds since the epoch; 0 when the platform has none.
    pub mtime: u128,
    pub hash: u64,
}

/// What a step last consumed (`settings`, `inputs`) and produced (`outputs`, by path relative
/// to its output folder, with `/` separators).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub settings: String,
    pub inputs: BTreeMap<String, Mark>,
    pub outputs: BTreeMap<String, Mark>,
}

/// A 64-bit hash of a file's content (SipHash with fixed keys: the same on every run of a given
/// toolchain; a toolchain that hashes differently only costs one rebuild).
pub fn hash_file(path: &Path) -> io::Result<u64> {
    #[allow(deprecated)] // SipHasher is the one std hasher with fixed keys
    let mut hasher = std::hash::SipHasher::new();
    let mut file = fs::File::open(path)?;
    let mut buffer = vec![0; 1 << 20];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.write(&buffer[..read]);
    }
    Ok(hasher.finish())
}

fn len_and_mtime(path: &Path) -> io::Result<(u64, u128)> {
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::other(format!("{} is not a file", path.display())));
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok((meta.len(), mtime))
}

/// Reads a file's size, mtime and content hash.
pub fn mark(path: &Path) -> io::Result<Mark> {
    let (len, mtime) = len_and_mtime(path)?;
    Ok(Mark { len, mtime, hash: hash_file(path)? })
}

/// The file's mark now, if it still has the recorded content (else None).
fn still(recorded: &Mark, path: &Path) -> Option<Mark> {
    let (len, mtime) = len_and_mtime(path).ok()?;
    if len != recorded.len {
        return None;
    }
    if mtime == recorded.mtime && mtime != 0 {
        return Some(recorded.clone());
    }
    let hash = hash_file(path).ok()?;
    (hash == recorded.hash).then_some(Mark { len, mtime, hash })
}

/// Every file under `dir`, as paths relative to it with `/` separators, sorted. A missing
/// folder lists nothing.
pub fn list_files(dir: &Path) -> io::Result<Vec<String>> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
            if entry.file_type()?.is_dir() {
                walk(&entry.path(), &rel, out)?;
            } else {
                out.push(rel);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    if dir.is_dir() {
        walk(dir, "", &mut out)?;
    }
    out.sort();
    Ok(out)
}

/// Marks every file under `dir`.
pub fn mark_dir(dir: &Path) -> io::Result<BTreeMap<String, Mark>> {
    list_files(dir)?.into_iter().map(|rel| Ok((rel.clone(), mark(&dir.join(&rel))?))).collect()
}

/// Marks each named input.
pub fn mark_inputs(inputs: &[(String, PathBuf)]) -> io::Result<BTreeMap<String, Mark>> {
    inputs.iter().map(|(name, path)| Ok((name.clone(), mark(path)?))).collect()
}

/// When the step `stamp` records is still done — same settings, the same named inputs with
/// unchanged content, and `out_dir` holding exactly the recorded files, unchanged — the stamp
/// as of now (mtimes refreshed for files that were rewritten with the same bytes). Else None.
pub fn fresh(
    stamp: &Stamp,
    settings: &str,
    inputs: &[(String, PathBuf)],
    out_dir: &Path,
) -> Option<Stamp> {
    if stamp.settings != settings || stamp.inputs.len() != inputs.len() {
        return None;
    }
    let mut now =
        Stamp { settings: settings.to_owned(), inputs: BTreeMap::new(), outputs: BTreeMap::new() };
    for (name, path) in inputs {
        let mark = still(stamp.inputs.get(name)?, path)?;
        now.inputs.insert(name.clone(), mark);
    }
    let files = list_files(out_dir).ok()?;
    if files.len() != stamp.outputs.len() {
        return None;
    }
    for rel in files {
        let mark = still(stamp.outputs.get(&rel)?, &out_dir.join(&rel))?;
        now.outputs.insert(rel, mark);
    }
    Some(now)
}

impl Stamp {
    /// Reads a stamp; None when it is missing or unreadable (the step then runs).
    pub fn load(path: &Path) -> Option<Stamp> {
        Stamp::parse(&fs::read_to_string(path).ok()?)
    }

    /// Writes the stamp (through a temporary file, so a crash leaves none or a whole one).
    pub fn save(&self, path: &Path) -> io::Result<()> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        let partial = path.with_extension("partial");
        fs::write(&partial, self.render())?;
        fs::rename(&partial, path)
    }

    /// Removes a stamp before its step runs, so a step that fails leaves none behind.
    pub fn remove(path: &Path) -> io::Result<()> {
        match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    fn render(&self) -> String {
        let mut text = String::from("stamp 1\n");
        text.push_str(&format!("settings\t{}\n", self.settings.replace(['\t', '\n'], " ")));
        for (kind, marks) in [("input", &self.inputs), ("output", &self.outputs)] {
            for (name, m) in marks {
                text.push_str(&format!(
                    "{kind}\t{}\t{}\t{:016x}\t{name}\n",
                    m.len, m.mtime, m.hash
                ));
            }
        }
        text
    }

    fn parse(text: &str) -> Option<Stamp> {
        let mut lines = text.lines();
        if lines.next()? != "stamp 1" {
            return None;
        }
        let settings = lines.next()?.strip_prefix("settings\t")?.to_owned();
        let mut stamp = Stamp { settings, inputs: BTreeMap::new(), outputs: BTreeMap::new() };
        for line in lines {
            let mut fields = line.splitn(5, '\t');
            let kind = fields.next()?;
            let len = fields.next()?.parse().ok()?;
            let mtime = fields.next()?.parse().ok()?;
            let hash = u64::from_str_radix(fields.next()?, 16).ok()?;
            let name = fields.next()?.to_owned();
            let marks = match kind {
                "input" => &mut stamp.inputs,
                "output" => &mut stamp.outputs,
                _ => return None,
            };
            marks.insert(name, Mark { len, mtime, hash });
        }
        Some(stamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system temp dir, removed on drop.
    struct Temp(PathBuf);

    impl Temp {
        fn new(name: &str) -> Temp {
            let dir = std::env::temp_dir().join(format!(
                "xtask-stamp-{name}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Temp(dir)
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn write(path: &Path, bytes: &[u8]) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    /// An input file and an output folder with two files (one nested), and their stamp.
    fn step(dir: &Path) -> (Vec<(String, PathBuf)>, PathBuf, Stamp) {
        let input = dir.join("in.wasm");
        write(&input, b"input bytes");
        let out = dir.join("out");
        write(&out.join("a_bg.wasm"), b"wasm");
        write(&out.join("snippets/x/inline0.js"), b"js");
        let inputs = vec![("wasm".to_owned(), input)];
        let stamp = Stamp {
            settings: "tool 1.0 -Oz".into(),
            inputs: mark_inputs(&inputs).unwrap(),
            outputs: mark_dir(&out).unwrap(),
        };
        (inputs, out, stamp)
    }

    /// Sets a file's mtime well away from now, as a rewrite some time later would.
    fn age(path: &Path) {
        let file = fs::File::options().write(true).open(path).unwrap();
        file.set_modified(UNIX_EPOCH + std::time::Duration::from_secs(1_000_000)).unwrap();
    }

    #[test]
    fn unchanged_step_is_fresh() {
        let temp = Temp::new("unchanged");
        let (inputs, out, stamp) = step(&temp.0);
        assert_eq!(fresh(&stamp, "tool 1.0 -Oz", &inputs, &out), Some(stamp.clone()));
        assert_eq!(
            stamp.outputs.keys().collect::<Vec<_>>(),
            ["a_bg.wasm", "snippets/x/inline0.js"]
        );
    }

    #[test]
    fn round_trips_through_its_file() {
        let temp = Temp::new("roundtrip");
        let (_, _, stamp) = step(&temp.0);
        let path = temp.0.join("stamps/bundle.stamp");
        stamp.save(&path).unwrap();
        assert_eq!(Stamp::load(&path), Some(stamp));
        Stamp::remove(&path).unwrap();
        assert_eq!(Stamp::load(&path), None);
        Stamp::remove(&path).unwrap(); // removing a missing stamp is fine
        write(&path, b"garbage");
        assert_eq!(Stamp::load(&path), None);
    }

    #[test]
    fn changed_settings_are_stale() {
        let temp = Temp::new("settings");
        let (inputs, out, stamp) = step(&temp.0);
        assert_eq!(fresh(&stamp, "tool 1.1 -Oz", &inputs, &out), None);
        assert_eq!(fresh(&stamp, "tool 1.0 -O1", &inputs, &out), None);
    }

    #[test]
    fn changed_input_is_stale() {
        let temp = Temp::new("input");
        let (inputs, out, stamp) = step(&temp.0);
        // Same size, different bytes, mtime moved: the hash tells.
        write(&inputs[0].1, b"INPUT bytes");
        age(&inputs[0].1);
        assert_eq!(fresh(&stamp, "tool 1.0 -Oz", &inputs, &out), None);
        fs::remove_file(&inputs[0].1).unwrap();
        assert_eq!(fresh(&stamp, "tool 1.0 -Oz", &inputs, &out), None);
    }

    #[test]
    fn rewritten_with_same_bytes_is_fresh_with_new_mtime() {
        let temp = Temp::new("touched");
        let (inputs, out, stamp) = step(&temp.0);
        age(&inputs[0].1);
        let now = fresh(&stamp, "tool 1.0 -Oz", &inputs, &out).expect("same content");
        assert_ne!(now.inputs["wasm"].mtime, stamp.inputs["wasm"].mtime);
        assert_eq!(now.inputs["wasm"].hash, stamp.inputs["wasm"].hash);
        // The refreshed stamp is fresh on the fast path too.
        assert_eq!(fresh(&now, "tool 1.0 -Oz", &inputs, &out), Some(now.clone()));
    }

    #[test]
    fn output_deleted_added_or_replaced_is_stale() {
        let temp = Temp::new("outputs");
        let (inputs, out, stamp) = step(&temp.0);
        let fresh_now = || fresh(&stamp, "tool 1.0 -Oz", &inputs, &out);

        fs::remove_file(out.join("a_bg.wasm")).unwrap();
        assert_eq!(fresh_now(), None, "deleted");
        write(&out.join("a_bg.wasm"), b"wasm");
        assert!(fresh_now().is_some());

        write(&out.join("extra.js"), b"stale");
        assert_eq!(fresh_now(), None, "added");
        fs::remove_file(out.join("extra.js")).unwrap();

        write(&out.join("a_bg.wasm"), b"WASM"); // same size: only the hash tells
        age(&out.join("a_bg.wasm"));
        assert_eq!(fresh_now(), None, "replaced");

        fs::remove_dir_all(&out).unwrap();
        assert_eq!(fresh_now(), None, "folder gone");
    }

    #[test]
    fn different_inputs_are_stale() {
        let temp = Temp::new("names");
        let (inputs, out, stamp) = step(&temp.0);
        let renamed = vec![("other".to_owned(), inputs[0].1.clone())];
        assert_eq!(fresh(&stamp, "tool 1.0 -Oz", &renamed, &out), None);
        let more = vec![inputs[0].clone(), ("other".to_owned(), inputs[0].1.clone())];
        assert_eq!(fresh(&stamp, "tool 1.0 -Oz", &more, &out), None);
    }

    #[test]
    fn list_files_of_a_missing_folder_is_empty() {
        let temp = Temp::new("missing");
        assert!(list_files(&temp.0.join("nope")).unwrap().is_empty());
    }
}
