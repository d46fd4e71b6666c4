//! The session behaviour cases kept as data under `tests/cases/session/` (their format is in
//! that folder's `README.md`), run through the public API of [`Sessions`]: each case fed as
//! NDJSON and applied message by message. The Python tests run the same files on both backends
//! (`tests/session/test_session_cases.py`). A malformed case file fails the test.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jiter::JsonValue;

use crate::session::{ErrorRecord, Json, Session, Sessions, SessionsConfig};

type Obj = Vec<(String, Json)>;

fn obj_get<'j>(members: &'j [(String, Json)], key: &str) -> Option<&'j Json> {
    members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

const CASE_KEYS: &[&str] = &[
    "name", "about", "config", "version", "session", "via", "steps",
];
const STEP_KEYS: &[&str] = &[
    "frames",
    "unterminated",
    "finish",
    "session",
    "snapshot",
    "snapshots",
    "absent",
    "texts",
    "message_count",
    "state",
    "stop_reason",
    "terminals",
    "no_terminals",
    "errors",
    "session_errors",
    "changes",
    "take_changes",
    "same_as",
    "protocol_version",
    "ids",
    "evicted_sessions",
];
const CONFIG_KEYS: &[&str] = &[
    "max_frame_bytes",
    "terminal_cols",
    "scrollback",
    "max_terminal_bytes",
    "max_bytes",
    "max_payload_bytes",
    "max_message_bytes",
];
const ERROR_KEYS: &[&str] = &["reason", "line", "offset", "sessionId"];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Feed,
    Apply,
}

impl Mode {
    fn parse(name: &str) -> Option<Mode> {
        match name {
            "feed" => Some(Mode::Feed),
            "apply" => Some(Mode::Apply),
            _ => None,
        }
    }
}

/// Where a case comes from, for the messages of a malformed file or a failed check.
struct At<'a> {
    file: &'a str,
    case: &'a str,
}

impl At<'_> {
    fn malformed(&self, what: &str) -> ! {
        panic!("{} {}: malformed case: {what}", self.file, self.case)
    }
}

fn object<'j>(value: &'j Json, at: &At<'_>, what: &str) -> &'j Obj {
    match value {
        Json::Object(members) => members,
        _ => at.malformed(&format!("{what} must be an object")),
    }
}

fn array<'j>(value: &'j Json, at: &At<'_>, what: &str) -> &'j [Json] {
    match value {
        Json::Array(items) => items,
        _ => at.malformed(&format!("{what} must be an array")),
    }
}

fn string<'j>(value: &'j Json, at: &At<'_>, what: &str) -> &'j str {
    match value {
        Json::Str(s) => s,
        _ => at.malformed(&format!("{what} must be a string")),
    }
}

fn count(value: &Json, at: &At<'_>, what: &str) -> usize {
    match value {
        Json::Int(n) => usize::try_from(*n).unwrap_or_else(|_| at.malformed(what)),
        _ => at.malformed(&format!("{what} must be a count")),
    }
}

fn only_keys(members: &Obj, allowed: &[&str], at: &At<'_>, what: &str) {
    for (key, _) in members {
        if !allowed.contains(&key.as_str()) {
            at.malformed(&format!("{what}: unknown key {key}"));
        }
    }
}

fn is_true(members: &Obj, key: &str) -> bool {
    matches!(obj_get(members, key), Some(Json::Bool(true)))
}

/// A frame's line: as written when it is text, else the message as compact JSON text.
fn line(frame: &Json) -> Vec<u8> {
    match frame {
        Json::Str(text) => text.as_bytes().to_vec(),
        other => other.to_json_string().into_bytes(),
    }
}

fn reduce(store: &mut Sessions, frames: &[Json], mode: Mode, unterminated: bool, at: &At<'_>) {
    for (i, frame) in frames.iter().enumerate() {
        if !matches!(frame, Json::Str(_) | Json::Object(_) | Json::Array(_)) {
            at.malformed("a frame must be a message");
        }
        let text = line(frame);
        match mode {
            Mode::Feed => {
                store.feed(&text);
                if !(unterminated && i + 1 == frames.len()) {
                    store.feed(b"\n");
                }
            }
            Mode::Apply => {
                let value = super::value::parse(&text)
                    .unwrap_or_else(|| at.malformed("an applied frame must be JSON"));
                store.apply(&value);
            }
        }
    }
}

