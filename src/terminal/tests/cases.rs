//! Runs the behaviour cases shared with the Python suite, read from `tests/cases/terminal/`
//! (the format is described in that directory's `README.md`). A malformed file or case, or a
//! step without an expectation, fails the run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jiter::JsonValue;

use super::all_views;
use crate::terminal::{Color, Span, Terminal, TerminalConfig, render_text};

const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cases/terminal");

/// The bytes of an input string: its text as UTF-8, each `\xHH` the byte `0xHH`.
fn unescape(s: &str, at: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let hex: String = chars.by_ref().take(3).collect();
        let byte = hex
            .strip_prefix('x')
            .filter(|h| h.len() == 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        out.push(byte.unwrap_or_else(|| panic!("{at}: bad escape \\{hex} (only \\xHH)")));
    }
    out
}

fn fields<'a>(v: &'a JsonValue<'a>, at: &str) -> &'a [(std::borrow::Cow<'a, str>, JsonValue<'a>)] {
    match v {
        JsonValue::Object(o) => o,
        _ => panic!("{at}: expected an object"),
    }
}

fn get<'a>(v: &'a JsonValue<'a>, key: &str) -> Option<&'a JsonValue<'a>> {
    match v {
        JsonValue::Object(o) => o.iter().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

fn string<'a>(v: &'a JsonValue<'a>, at: &str) -> &'a str {
    match v {
        JsonValue::Str(s) => s,
        _ => panic!("{at}: expected a string"),
    }
}

fn list<'a>(v: &'a JsonValue<'a>, at: &str) -> &'a [JsonValue<'a>] {
    match v {
        JsonValue::Array(a) => a,
        _ => panic!("{at}: expected a list"),
    }
}

fn int(v: &JsonValue<'_>, at: &str) -> i64 {
    match v {
        JsonValue::Int(n) => *n,
        _ => panic!("{at}: expected an integer"),
    }
}

fn size(v: &JsonValue<'_>, at: &str) -> usize {
    usize::try_from(int(v, at)).unwrap_or_else(|_| panic!("{at}: expected a size"))
}

fn strings(v: &JsonValue<'_>, at: &str) -> Vec<String> {
    list(v, at)
        .iter()
        .map(|s| string(s, at).to_owned())
        .collect()
}

fn config(case: &JsonValue<'_>, at: &str) -> TerminalConfig {
    let mut config = TerminalConfig::default();
    let Some(c) = get(case, "config") else {
        return config;
    };
    for (key, v) in fields(c, at) {
        match &**key {
            "cols" => config.cols = (*v != JsonValue::Null).then(|| size(v, at)),
            "rows" => config.rows = size(v, at),
            "scrollback" => config.scrollback = size(v, at),
            "max_bytes" => config.max_bytes = size(v, at),
            other => panic!("{at}: unknown config key {other:?}"),
        }
    }
    config
}

fn colour(c: Option<Color>) -> String {
    match c {
        None => String::new(),
        Some(Color::Indexed(n)) => n.to_string(),
        Some(Color::Rgb(r, g, b)) => format!("#{r:02x}{g:02x}{b:02x}"),
    }
}

/// A span as `text|fg|bg|flags|link`, the form an expected span is brought to as well.
fn span_key(s: &Span) -> String {
    let st = &s.style;
    let flags = [
        st.bold,
        st.dim,
        st.italic,
        st.underline,
        st.inverse,
        st.strike,
    ]
    .map(|f| if f { '1' } else { '0' });
    format!(
        "{}|{}|{}|{}|{}",
        s.text,
        colour(st.fg),
        colour(st.bg),
        flags.iter().collect::<String>(),
        st.link.as_deref().unwrap_or("")
    )
}

fn expected_span_key(v: &JsonValue<'_>, at: &str) -> String {
    let (mut text, mut fg, mut bg, mut link) = (None, String::new(), String::new(), "");
    let mut flags = ['0'; 6];
    let names = ["bold", "dim", "italic", "underline", "inverse", "strike"];
    for (key, v) in fields(v, at) {
        let col = |v: &JsonValue<'_>| match v {
            JsonValue::Null => String::new(),
            JsonValue::Int(n) => n.to_string(),
            JsonValue::Str(s) if s.len() == 7 && s.starts_with('#') => s.to_string(),
            _ => panic!("{at}: a colour is a palette index or #rrggbb"),
        };
        match &**key {
            "text" => text = Some(string(v, at)),
            "fg" => fg = col(v),
            "bg" => bg = col(v),
            "link" => link = string(v, at),
            flag => {
                let k = names
                    .iter()
                    .position(|n| *n == flag)
                    .unwrap_or_else(|| panic!("{at}: unknown span key {flag:?}"));
                if *v == JsonValue::Bool(true) {
                    flags[k] = '1';
                } else if *v != JsonValue::Bool(false) {
                    panic!("{at}: {flag} is true or false");
                }
            }
        }
    }
    let text = text.unwrap_or_else(|| panic!("{at}: a span has a text"));
    let flags: String = flags.iter().collect();
    format!("{text}|{fg}|{bg}|{flags}|{link}")
}