fn init(version: i64) -> [Json; 2] {
    let text = format!(
        r#"[{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":{version}}}}},{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":{version}}}}}]"#
    );
    let Json::Array(lines) = parse(text.as_bytes()).expect("initialize is JSON") else {
        unreachable!("an array")
    };
    lines.try_into().expect("two messages")
}

fn new_store(case: &Obj, version: Option<&Json>, mode: Mode, at: &At<'_>) -> Sessions {
    let mut config = SessionsConfig::default();
    if let Some(given) = obj_get(case, "config") {
        let given = object(given, at, "config");
        only_keys(given, CONFIG_KEYS, at, "config");
        for (key, value) in given {
            match (key.as_str(), value) {
                ("terminal_cols", Json::Null) => config.terminal_cols = None,
                ("terminal_cols", n) => config.terminal_cols = Some(count(n, at, key)),
                ("max_frame_bytes", n) => config.max_frame_bytes = count(n, at, key),
                ("scrollback", n) => config.scrollback = count(n, at, key),
                ("max_terminal_bytes", n) => config.max_terminal_bytes = count(n, at, key),
                (bound, n) => {
                    let n = match n {
                        Json::Null => None,
                        n => Some(count(n, at, key)),
                    };
                    match bound {
                        "max_bytes" => config.max_bytes = n,
                        "max_payload_bytes" => config.max_payload_bytes = n,
                        _ => config.max_message_bytes = n,
                    }
                }
            }
        }
    }
    let mut store = Sessions::new(config);
    match version {
        None | Some(Json::Null) => {}
        Some(Json::Int(v @ (1 | 2))) => reduce(&mut store, &init(*v), mode, false, at),
        Some(_) => at.malformed("version must be 1 or 2"),
    }
    store
}

/// The part of `value` at `path` (keys and indexes joined by `/`; empty for all of it).
fn part<'j>(value: &'j Json, path: &str) -> Option<&'j Json> {
    let mut cur = value;
    for key in path.split('/').filter(|_| !path.is_empty()) {
        cur = match cur {
            Json::Object(members) => obj_get(members, key)?,
            Json::Array(items) => items.get(key.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Compare records with the expected ones on the keys each of those names; applied messages
/// have no stream position.
fn match_errors(
    records: &[Json],
    expected: &[Json],
    mode: Mode,
    at: &At<'_>,
) -> Result<(), String> {
    if records.len() != expected.len() {
        return Err(format!(
            "{} error records, not {}: {records:?}",
            records.len(),
            expected.len()
        ));
    }
    for (record, want) in records.iter().zip(expected) {
        let want = object(want, at, "an error record");
        only_keys(want, ERROR_KEYS, at, "an error record");
        if obj_get(want, "reason").is_none() {
            at.malformed("an error record needs a reason");
        }
        for (key, value) in want {
            let value = if mode == Mode::Apply && (key == "line" || key == "offset") {
                &Json::Null
            } else {
                value
            };
            let got = part(record, key);
            if got != Some(value) {
                return Err(format!("error record {record:?}: {key} is not {value:?}"));
            }
        }
    }
    Ok(())
}

fn expect_eq(got: &Json, want: &Json, what: &str) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: {got:?} is not {want:?}"))
    }
}

fn run_step(
    store: &mut Sessions,
    case: &Obj,
    step: &Obj,
    mode: Mode,
    at: &At<'_>,
) -> Result<(), String> {
    only_keys(step, STEP_KEYS, at, "a step");
    let no_frames = Json::Array(Vec::new());
    let frames = array(obj_get(step, "frames").unwrap_or(&no_frames), at, "frames");
    reduce(store, frames, mode, is_true(step, "unterminated"), at);
    if is_true(step, "finish") {
        store.finish();
    }
    let default_sid = Json::from("s1");
    let sid = string(
        obj_get(step, "session")
            .or_else(|| obj_get(case, "session"))
            .unwrap_or(&default_sid),
        at,
        "session",
    );
    check_snapshots(store, step, sid, at)?;
    check_session(store.get(sid).ok_or(sid), step, at)?;
    if let Some(want) = obj_get(step, "protocol_version") {
        expect_eq(
            &store.protocol_version().map_or(Json::Null, Json::Int),
            want,
            "protocol_version",
        )?;
    }
    if let Some(want) = obj_get(step, "ids") {
        let ids = Json::Array(store.ids().into_iter().map(Json::from).collect());
        expect_eq(&ids, want, "ids")?;
    }
    if let Some(want) = obj_get(step, "evicted_sessions") {
        expect_eq(
            &Json::from(store.evicted_sessions()),
            want,
            "evicted_sessions",
        )?;
    }
    check_records(store, step, sid, mode, at)?;
    if let Some(reference) = obj_get(step, "same_as") {
        check_same_as(store, case, reference, sid, mode, at)?;
    }
    Ok(())
}

/// The `snapshot` (of the step's session) and `snapshots` (by session) parts, and the
/// `absent` paths.
fn check_snapshots(store: &Sessions, step: &Obj, sid: &str, at: &At<'_>) -> Result<(), String> {
    let mut snapshots: Vec<(&str, &Json)> = Vec::new();
    if let Some(by_session) = obj_get(step, "snapshots") {
        for (session_id, parts) in object(by_session, at, "snapshots") {
            snapshots.push((session_id, parts));
        }
    }
    if let Some(parts) = obj_get(step, "snapshot") {
        snapshots.push((sid, parts));
    }
    for (session_id, parts) in snapshots {
        let session = store
            .get(session_id)
            .ok_or_else(|| format!("no session {session_id}"))?;
        let snapshot = session.snapshot();
        for (path, want) in object(parts, at, "snapshot") {
            let got = part(&snapshot, path).ok_or_else(|| format!("{session_id}: no {path}"))?;
            expect_eq(got, want, &format!("{session_id} {path}"))?;
        }
    }
    if let Some(paths) = obj_get(step, "absent") {
        let session = store.get(sid).ok_or_else(|| format!("no session {sid}"))?;
        let snapshot = session.snapshot();
        for path in array(paths, at, "absent") {
            let path = string(path, at, "a path");
            if part(&snapshot, path).is_some() {
                return Err(format!("{path} is present"));
            }
        }
    }
    Ok(())
}

/// What the step's session answers: message texts and count, state, stop reason, terminals.
fn check_session(session: Result<&Session, &str>, step: &Obj, at: &At<'_>) -> Result<(), String> {
    let session = || session.map_err(|sid| format!("no session {sid}"));
    if let Some(texts) = obj_get(step, "texts") {
        for entry in array(texts, at, "texts") {
            let [id, role, want] = array(entry, at, "a text") else {
                at.malformed("a text is [id, role, text]")
            };
            let got = session()?
                .message_text(string(id, at, "an id"), string(role, at, "a role"))
                .map_or(Json::Null, Json::from);
            expect_eq(&got, want, &format!("message_text({id:?}, {role:?})"))?;
        }
    }
    if let Some(want) = obj_get(step, "message_count") {
        let got = session()?.message_count();
        if got != count(want, at, "message_count") {
            return Err(format!("{got} messages, not {want:?}"));
        }
    }
    if let Some(want) = obj_get(step, "state") {
        let got = session()?.state().map_or(Json::Null, Json::from);
        expect_eq(&got, want, "state")?;
    }
    if let Some(want) = obj_get(step, "stop_reason") {
        let got = session()?.stop_reason().map_or(Json::Null, Json::from);
        expect_eq(&got, want, "stop_reason")?;
    }
    if let Some(terminals) = obj_get(step, "terminals") {
        for (terminal_id, want) in object(terminals, at, "terminals") {
            let handle = session()?
                .terminal(terminal_id)
                .ok_or_else(|| format!("no terminal {terminal_id}"))?;
            let terminal = handle.lock().expect("terminal lock");
            let want = object(want, at, "a terminal");
            if let Some(text) = obj_get(want, "text") {
                expect_eq(&Json::from(terminal.text()), text, terminal_id)?;
            }
            if let Some(truncated) = obj_get(want, "truncated") {
                expect_eq(&Json::from(terminal.truncated()), truncated, terminal_id)?;
            }
        }
    }
    if let Some(ids) = obj_get(step, "no_terminals") {
        for terminal_id in array(ids, at, "no_terminals") {
            let terminal_id = string(terminal_id, at, "a terminal id");
            if session()?.terminal(terminal_id).is_some() {
                return Err(format!("terminal {terminal_id} is there"));
            }
        }
    }
    Ok(())
}

/// The session's error records (`session_errors`), then the store's, taken (`errors`), then
/// the changes, taken (`changes`, or `take_changes` to drop them).
fn check_records(
    store: &mut Sessions,
    step: &Obj,
    sid: &str,
    mode: Mode,
    at: &At<'_>,
) -> Result<(), String> {
    if let Some(want) = obj_get(step, "session_errors") {
        let session = store.get(sid).ok_or_else(|| format!("no session {sid}"))?;
        let snapshot = session.snapshot();
        let records = part(&snapshot, "errors").ok_or("no errors in the snapshot")?;
        match_errors(
            array(records, at, "errors"),
            array(want, at, "session_errors"),
            mode,
            at,
        )
        .map_err(|e| format!("session errors: {e}"))?;
    }
    if let Some(want) = obj_get(step, "errors") {
        let records: Vec<Json> = store
            .take_errors()
            .iter()
            .map(ErrorRecord::to_json)
            .collect();
        match_errors(&records, array(want, at, "errors"), mode, at)?;
    }
    if let Some(want) = obj_get(step, "changes") {
        let got: Vec<Json> = store
            .take_changes()
            .into_iter()
            .map(|(session_id, kind, id)| {
                Json::Array(vec![(&*session_id).into(), kind.into(), (&*id).into()])
            })
            .collect();
        expect_eq(&Json::Array(got), want, "changes")?;
    } else if is_true(step, "take_changes") {
        store.take_changes();
    }
    Ok(())
}

/// The session's snapshot, errors left out, is that of a store given the reference frames,
/// which make no error record.
fn check_same_as(
    store: &Sessions,
    case: &Obj,
    reference: &Json,
    sid: &str,
    mode: Mode,
    at: &At<'_>,
) -> Result<(), String> {
    let reference = object(reference, at, "same_as");
    only_keys(reference, &["version", "frames"], at, "same_as");
    let mut other = new_store(case, obj_get(reference, "version"), mode, at);
    let no_frames = Json::Array(Vec::new());
    let frames = array(
        obj_get(reference, "frames").unwrap_or(&no_frames),
        at,
        "frames",
    );
    reduce(&mut other, frames, mode, false, at);
    let errors = other.take_errors();
    if !errors.is_empty() {
        return Err(format!("the reference has errors: {errors:?}"));
    }
    let without_errors = |store: &Sessions| {
        store.get(sid).map(|session| {
            let Json::Object(mut members) = session.snapshot() else {
                unreachable!("a snapshot is an object")
            };
            members.retain(|(key, _)| key != "errors");
            Json::Object(members)
        })
    };
    if without_errors(store) != without_errors(&other) {
        return Err(format!(
            "snapshot {:?} is not the reference's {:?}",
            without_errors(store),
            without_errors(&other)
        ));
    }
    Ok(())
}

fn parse(text: &[u8]) -> Option<Json> {
    JsonValue::parse(text, false)
        .ok()
        .map(|value| Json::from_jiter(&value))
}

fn case_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases/session");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no case files in {}", dir.display());
    files
}