/// Checks every view `expect` names against `t`.
fn check(t: &Terminal, expect: &JsonValue<'_>, at: &str) {
    let expect = fields(expect, at);
    assert!(!expect.is_empty(), "{at}: no expectation");
    for (key, want) in expect {
        let at = &format!("{at}: {key}");
        match &**key {
            "text" => assert_eq!(t.text(), string(want, at), "{at}"),
            "lines" => assert_eq!(t.lines(), strings(want, at), "{at}"),
            "screen" => {
                let want = (*want != JsonValue::Null).then(|| strings(want, at));
                assert_eq!(t.screen(), want, "{at}");
            }
            "cursor" => {
                let want = (*want != JsonValue::Null).then(|| {
                    let rc = list(want, at);
                    assert_eq!(rc.len(), 2, "{at}: a cursor is [row, col]");
                    (size(&rc[0], at), size(&rc[1], at))
                });
                assert_eq!(t.cursor(), want, "{at}");
            }
            "span_texts" => {
                let got: Vec<Vec<String>> = t
                    .spans()
                    .iter()
                    .map(|row| row.iter().map(|s| s.text.clone()).collect())
                    .collect();
                let want: Vec<Vec<String>> =
                    list(want, at).iter().map(|r| strings(r, at)).collect();
                assert_eq!(got, want, "{at}");
            }
            "spans" => {
                let got: Vec<Vec<String>> = t
                    .spans()
                    .iter()
                    .map(|row| row.iter().map(span_key).collect())
                    .collect();
                let want: Vec<Vec<String>> = list(want, at)
                    .iter()
                    .map(|r| {
                        list(r, at)
                            .iter()
                            .map(|s| expected_span_key(s, at))
                            .collect()
                    })
                    .collect();
                assert_eq!(got, want, "{at}");
            }
            "title" => assert_eq!(t.title(), string(want, at), "{at}"),
            "bell_count" => {
                assert_eq!(
                    i64::try_from(t.bell_count()).ok(),
                    Some(int(want, at)),
                    "{at}"
                );
            }
            other => panic!("{at}: unknown view {other:?}"),
        }
    }
}

/// A step of a case: bytes fed (or a reset to them) and the views expected after them.
struct Step<'a> {
    reset: bool,
    data: Vec<u8>,
    expect: &'a JsonValue<'a>,
}