#[test]
fn shared_session_cases() {
    let mut failures = String::new();
    let mut ran = 0;
    for path in case_files() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let data = parse(&text).unwrap_or_else(|| panic!("{file}: not JSON"));
        let file_at = At {
            file: &file,
            case: "",
        };
        let top = object(&data, &file_at, "the file");
        only_keys(top, &["about", "cases"], &file_at, "the file");
        let cases = array(
            obj_get(top, "cases").unwrap_or_else(|| file_at.malformed("no cases")),
            &file_at,
            "cases",
        );
        let mut names = Vec::new();
        for case in cases {
            let case = object(case, &file_at, "a case");
            let name = string(
                obj_get(case, "name").unwrap_or_else(|| file_at.malformed("a case needs a name")),
                &file_at,
                "name",
            );
            let at = At {
                file: &file,
                case: name,
            };
            if names.contains(&name) {
                at.malformed("the name is taken");
            }
            names.push(name);
            only_keys(case, CASE_KEYS, &at, "a case");
            let both = [Json::from("feed"), Json::from("apply")];
            let via = obj_get(case, "via").map_or(&both[..], |v| array(v, &at, "via"));
            let steps = array(
                obj_get(case, "steps").unwrap_or_else(|| at.malformed("no steps")),
                &at,
                "steps",
            );
            if steps.is_empty() || via.is_empty() {
                at.malformed("steps and via must not be empty");
            }
            for mode in via {
                let mode = Mode::parse(string(mode, &at, "a mode"))
                    .unwrap_or_else(|| at.malformed("a mode is feed or apply"));
                let mut store = new_store(case, obj_get(case, "version"), mode, &at);
                for (i, step) in steps.iter().enumerate() {
                    let step = object(step, &at, "a step");
                    if let Err(failure) = run_step(&mut store, case, step, mode, &at) {
                        let _ = writeln!(failures, "{file} {name} ({mode:?}) step {i}: {failure}");
                        break;
                    }
                }
                ran += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{failures}");
    assert!(ran > 0);
}