/// The steps of a case: its `steps`, or the case itself as its one step.
fn steps<'a>(case: &'a JsonValue<'a>, at: &str) -> Vec<Step<'a>> {
    let one = |step: &'a JsonValue<'a>, at: &str| {
        for (key, _) in fields(step, at) {
            assert!(
                matches!(
                    &**key,
                    "name"
                        | "config"
                        | "feed"
                        | "reset"
                        | "expect"
                        | "steps"
                        | "bytewise"
                        | "render_text"
                ),
                "{at}: unknown key {key:?}"
            );
        }
        let (feed, reset) = (get(step, "feed"), get(step, "reset"));
        assert!(
            feed.is_some() != reset.is_some(),
            "{at}: a step has a feed or a reset"
        );
        let expect = get(step, "expect").unwrap_or_else(|| panic!("{at}: no expect"));
        Step {
            reset: reset.is_some(),
            data: unescape(string(feed.or(reset).unwrap_or(&JsonValue::Null), at), at),
            expect,
        }
    };
    match get(case, "steps") {
        Some(s) => {
            let s = list(s, at);
            assert!(!s.is_empty(), "{at}: no steps");
            s.iter()
                .enumerate()
                .map(|(k, step)| one(step, &format!("{at} step {k}")))
                .collect()
        }
        None => vec![one(case, at)],
    }
}

fn flag(case: &JsonValue<'_>, key: &str, at: &str) -> bool {
    match get(case, key) {
        None | Some(JsonValue::Bool(false)) => false,
        Some(JsonValue::Bool(true)) => true,
        Some(_) => panic!("{at}: {key} is true or false"),
    }
}

fn run_case(case: &JsonValue<'_>, at: &str) {
    let config = config(case, at);
    let steps = steps(case, at);
    if flag(case, "render_text", at) {
        assert!(
            get(case, "config").is_none(),
            "{at}: render_text takes no config"
        );
        for step in &steps {
            assert!(!step.reset, "{at}: render_text takes no reset");
            let expect = fields(step.expect, at);
            assert!(
                expect.len() == 1 && expect[0].0 == "text",
                "{at}: render_text expects a text only"
            );
            assert_eq!(render_text(&step.data), string(&expect[0].1, at), "{at}");
        }
        return;
    }
    let mut whole = Terminal::new(config);
    let mut bytewise = flag(case, "bytewise", at).then(|| Terminal::new(config));
    for step in &steps {
        if step.reset {
            whole.reset(&step.data);
        } else {
            whole.feed(&step.data);
        }
        check(&whole, step.expect, at);
        if let Some(t) = &mut bytewise {
            if step.reset {
                t.reset(b"");
            }
            for b in &step.data {
                t.feed(std::slice::from_ref(b));
            }
            let at = &format!("{at} (byte by byte)");
            check(t, step.expect, at);
            assert_eq!(all_views(t), all_views(&whole), "{at}");
        }
    }
}

fn case_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(CASES))
        .unwrap_or_else(|e| panic!("{CASES}: {e}"))
        .map(|e| e.map_or_else(|e| panic!("{CASES}: {e}"), |e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{CASES}: no case files");
    files
}

#[test]
fn shared_cases() {
    let mut summary = String::new();
    for path in case_files() {
        let at = path.display().to_string();
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{at}: {e}"));
        let doc = JsonValue::parse(&bytes, false).unwrap_or_else(|e| panic!("{at}: {e:?}"));
        for (key, _) in fields(&doc, &at) {
            assert!(
                matches!(&**key, "about" | "cases"),
                "{at}: unknown key {key:?}"
            );
        }
        let cases = list(
            get(&doc, "cases").unwrap_or_else(|| panic!("{at}: no cases")),
            &at,
        );
        assert!(!cases.is_empty(), "{at}: no cases");
        let mut names = std::collections::HashSet::new();
        for case in cases {
            let name = string(
                get(case, "name").unwrap_or_else(|| panic!("{at}: a case without a name")),
                &at,
            );
            assert!(names.insert(name), "{at}: two cases named {name:?}");
            run_case(case, &format!("{at}: {name}"));
        }
        let _ = writeln!(summary, "{at}: {} cases", cases.len());
    }
    eprint!("{summary}");
}
