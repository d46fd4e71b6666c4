//! Unit tests of the session reducer.

use super::json::{obj_get, obj_remove, obj_set};
use super::tables::{AGENT_METHODS, CLIENT_METHODS};
use super::*;
use crate::terminal::decode_base64;

const SID: &str = "s1";

fn upd(update: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{SID}","update":{update}}}}}"#
    )
}

fn init(version: u32) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":{version}}}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{{\"protocolVersion\":{version}}}}}\n"
    )
}

fn store(version: Option<u32>, lines: &[String]) -> Sessions {
    let mut s = Sessions::default();
    if let Some(v) = version {
        s.feed(init(v).as_bytes());
    }
    for line in lines {
        s.feed(line.as_bytes());
        s.feed(b"\n");
    }
    s
}

fn get<'a>(o: &'a Json, path: &[&str]) -> &'a Json {
    let mut cur = o;
    for key in path {
        cur = match cur {
            Json::Object(m) => obj_get(m, key).unwrap_or_else(|| panic!("no {key} in {cur:?}")),
            Json::Array(items) => &items[key.parse::<usize>().unwrap()],
            _ => panic!("not a container at {key}"),
        };
    }
    cur
}

fn parse(text: &str) -> Json {
    Json::from_value(&JsonValue::parse(text.as_bytes(), false).unwrap())
}

#[test]
fn seed_sequence_upsert_chunk_upsert() {
    let mut s = store(
        Some(2),
        &[
            upd(
                r#"{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text","text":"A"}]}"#,
            ),
            upd(
                r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"B"}}"#,
            ),
        ],
    );
    let session = s.get(SID).unwrap();
    assert_eq!(session.message_text("m", "agent").as_deref(), Some("AB"));
    s.feed(upd(r#"{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text","text":"C"}]}"#).as_bytes());
    s.feed(b"\n");
    s.feed(upd(r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"D"}}"#).as_bytes());
    s.finish();
    let snap = s.get(SID).unwrap().snapshot();
    assert_eq!(
        get(&snap, &["messages", "0"]),
        &parse(
            r#"{"id":"m","role":"agent","content":[{"type":"text","text":"C"},{"type":"text","text":"D"}]}"#
        )
    );
    assert!(s.errors().next().is_none());
}

#[test]
fn v1_anonymous_chunks_join_until_role_changes() {
    let chunk = |kind: &str, t: &str| {
        upd(&format!(
            r#"{{"sessionUpdate":"{kind}","content":{{"type":"text","text":"{t}"}}}}"#
        ))
    };
    let s = store(
        Some(1),
        &[
            chunk("agent_message_chunk", "a"),
            chunk("agent_message_chunk", "b"),
            chunk("agent_thought_chunk", "t"),
            chunk("agent_message_chunk", "c"),
        ],
    );
    let session = s.get(SID).unwrap();
    assert_eq!(session.message_text("~1", "agent").as_deref(), Some("ab"));
    assert_eq!(session.message_text("~2", "thought").as_deref(), Some("t"));
    assert_eq!(session.message_text("~3", "agent").as_deref(), Some("c"));
    assert_eq!(session.message_count(), 3);
    // v2 requires the id.
    let mut v2 = store(Some(2), &[chunk("agent_message_chunk", "a")]);
    let errors = v2.take_errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].reason,
        "agent_message_chunk: messageId must be a string"
    );
    assert_eq!(errors[0].line, Some(3));
}

/// Every frame reduced by the hot path must give what the general path (`apply`) gives.
#[test]
fn hot_path_equals_general_path() {
    let lines = [
        upd(r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"plain"}}"#),
        upd(r#"{"messageId":"m","content":{"type":"text","text":"esc \"q\" \\ \n \u00e9 \ud83d\ude00"},"sessionUpdate":"agent_message_chunk"}"#),
        upd(r#"{"sessionUpdate":"agent_thought_chunk","messageId":"m","content":{"type":"text","text":"t"}}"#),
        upd(r#"{"sessionUpdate":"user_message_chunk","messageId":"u","content":{"text":"rev","type":"text"}}"#),
        upd(r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","messageId":"n","content":{"type":"text","text":"dup"}}"#),
        upd(r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x","annotations":null}}"#),
        upd(r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"image","text":"x"}}"#),
        upd(r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"m"},"_meta":{"a":1}}"#),
        r#"{"params":{"update":{"content":{"type":"text","text":"order"},"messageId":"m","sessionUpdate":"agent_message_chunk"},"sessionId":"s2"},"method":"session/update"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"id"}}},"id":3}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"trail"}}}} x"#.to_owned(),
    ];
    let mut fed = Sessions::default();
    let mut applied = Sessions::default();
    for line in &lines {
        fed.feed(line.as_bytes());
        fed.feed(b"\n");
        if let Ok(value) = JsonValue::parse(line.as_bytes(), false) {
            applied.apply(&value);
        }
    }
    assert_eq!(fed.ids(), applied.ids());
    for id in fed.ids() {
        assert_eq!(
            fed.get(&id).unwrap().snapshot(),
            applied.get(&id).unwrap().snapshot()
        );
    }
    assert_eq!(fed.take_changes(), applied.take_changes());
    // Only the line with trailing data is an error.
    let errors: Vec<_> = fed.errors().map(|e| (e.line, e.reason.clone())).collect();
    assert_eq!(
        errors,
        vec![(Some(11), "trailing data after JSON value".to_owned())]
    );
    let text = fed.get(SID).unwrap().message_text("m", "agent").unwrap();
    assert!(text.starts_with("plainesc \"q\" \\ \n é 😀"), "{text}");
}

#[test]
fn patch_null_vs_omitted_v2_and_v1() {
    let first = upd(
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"T","kind":"read","rawInput":{"a":1},"locations":[{"path":"/a"}]}"#,
    );
    let clear = upd(
        r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","title":null,"rawInput":null,"locations":[]}"#,
    );
    let v2 = store(Some(2), &[first.clone(), clear.clone()]);
    assert_eq!(
        get(&v2.get(SID).unwrap().snapshot(), &["toolCalls", "c"]),
        &parse(r#"{"toolCallId":"c","kind":"read"}"#)
    );
    let v1 = store(Some(1), &[first, clear]);
    assert_eq!(
        get(&v1.get(SID).unwrap().snapshot(), &["toolCalls", "c"]),
        &parse(r#"{"toolCallId":"c","title":"T","kind":"read","rawInput":{"a":1}}"#)
    );
}

#[test]
fn terminal_snapshot_chunks_and_shared_handle() {
    let s = store(
        Some(2),
        &[
            upd(r#"{"sessionUpdate":"terminal_output_chunk","terminalId":"t","data":"b2xk"}"#),
            upd(
                r#"{"sessionUpdate":"terminal_update","terminalId":"t","command":"ls","output":{"data":"cnVubmluZyB0ZXN0cw0K"}}"#,
            ),
            upd(
                r#"{"sessionUpdate":"terminal_output_chunk","terminalId":"t","data":"cGFzc2VkDQo="}"#,
            ),
            upd(r#"{"sessionUpdate":"terminal_output_chunk","terminalId":"t","data":"!!!!"}"#),
            upd(r#"{"sessionUpdate":"terminal_output_chunk","terminalId":"u","data":"abc"}"#),
        ],
    );
    let session = s.get(SID).unwrap();
    let handle = session.terminal("t").unwrap();
    assert_eq!(handle.lock().unwrap().text(), "running tests\npassed");
    let snap = session.snapshot();
    assert_eq!(
        get(&snap, &["terminals", "t", "command"]),
        &Json::from("ls")
    );
    assert_eq!(get(&snap, &["terminals", "t", "bytes"]), &Json::Int(23));
    assert!(
        session.terminal("u").is_none(),
        "an invalid first chunk creates nothing"
    );
    let reasons: Vec<_> = s.errors().map(|e| e.reason.as_str()).collect();
    assert_eq!(
        reasons,
        ["terminal_output_chunk: data is not valid base64"; 2]
    );
}

#[test]
fn responses_match_the_other_side() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s1","options":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"cancelled"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#,
    ]
    .map(str::to_owned);
    let s = store(Some(1), &lines);
    let session = s.get(SID).unwrap();
    let snap = session.snapshot();
    assert_eq!(
        get(
            &snap,
            &["permissions", "0", "response", "outcome", "outcome"]
        ),
        &Json::from("cancelled")
    );
    assert_eq!(
        get(&snap, &["prompts", "0", "response", "stopReason"]),
        &Json::from("end_turn")
    );
    assert_eq!(
        (session.state(), session.stop_reason()),
        (Some("idle"), Some("end_turn"))
    );
}

#[test]
fn changes_are_deduplicated_in_order() {
    let mut s = store(
        None,
        &[
            upd(
                r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"a"}}"#,
            ),
            upd(r#"{"sessionUpdate":"tool_call_update","toolCallId":"c"}"#),
            upd(
                r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"b"}}"#,
            ),
            upd(r#"{"sessionUpdate":"_x"}"#),
        ],
    );
    let changes = s.take_changes();
    let got: Vec<(&str, &str)> = changes.iter().map(|(_, k, i)| (*k, i.as_str())).collect();
    assert_eq!(
        got,
        [
            ("session", "sessionId"),
            ("message", "m"),
            ("toolCall", "c"),
            ("other", "0")
        ]
    );
    assert!(s.take_changes().is_empty());
}

#[test]
fn million_chunk_appends_stay_in_place() {
    let line = upd(
        r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"ab"}}"#,
    ) + "\n";
    let block = line.repeat(10_000);
    let mut s = Sessions::default();
    let mut frames = 0;
    for _ in 0..100 {
        frames += s.feed(block.as_bytes());
    }
    assert_eq!(frames, 1_000_000);
    let session = s.get(SID).unwrap();
    assert_eq!(
        session.message_text("m", "agent").map(|t| t.len()),
        Some(2_000_000)
    );
    assert_eq!(s.take_changes().len(), 2);
}

#[test]
fn errors_and_pending_are_bounded() {
    let mut s = Sessions::default();
    let bad = "{\n".repeat(MAX_ERRORS + 5);
    s.feed(bad.as_bytes());
    assert_eq!(s.errors().count(), MAX_ERRORS);
    assert_eq!(s.errors_dropped(), 5);
    assert_eq!(s.errors().next().unwrap().line, Some(6));
    for i in 0..(MAX_PENDING + 100) {
        s.feed(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"fs/read_text_file\"}}\n")
                .as_bytes(),
        );
        s.feed(format!("{{\"jsonrpc\":\"2.0\",\"id\":\"x{i}\",\"result\":null}}\n").as_bytes());
    }
    assert_eq!(s.r.pending.map.len(), MAX_PENDING);
    assert!(s.r.pending.order.len() <= 2 * MAX_PENDING + 64);
    // The oldest were forgotten, the newest are still matched.
    assert!(s.r.pending.expects(Side::Agent, "i0").is_none());
    assert!(
        s.r.pending
            .expects(Side::Agent, &format!("i{}", MAX_PENDING + 99))
            .is_some()
    );
    let notices: String = (0..150)
        .map(|i| {
            upd(&format!(
                r#"{{"sessionUpdate":"notice","severity":"info","title":"n{i}"}}"#
            )) + "\n"
        })
        .collect();
    s.feed(notices.as_bytes());
    assert_eq!(s.get(SID).unwrap().notices.len(), MAX_NOTICES);
}

#[test]
fn malformed_known_variant_changes_nothing() {
    let good =
        upd(r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[]}}"#);
    let mut s = store(Some(2), &[good]);
    let before = s.get(SID).unwrap().snapshot();
    s.feed((upd(r#"{"sessionUpdate":"plan_update","plan":{"type":"items"}}"#) + "\n").as_bytes());
    let Json::Object(mut after) = s.get(SID).unwrap().snapshot() else {
        unreachable!()
    };
    let errors = obj_get(&after, "errors").unwrap().clone();
    let offset = init(2).len()
        + upd(
            r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[]}}"#,
        )
        .len()
        + 1;
    let expected = format!(
        r#"[{{"line":4,"offset":{offset},"sessionId":"s1","reason":"plan_update: plan.planId must be a string"}}]"#
    );
    assert_eq!(errors, parse(&expected));
    obj_set(&mut after, "errors", Json::Array(Vec::new()));
    assert_eq!(Json::Object(after), before);
}

#[test]
fn json_text_round_trips() {
    let text =
        r#"{"a":[1,-2,3.5,1e300,null,true,false,"q\"\\\n\u0001é"],"b":{"c":18446744073709551616}}"#;
    let value = parse(text);
    assert_eq!(parse(&value.to_json_string()), value);
    assert_eq!(
        get(&value, &["b", "c"]),
        &Json::BigInt("18446744073709551616".into())
    );
}

/// A hot-shape frame with the given update members (raw JSON text, in order).
fn chunk_frame(members: &[&str]) -> String {
    upd(&format!("{{{}}}", members.join(",")))
}

const KIND: &str = r#""sessionUpdate":"agent_message_chunk""#;
const MID: &str = r#""messageId":"m""#;

fn content(text_json: &str) -> String {
    format!(r#""content":{{"type":"text","text":{text_json}}}"#)
}

/// What the scanner makes of `line`. When it takes the line, reduce it after `preamble` twice,
/// through `feed` (the hot path) and through `apply` (always the general path), and require
/// the same sessions, changes and errors. (A line it declines takes the general path in both.)
fn fast_vs_general(preamble: &[String], line: &[u8]) -> Option<(Role, String, String, String)> {
    let mut decoded = String::new();
    let scanned = scan::text_chunk(line, &mut decoded).map(|c| {
        (
            c.role,
            c.session_id.to_owned(),
            c.message_id.to_owned(),
            c.text.to_owned(),
        )
    });
    scanned.as_ref()?;
    fed_equals_applied(preamble, line);
    scanned
}

/// A snapshot with its error records' line and offset cleared: `apply` has no stream position.
fn without_positions(mut snapshot: Json) -> Json {
    if let Json::Object(members) = &mut snapshot {
        for (key, value) in members.iter_mut() {
            if let (true, Json::Array(errors)) = (key == "errors", value) {
                for error in errors.iter_mut() {
                    if let Json::Object(fields) = error {
                        fields.retain(|(k, _)| k != "line" && k != "offset");
                    }
                }
            }
        }
    }
    snapshot
}

/// Reduce `line` after `preamble` twice, through `feed` (where the hot paths apply) and through
/// `apply` (always the general path), and require the same sessions, changes and errors.
fn fed_equals_applied(preamble: &[String], line: &[u8]) {
    let Ok(value) = JsonValue::parse(line, false) else {
        panic!("accepted invalid JSON {line:?}");
    };
    let mut fed = store(None, preamble);
    let mut applied = store(None, preamble);
    fed.take_changes();
    applied.take_changes();
    fed.feed(line);
    fed.feed(b"\n");
    applied.apply(&value);
    let context = String::from_utf8_lossy(line);
    assert_eq!(fed.ids(), applied.ids(), "{context}");
    for id in fed.ids() {
        assert_eq!(
            without_positions(fed.get(&id).unwrap().snapshot()),
            without_positions(applied.get(&id).unwrap().snapshot()),
            "{context}"
        );
    }
    assert_eq!(fed.take_changes(), applied.take_changes(), "{context}");
    let reasons = |s: &Sessions| s.errors().map(|e| e.reason.clone()).collect::<Vec<_>>();
    assert_eq!(reasons(&fed), reasons(&applied), "{context}");
}

fn preambles() -> Vec<Vec<String>> {
    let earlier = chunk_frame(&[KIND, MID, &content(r#""before ""#)]);
    vec![
        Vec::new(),
        vec![init(1)],
        vec![init(2), earlier.clone()],
        // An earlier message of another role with the same id, and another session.
        vec![
            chunk_frame(&[
                r#""sessionUpdate":"agent_thought_chunk""#,
                MID,
                &content(r#""t""#),
            ]),
            earlier.replace(SID, "s0"),
        ],
    ]
}

#[test]
fn scanner_accepts_the_hot_shape_in_any_layout() {
    let plain = content(r#""plain text""#);
    let accepted: Vec<(String, &str)> = vec![
        (chunk_frame(&[KIND, MID, &plain]), "plain text"),
        (chunk_frame(&[&plain, KIND, MID]), "plain text"),
        (chunk_frame(&[MID, &plain, KIND]), "plain text"),
        (
            r#"{"params":{"update":{"content":{"type":"text","text":"x"},"messageId":"m","sessionUpdate":"agent_message_chunk"},"sessionId":"s1"},"method":"session/update"}"#.to_owned(),
            "x",
        ),
        (
            r#"{"method":"session/update","jsonrpc":"1.0","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
            "x",
        ),
        (
            " \t{ \"jsonrpc\" : \"2.0\" ,\r\r\"method\"\t:\"session/update\", \"params\" : { \"sessionId\" : \"s1\" , \"update\" : { \"sessionUpdate\" : \"agent_message_chunk\" , \"messageId\" : \"m\" , \"content\" : { \"type\" : \"text\" , \"text\" : \"ws\" } } } } \r\t ".to_owned(),
            "ws",
        ),
        (chunk_frame(&[KIND, MID, &content(r#""""#)]), ""),
        (
            chunk_frame(&[KIND, MID, &content("\"— 日本語 café ✓ 😀\"")]),
            "— 日本語 café ✓ 😀",
        ),
        (
            chunk_frame(&[
                KIND,
                MID,
                &content(r#""a\nb \"q\" \\ \/ \b\f\r\t \u00e9\u00E9 \u0000 \ud83d\ude00 \uD83D\uDE00 end""#),
            ]),
            "a\nb \"q\" \\ / \u{8}\u{c}\r\t éé \0 😀 😀 end",
        ),
        (chunk_frame(&[KIND, MID, &content(r#""\n""#)]), "\n"),
        (
            chunk_frame(&[KIND, MID, &content(r#""long é line of text\n with an escape past the first sixteen bytes""#)]),
            "long é line of text\n with an escape past the first sixteen bytes",
        ),
        (
            chunk_frame(&[r#""sessionUpdate":"user_message_chunk""#, MID, &plain]),
            "plain text",
        ),
        (
            chunk_frame(&[r#""sessionUpdate":"agent_thought_chunk""#, MID, &plain]),
            "plain text",
        ),
        (
            chunk_frame(&[KIND, r#""messageId":"ünïcode id""#, &plain]),
            "plain text",
        ),
    ];
    for preamble in preambles() {
        for (line, text) in &accepted {
            let scanned = fast_vs_general(&preamble, line.as_bytes());
            let (_, sid, _, got) = scanned.unwrap_or_else(|| panic!("declined {line}"));
            assert_eq!((sid.as_str(), got.as_str()), (SID, *text), "{line}");
        }
    }
    // A frame holds no newline, but the scanner takes it as the whitespace it is.
    let mut decoded = String::new();
    let spaced = chunk_frame(&[KIND, MID, &plain]).replace(',', "\n,\n");
    assert!(scan::text_chunk(spaced.as_bytes(), &mut decoded).is_some());
    let roles: Vec<Role> = accepted
        .iter()
        .filter_map(|(line, _)| fast_vs_general(&[], line.as_bytes()).map(|c| c.0))
        .collect();
    assert!(roles.contains(&Role::User) && roles.contains(&Role::Thought));
}

#[test]
fn scanner_declines_everything_else() {
    let plain = content(r#""x""#);
    let mut declined: Vec<String> = vec![
        // Repeated keys, at every level.
        chunk_frame(&[KIND, MID, MID, &plain]),
        chunk_frame(&[KIND, KIND, MID, &plain]),
        chunk_frame(&[KIND, MID, &plain, &plain]),
        chunk_frame(&[KIND, MID, r#""content":{"type":"text","type":"text","text":"x"}"#]),
        r#"{"method":"session/update","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        r#"{"method":"session/update","params":{"sessionId":"s1","sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        // Other keys, at every level.
        chunk_frame(&[KIND, MID, &plain, r#""_meta":{}"#]),
        chunk_frame(&[KIND, MID, r#""content":{"type":"text","text":"x","annotations":null}"#]),
        chunk_frame(&[KIND, MID, r#""content":{"text":"x","type":"text"}"#]),
        chunk_frame(&[KIND, MID, r#""content":{"type":"image","text":"x"}"#]),
        chunk_frame(&[KIND, &plain]),
        chunk_frame(&[MID, &plain]),
        chunk_frame(&[KIND, MID]),
        r#"{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","_meta":null,"update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"session/update"}"#.to_owned(),
        "{}".to_owned(),
        // Other variants and types.
        chunk_frame(&[r#""sessionUpdate":"session_message_chunk""#, MID, &plain]),
        chunk_frame(&[r#""sessionUpdate":"agent_message""#, MID, &plain]),
        chunk_frame(&[KIND, r#""messageId":7"#, &plain]),
        chunk_frame(&[KIND, r#""messageId":null"#, &plain]),
        chunk_frame(&[KIND, MID, &content("7")]),
        chunk_frame(&[KIND, MID, r#""content":[{"type":"text","text":"x"}]"#]),
        r#"{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        r#"{"jsonrpc":2,"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":1,"update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":[]}}"#.to_owned(),
        r#"[{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}]"#.to_owned(),
        // Escapes outside the text, in keys, in values compared with literals.
        chunk_frame(&[KIND, r#""messageId":"m\n""#, &plain]),
        chunk_frame(&[KIND, r#""message\u0049d":"m""#, &plain]),
        chunk_frame(&[r#""sessionUpdate":"agent_message_chunk\u0000""#, MID, &plain]),
        r#"{"jsonrpc":"2.0","method":"session\/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}"#.to_owned(),
        // Lone surrogates and bad escapes in the text.
        chunk_frame(&[KIND, MID, &content(r#""\ud83d""#)]),
        chunk_frame(&[KIND, MID, &content(r#""\ud83d x""#)]),
        chunk_frame(&[KIND, MID, &content(r#""\ud83d\u0041""#)]),
        chunk_frame(&[KIND, MID, &content(r#""\ud83d\ud83d""#)]),
        chunk_frame(&[KIND, MID, &content(r#""\ude00""#)]),
        chunk_frame(&[KIND, MID, &content(r#""\x""#)]),
        chunk_frame(&[KIND, MID, &content(r#""\u00g9""#)]),
        chunk_frame(&[KIND, MID, &content(r#""\u00""#)]),
        chunk_frame(&[KIND, MID, &content(r#""\'""#)]),
        // Trailing data.
        chunk_frame(&[KIND, MID, &plain]) + " x",
        chunk_frame(&[KIND, MID, &plain]) + "}",
        chunk_frame(&[KIND, MID, &plain]) + ",",
        chunk_frame(&[KIND, MID, &plain]) + "{}",
        // Separators out of place.
        chunk_frame(&[KIND, MID, &plain]).replace(r#""m","#, r#""m" "#),
        chunk_frame(&[KIND, MID, &plain]).replace(r#""m","#, r#""m",,"#),
        chunk_frame(&[KIND, MID, &plain]).replace("}}}}", "},}}}"),
        chunk_frame(&[KIND, MID, &plain]).replace(r#""messageId":"#, r#""messageId""#),
    ];
    // Control characters, raw, in the text and the ids.
    for control in ["\u{1}", "\t", "\n", "\u{1f}", "\0"] {
        declined.push(chunk_frame(&[
            KIND,
            MID,
            &content(&format!("\"a{control}b\"")),
        ]));
        declined.push(chunk_frame(&[
            KIND,
            &format!(r#""messageId":"m{control}""#),
            &plain,
        ]));
    }
    for line in &declined {
        for preamble in preambles() {
            assert_eq!(fast_vs_general(&preamble, line.as_bytes()), None, "{line}");
        }
    }
    // Invalid UTF-8 in the text, the ids and a value the general path ignores.
    let good = chunk_frame(&[
        KIND,
        MID,
        &content(r#""é and more text than sixteen bytes""#),
    ]);
    for bad in [
        &b"\xff"[..],
        b"\xc3",
        b"\xc0\xaf",
        b"\xed\xa0\x80",
        b"\xf4\x90\x80\x80",
    ] {
        for target in ["é", "\"m\"", "2.0"] {
            let mut line = Vec::new();
            let at = good.find(target).unwrap() + 1;
            line.extend_from_slice(&good.as_bytes()[..at]);
            line.extend_from_slice(bad);
            line.extend_from_slice(&good.as_bytes()[at..]);
            assert_eq!(fast_vs_general(&[], &line), None, "{line:?}");
        }
    }
    // Every truncation.
    for end in 0..good.len() {
        if good.is_char_boundary(end) {
            assert_eq!(fast_vs_general(&[], &good.as_bytes()[..end]), None);
        }
    }
}

/// Every single-byte change of hot-shape frames: whatever the scanner accepts, the general
/// path must parse and reduce to the same state.
#[test]
fn scanner_mutations_agree_with_the_general_path() {
    let frames = [
        chunk_frame(&[KIND, MID, &content(r#""plain é \n text \u00e9 \ud83d\ude00""#)]),
        r#"{"params":{"update":{"content":{"type":"text","text":"x"},"messageId":"m","sessionUpdate":"user_message_chunk"},"sessionId":"s1"},"method":"session/update"}"#.to_owned(),
    ];
    let replacements = b" \t\r\"\\{}[],:0nux\xc3\xa9\x01\x7f\xff";
    let preamble = vec![init(2)];
    let mut accepted = 0;
    for frame in &frames {
        for at in 0..frame.len() {
            for &byte in replacements {
                let mut line = frame.as_bytes().to_vec();
                line[at] = byte;
                if fast_vs_general(&preamble, &line).is_some() {
                    accepted += 1;
                }
                line.insert(at, byte);
                if fast_vs_general(&preamble, &line).is_some() {
                    accepted += 1;
                }
            }
        }
    }
    // Some mutations keep the shape (a changed letter in the text, added whitespace).
    assert!(accepted > 100, "{accepted}");
}

#[test]
fn text_blocks_share_one_buffer_and_keep_their_order() {
    let mut s = store(
        Some(2),
        &[
            chunk_frame(&[KIND, MID, &content(r#""a""#)]),
            chunk_frame(&[KIND, MID, r#""content":{"type":"image","data":"x"}"#]),
            chunk_frame(&[KIND, MID, r#""content":{"text":"b","type":"text"}"#]),
            chunk_frame(&[KIND, MID, &content(r#""c""#)]),
        ],
    );
    let session = s.get(SID).unwrap();
    assert_eq!(session.message_text("m", "agent").as_deref(), Some("abc"));
    assert_eq!(session.messages[0].content.as_ref().unwrap().text, "ac");
    assert_eq!(
        get(&session.snapshot(), &["messages", "0", "content"]),
        &parse(
            r#"[{"type":"text","text":"a"},{"type":"image","data":"x"},{"text":"b","type":"text"},{"type":"text","text":"c"}]"#
        )
    );
    // Replacing the content starts a new buffer.
    s.feed(
        (upd(r#"{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text","text":"new"}]}"#) + "\n")
            .as_bytes(),
    );
    s.feed((chunk_frame(&[KIND, MID, &content(r#""er""#)]) + "\n").as_bytes());
    let session = s.get(SID).unwrap();
    assert_eq!(session.message_text("m", "agent").as_deref(), Some("newer"));
    assert_eq!(session.messages[0].content.as_ref().unwrap().text, "newer");
}

#[test]
fn changes_after_take_are_recorded_again() {
    let line = chunk_frame(&[KIND, MID, &content(r#""a""#)]) + "\n";
    let mut s = Sessions::default();
    s.feed(line.as_bytes());
    s.feed(line.as_bytes());
    assert_eq!(s.take_changes().len(), 2);
    s.feed(line.as_bytes());
    s.feed(line.as_bytes());
    assert_eq!(
        s.take_changes(),
        vec![(SID.to_owned(), "message", "m".to_owned())]
    );
    assert!(s.take_changes().is_empty());
}

/// Whether `fast_terminal_chunk` takes `line`: the scanner's shape and strict base64.
fn terminal_fast_path_takes(line: &[u8]) -> bool {
    scan::terminal_chunk(line).is_some_and(|chunk| decode_base64(chunk.data).is_ok())
}

fn terminal_frame(sid: &str, tid: &str, data: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{sid}","update":{{"sessionUpdate":"terminal_output_chunk","terminalId":"{tid}","data":"{data}"}}}}}}"#
    )
}

/// The terminal-output hot path takes exactly the compact layout and reduces it as the general
/// path does: after v1 rules (unknown there), into a new or an existing terminal, with invalid
/// base64, and under every single-byte change.
#[test]
fn terminal_scanner_agrees_with_the_general_path() {
    // "\x1b[31mred\x1b[0m ok\r\n" and "50%\r100%"
    let (colour, progress) = ("G1szMW1yZWQbWzBtIG9rDQo=", "NTAlDTEwMCU=");
    let existing = upd(r#"{"sessionUpdate":"terminal_update","terminalId":"t1","command":"make"}"#);
    let preambles = [
        Vec::new(),
        vec![init(1)],
        vec![init(2)],
        vec![init(2), existing.clone(), terminal_frame(SID, "t1", colour)],
    ];
    let cases: [(String, bool); 7] = [
        (terminal_frame(SID, "t1", colour), true),
        (terminal_frame(SID, "t1", progress) + " \t\r", true),
        (terminal_frame("s2", "t9", "QQ="), false),
        (terminal_frame(SID, "t1", r"NTAl\/DTEwMCU="), false),
        (terminal_frame(SID, "t1", colour) + "x", false),
        (
            terminal_frame(SID, "t1", colour).replace(r#""terminalId":"t1","#, ""),
            false,
        ),
        (
            upd(&format!(
                r#"{{"sessionUpdate":"terminal_output_chunk","data":"{colour}","terminalId":"t1"}}"#
            )),
            false,
        ),
    ];
    for (line, taken) in &cases {
        assert_eq!(terminal_fast_path_takes(line.as_bytes()), *taken, "{line}");
        if JsonValue::parse(line.as_bytes(), false).is_err() {
            continue;
        }
        for preamble in &preambles {
            fed_equals_applied(preamble, line.as_bytes());
        }
    }
    let frame = terminal_frame(SID, "t1", progress);
    let mut accepted = 0;
    for at in 0..frame.len() {
        for &byte in b" \"\\{}:,Q=\x01\xff" {
            let mut line = frame.as_bytes().to_vec();
            line[at] = byte;
            if JsonValue::parse(&line, false).is_err() {
                assert!(!terminal_fast_path_takes(&line), "{line:?}");
                continue;
            }
            accepted += usize::from(terminal_fast_path_takes(&line));
            fed_equals_applied(&preambles[3], &line);
        }
    }
    // Changed ids and data bytes keep the shape.
    assert!(accepted > 20, "{accepted}");
}

fn apply_line(s: &mut Sessions, text: &str, sender: Option<Side>) {
    let value = JsonValue::parse(text.as_bytes(), false).unwrap();
    s.apply_from(&value, sender);
}

fn prompt_response(s: &Sessions) -> Option<Json> {
    let snap = s.get(SID).unwrap().snapshot();
    match get(&snap, &["prompts", "0"]) {
        Json::Object(o) => obj_get(o, "response").cloned(),
        _ => None,
    }
}

#[test]
fn same_id_both_ways_goes_to_the_request_whose_response_shape_fits() {
    let prompt = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{{"sessionId":"{SID}","prompt":[]}}}}"#
    );
    let read = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{{"sessionId":"{SID}","path":"/a"}}}}"#
    );
    let mut s = store(Some(1), &[prompt.clone(), read.clone()]);
    // The file's content fits fs/read_text_file (the agent's request), not the prompt.
    apply_line(
        &mut s,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":"x"}}"#,
        None,
    );
    assert_eq!(prompt_response(&s), None);
    assert_eq!(s.get(SID).unwrap().state(), Some("running"));
    apply_line(
        &mut s,
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
        None,
    );
    assert_eq!(
        prompt_response(&s),
        Some(parse(r#"{"stopReason":"end_turn"}"#))
    );
    assert_eq!(s.get(SID).unwrap().stop_reason(), Some("end_turn"));

    // An error decides nothing by shape (the client's request takes it) unless the sender is
    // named: the client's error answers the agent's request.
    let mut s = store(Some(1), &[prompt.clone(), read.clone()]);
    let error = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"nope"}}"#;
    apply_line(&mut s, error, Some(Side::Client));
    assert_eq!(s.get(SID).unwrap().state(), Some("running"));
    let mut s = store(Some(1), &[prompt, read]);
    apply_line(&mut s, error, None);
    assert_eq!(s.get(SID).unwrap().state(), Some("idle"));

    // A named sender also tracks a request whose method says neither side.
    let mut s = Sessions::default();
    apply_line(
        &mut s,
        r#"{"jsonrpc":"2.0","id":1,"method":"_x/y"}"#,
        Some(Side::Agent),
    );
    assert!(s.r.pending.expects(Side::Agent, "i1").is_some());
    apply_line(
        &mut s,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        Some(Side::Agent),
    );
    assert!(s.r.pending.expects(Side::Agent, "i1").is_some());
    apply_line(
        &mut s,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        Some(Side::Client),
    );
    assert!(s.r.pending.expects(Side::Agent, "i1").is_none());
}

#[test]
fn v1_prompt_starts_a_new_anonymous_message_and_real_tilde_ids_stay_apart() {
    let chunk = |kind: &str, extra: &str, t: &str| {
        upd(&format!(
            r#"{{"sessionUpdate":"{kind}"{extra},"content":{{"type":"text","text":"{t}"}}}}"#
        ))
    };
    let prompt = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{SID}","prompt":[]}}}}"#
        )
    };
    let s = store(
        Some(1),
        &[
            prompt(1),
            chunk("agent_message_chunk", "", "Hello."),
            prompt(2),
            chunk("agent_message_chunk", "", "Bye."),
        ],
    );
    let session = s.get(SID).unwrap();
    assert_eq!(session.message_count(), 2);
    assert_eq!(
        session.message_text("~1", "agent").as_deref(),
        Some("Hello.")
    );
    assert_eq!(session.message_text("~2", "agent").as_deref(), Some("Bye."));

    let mut s = store(
        Some(1),
        &[
            chunk("agent_message_chunk", r#","messageId":"~1""#, "real"),
            chunk("agent_thought_chunk", r#","messageId":"t""#, "think"),
            chunk("agent_message_chunk", "", "anon"),
        ],
    );
    // The anonymous message skips `~1`, taken by a real id; a later real `~2` is another
    // message than the anonymous `~2`.
    s.feed(chunk("agent_message_chunk", r#","messageId":"~2""#, "real2").as_bytes());
    s.feed(b"\n");
    let session = s.get(SID).unwrap();
    assert_eq!(session.message_count(), 4);
    assert_eq!(session.message_text("~1", "agent").as_deref(), Some("real"));
    let snap = session.snapshot();
    assert_eq!(get(&snap, &["messages", "2", "id"]), &Json::from("~2"));
    assert_eq!(get(&snap, &["messages", "3", "id"]), &Json::from("~2"));
}

#[test]
fn nulls_are_absent_from_stored_entities() {
    let mut s = store(
        Some(2),
        &[
            upd(r#"{"sessionUpdate":"usage_update","used":1,"size":2,"cost":null}"#),
            upd(
                r#"{"sessionUpdate":"notice","severity":"info","title":"t","description":null,"_meta":null}"#,
            ),
            upd(
                r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn","_meta":null}"#,
            ),
            upd(
                r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[],"_meta":null}}"#,
            ),
        ],
    );
    s.feed(init(1).as_bytes());
    s.feed(upd(r#"{"sessionUpdate":"plan","entries":[],"_meta":null}"#).as_bytes());
    s.feed(b"\n");
    let snap = s.get(SID).unwrap().snapshot();
    assert_eq!(get(&snap, &["usage"]), &parse(r#"{"used":1,"size":2}"#));
    assert_eq!(
        get(&snap, &["notices", "0"]),
        &parse(r#"{"severity":"info","title":"t"}"#)
    );
    assert_eq!(get(&snap, &["updateExtras"]), &parse("{}"));
    assert_eq!(
        get(&snap, &["plans", "p"]),
        &parse(r#"{"type":"items","planId":"p","entries":[]}"#)
    );
    assert_eq!(
        get(&snap, &["plans", "main"]),
        &parse(r#"{"type":"items","planId":"main","entries":[]}"#)
    );
}

#[test]
fn changes_name_every_session_key_that_moved() {
    let mut s = store(
        Some(2),
        &[upd(r#"{"sessionUpdate":"state_update","state":"running"}"#)],
    );
    s.take_changes();
    s.feed(upd(r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn","usage":{"totalTokens":1,"inputTokens":1,"outputTokens":0}}"#).as_bytes());
    s.feed(b"\n");
    s.feed(upd(r#"{"sessionUpdate":"available_commands_update","availableCommands":[],"_meta":{"a":1}}"#).as_bytes());
    s.feed(b"\n");
    let keys: Vec<String> = s.take_changes().into_iter().map(|c| c.2).collect();
    assert_eq!(
        keys,
        ["state", "stopReason", "updateExtras", "availableCommands"]
    );
    // v1: the prompt's response moves the stop reason, the next prompt clears it.
    let prompt = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{{"sessionId":"{SID}","prompt":[]}}}}"#
    );
    let mut s = store(
        Some(1),
        &[
            prompt.clone(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#.to_owned(),
        ],
    );
    s.take_changes();
    s.feed(format!("{prompt}\n").as_bytes());
    let keys: Vec<String> = s.take_changes().into_iter().map(|c| c.2).collect();
    assert_eq!(keys, ["state", "stopReason", "prompts"]);
}

#[test]
fn malformed_known_variants_are_errors() {
    let cases = [
        (
            r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p"}}"#,
            "plan_update: plan.entries must be an array",
        ),
        (
            r#"{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p"}}"#,
            "plan_update: plan.content must be a string",
        ),
        (
            r#"{"sessionUpdate":"plan_update","plan":{"type":"file","planId":"p","uri":null}}"#,
            "plan_update: plan.uri must be a string",
        ),
        (
            r#"{"sessionUpdate":"usage_update","used":18446744073709551616,"size":1}"#,
            "usage_update: used must be below 2**64",
        ),
        (
            r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{}}"#,
            "agent_message_chunk: content.type must be a string",
        ),
        (
            r#"{"sessionUpdate":"tool_call_content_chunk","toolCallId":"c","content":{"content":{}}}"#,
            "tool_call_content_chunk: content.type must be a string",
        ),
    ];
    for (update, reason) in cases {
        let mut s = store(Some(2), &[upd(update)]);
        let errors = s.take_errors();
        assert_eq!(errors.len(), 1, "{update}");
        assert_eq!(errors[0].reason, reason);
        let snap = s.get(SID).unwrap().snapshot();
        for key in ["messages", "timeline"] {
            assert_eq!(get(&snap, &[key]), &Json::Array(Vec::new()), "{update}");
        }
    }
    // Unknown plan types stay raw; the largest uint64 is fine.
    let s = store(
        Some(2),
        &[
            upd(r#"{"sessionUpdate":"plan_update","plan":{"type":"_x","planId":"p"}}"#),
            upd(r#"{"sessionUpdate":"usage_update","used":18446744073709551615,"size":1}"#),
        ],
    );
    assert!(s.errors().next().is_none());
}

#[test]
fn a_required_part_that_does_not_fit_refuses_the_update() {
    // The one item of a content chunk is required: nothing of the update applies.
    let cases = [
        (
            r#"{"sessionUpdate":"tool_call_content_chunk","toolCallId":"c","content":{"type":"content","content":"a"}}"#,
            "tool_call_content_chunk: content.content must be an object",
        ),
        (
            r#"{"sessionUpdate":"tool_call_content_chunk","toolCallId":"c","content":{"type":"terminal"}}"#,
            "tool_call_content_chunk: content.terminalId must be a string",
        ),
    ];
    for (update, reason) in cases {
        let mut s = store(Some(2), &[upd(update)]);
        let errors = s.take_errors();
        assert_eq!(errors.len(), 1, "{update}");
        assert_eq!(errors[0].reason, reason);
        let snap = s.get(SID).unwrap().snapshot();
        assert_eq!(get(&snap, &["toolCalls"]), &Json::Object(Vec::new()));
    }
}

#[test]
fn unknown_item_types_and_open_enums_pass() {
    // Before `initialize` only the rules of both versions apply, so either diff passes.
    let s = store(
        None,
        &[
            upd(
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"_x","path":1},{"type":"diff","path":"/a","newText":"b"},{"type":"diff","changes":[]}]}"#,
            ),
            upd(
                r#"{"sessionUpdate":"plan","entries":[{"content":"a","priority":"_p","status":"_s","_meta":null}]}"#,
            ),
        ],
    );
    assert!(s.errors().next().is_none());
}

#[test]
fn empty_batch_applied_is_an_error_and_reject_records_one() {
    let mut s = Sessions::default();
    s.apply(&JsonValue::parse(b"[]", false).unwrap());
    s.reject(
        Some(SID),
        "str is not valid UTF-8: surrogates not allowed",
        None,
    );
    let errors = s.take_errors();
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0].reason, "empty batch");
    assert_eq!(errors[0].line, None);
    assert_eq!(errors[1].session_id.as_deref(), Some(SID));
}

/// The snapshot without its `errors`.
fn without_errors(snapshot: Json) -> Json {
    let Json::Object(mut o) = snapshot else {
        unreachable!()
    };
    obj_remove(&mut o, "errors");
    Json::Object(o)
}

#[test]
fn a_part_that_does_not_fit_is_left_out_with_an_error_record() {
    // The schemas mark every optional field `x-deserialize-default-on-error` and every array of
    // items `x-deserialize-skip-invalid-items`. (version, before, update, the update as read,
    // the error record.)
    let info = upd(r#"{"sessionUpdate":"session_info_update"}"#);
    let cases = [
        (
            2,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"T"}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","title":5}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed"}"#,
            "tool_call_update: title must be a string or null (ignored)",
        ),
        (
            2,
            r#"{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text","text":"a"}]}"#,
            r#"{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text","text":"b"},{}]}"#,
            r#"{"sessionUpdate":"agent_message","messageId":"m","content":[{"type":"text","text":"b"}]}"#,
            "agent_message: content[1].type must be a string (item dropped)",
        ),
        (
            1,
            r#"{"sessionUpdate":"tool_call","toolCallId":"c","title":"T"}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"content","content":{}},{"type":"diff","changes":[],"newText":"b"}]}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"content","content":{}}]}"#,
            "tool_call_update: content[1].path must be a string (item dropped)",
        ),
        (
            2,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"T"}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"/a","line":"3"},{"line":3}]}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","locations":[{"path":"/a"}]}"#,
            "tool_call_update: locations[0].line must be an integer or null (ignored)",
        ),
        (
            2,
            r#"{"sessionUpdate":"terminal_update","terminalId":"t","output":{"data":"b2s="}}"#,
            r#"{"sessionUpdate":"terminal_update","terminalId":"t","command":"ls","output":{}}"#,
            r#"{"sessionUpdate":"terminal_update","terminalId":"t","command":"ls"}"#,
            "terminal_update: output.data must be a string (output ignored)",
        ),
        (
            2,
            r#"{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":{}}"#,
            r#"{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":{"exitCode":"1","signal":"KILL"}}"#,
            r#"{"sessionUpdate":"terminal_update","terminalId":"t","exitStatus":{"signal":"KILL"}}"#,
            "terminal_update: exitStatus.exitCode must be an integer or null (ignored)",
        ),
        (
            2,
            r#"{"sessionUpdate":"state_update","state":"running"}"#,
            r#"{"sessionUpdate":"state_update","state":"idle","stopReason":5}"#,
            r#"{"sessionUpdate":"state_update","state":"idle"}"#,
            "state_update: stopReason must be a string or null (ignored)",
        ),
        (
            2,
            r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[]}}"#,
            r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","_meta":1,"entries":[{"content":"a","priority":"high","status":"pending"},{"priority":"high","status":"pending"}]}}"#,
            r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[{"content":"a","priority":"high","status":"pending"}]}}"#,
            "plan_update: plan._meta must be an object or null (ignored)",
        ),
        (
            1,
            r#"{"sessionUpdate":"plan","entries":[]}"#,
            r#"{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high"}]}"#,
            r#"{"sessionUpdate":"plan","entries":[]}"#,
            "plan: entries[0].status must be a string (item dropped)",
        ),
        (
            2,
            r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"a"}}"#,
            r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"b"},"_meta":"x"}"#,
            r#"{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"b"}}"#,
            "agent_message_chunk: _meta must be an object or null (ignored)",
        ),
    ];
    for (version, before, bad, read, reason) in cases {
        let mut s = store(Some(version), &[info.clone(), upd(before), upd(bad)]);
        let errors = s.take_errors();
        assert_eq!(
            errors.first().map(|e| e.reason.as_str()),
            Some(reason),
            "{bad}"
        );
        let mut expected = store(Some(version), &[info.clone(), upd(before), upd(read)]);
        assert!(expected.take_errors().is_empty(), "{read}");
        assert_eq!(
            without_errors(s.get(SID).unwrap().snapshot()),
            without_errors(expected.get(SID).unwrap().snapshot()),
            "{bad}"
        );
    }
}

#[test]
fn optional_fields_take_null_and_their_types_only_where_they_belong() {
    // A non-idle state has no `stopReason` or `usage` of its own: they are unknown fields.
    let mut s = store(
        Some(2),
        &[upd(
            r#"{"sessionUpdate":"state_update","state":"running","stopReason":{"x":1},"usage":{"pending":true}}"#,
        )],
    );
    assert!(s.take_errors().is_empty());
    assert_eq!(s.get(SID).unwrap().state(), Some("running"));
    // Null passes everywhere; open enums take any string; raw fields take anything.
    let s = store(
        Some(2),
        &[
            upd(
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"c","kind":"_k","status":null,"rawInput":5,"_meta":null,"x":[]}"#,
            ),
            upd(
                r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"_why","usage":null}"#,
            ),
        ],
    );
    assert!(s.errors().next().is_none());
}

#[test]
fn a_refused_update_keeps_only_its_refusal_record() {
    // The handler refuses after the table left parts out: those records are moot.
    let cases = [
        (
            r#"{"sessionUpdate":"tool_call_update","title":5}"#,
            "tool_call_update: toolCallId must be a string",
        ),
        (
            r#"{"sessionUpdate":"notice","severity":"info","title":"","description":7}"#,
            "notice: title must be a non-empty string",
        ),
    ];
    for (update, reason) in cases {
        let mut s = store(Some(2), &[upd(update)]);
        let reasons: Vec<String> = s.take_errors().into_iter().map(|e| e.reason).collect();
        assert_eq!(reasons, [reason], "{update}");
    }
}

#[test]
fn unreadable_snapshots_and_required_arrays_follow_the_schemas() {
    // A snapshot that is not base64 is left out; the rest applies.
    let mut s = store(
        Some(2),
        &[upd(
            r#"{"sessionUpdate":"terminal_update","terminalId":"t","command":"make","output":{"data":"!!"}}"#,
        )],
    );
    let reasons: Vec<String> = s.take_errors().into_iter().map(|e| e.reason).collect();
    assert_eq!(
        reasons,
        ["terminal_update: output.data is not valid base64 (output ignored)"]
    );
    let snap = s.get(SID).unwrap().snapshot();
    assert_eq!(
        get(&snap, &["terminals", "t", "command"]),
        &Json::from("make")
    );
    // A required array of another type reads as `[]`; its bad items are left out.
    let mut s = store(
        Some(2),
        &[
            upd(r#"{"sessionUpdate":"available_commands_update","availableCommands":5}"#),
            upd(
                r#"{"sessionUpdate":"config_option_update","configOptions":[{"configId":"m","name":"Mode"},{"id":"m","name":"Mode"}]}"#,
            ),
        ],
    );
    let reasons: Vec<String> = s.take_errors().into_iter().map(|e| e.reason).collect();
    assert_eq!(
        reasons,
        [
            "available_commands_update: availableCommands must be an array (read as [])",
            "config_option_update: configOptions[1].configId must be a string (item dropped)",
        ]
    );
    let snap = s.get(SID).unwrap().snapshot();
    assert_eq!(get(&snap, &["availableCommands"]), &Json::Array(Vec::new()));
    let Json::Array(options) = get(&snap, &["configOptions"]) else {
        panic!("configOptions is an array")
    };
    assert_eq!(options.len(), 1);
}

#[test]
fn terminals_past_the_store_bound_are_cleared_least_recently_written_first() {
    let chunk = |tid: &str, data: &[u8]| {
        let data = base64_simd::STANDARD.encode_to_string(data);
        upd(&format!(
            r#"{{"sessionUpdate":"terminal_output_chunk","terminalId":"{tid}","data":"{data}"}}"#
        ))
    };
    let mut s = Sessions::new(SessionsConfig {
        max_terminal_bytes: 2_500,
        ..SessionsConfig::default()
    });
    for line in [
        chunk("a", &[b'a'; 1000]),
        chunk("b", &[b'b'; 1000]),
        chunk("a", b"\r\nA"),
        chunk("c", &[b'c'; 1000]),
    ] {
        s.feed(line.as_bytes());
        s.feed(b"\n");
    }
    let session = s.get(SID).unwrap();
    let text = |tid: &str| {
        let term = session.terminal(tid).unwrap();
        let term = term.lock().unwrap();
        (term.text(), term.truncated())
    };
    assert_eq!(text("a"), (format!("{}\nA", "a".repeat(1000)), false));
    assert_eq!(text("b"), (String::new(), true));
    assert_eq!(text("c"), ("c".repeat(1000), false));
}

#[test]
fn a_switch_of_version_names_each_session_once_until_the_changes_are_taken() {
    let init = |v: u32| {
        format!(r#"{{"jsonrpc":"2.0","method":"initialize","params":{{"protocolVersion":{v}}}}}"#)
    };
    let other = |sid: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{sid}","update":{{"sessionUpdate":"x"}}}}}}"#
        )
    };
    let mut s = store(None, &[other("a"), other("b")]);
    s.take_changes();
    let named = |s: &mut Sessions| {
        s.take_changes()
            .into_iter()
            .filter(|c| c.2 == "protocolVersion")
            .count()
    };
    for line in [init(1), init(2), init(1)] {
        s.feed(line.as_bytes());
        s.feed(b"\n");
    }
    assert_eq!(named(&mut s), 2);
    s.feed(init(2).as_bytes());
    s.feed(b"\n");
    assert_eq!(named(&mut s), 2);
    let snap = s.get("b").unwrap().snapshot();
    assert_eq!(get(&snap, &["protocolVersion"]), &Json::Int(2));
}

#[test]
fn method_sides_are_those_of_the_schemas_meta() {
    // Every method `meta.json` and `meta.unstable.json` of v1 and v2 list, on the side that
    // handles it; a method both sides handle (`mcp/message`) is on neither. The schemas live
    // beside the project: without them there is nothing to compare with.
    let schemas = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/acp-schema");
    let mut sides: [std::collections::BTreeSet<String>; 2] = Default::default();
    let mut files = 0;
    for version in ["v1", "v2"] {
        for name in ["meta.json", "meta.unstable.json"] {
            let Ok(text) = std::fs::read(schemas.join(version).join(name)) else {
                continue;
            };
            files += 1;
            let meta = JsonValue::parse(&text, false).expect("meta is JSON");
            let JsonValue::Object(meta) = meta else {
                panic!("{version}/{name}: not an object");
            };
            for (side, key) in sides.iter_mut().zip(["agentMethods", "clientMethods"]) {
                let Some(JsonValue::Object(methods)) = json::member(&meta, key) else {
                    panic!("{version}/{name}: no {key}");
                };
                for (_, method) in methods.iter() {
                    let JsonValue::Str(method) = method else {
                        panic!("{version}/{name}: {key} holds a non-string");
                    };
                    side.insert(method.to_string());
                }
            }
        }
    }
    if files == 0 {
        eprintln!("../shared/acp-schema is absent: method sides not compared");
        return;
    }
    assert_eq!(files, 4);
    let [agent, client] = sides;
    let ours = |methods: &[&str]| -> std::collections::BTreeSet<String> {
        methods.iter().map(|m| (*m).to_owned()).collect()
    };
    let both: std::collections::BTreeSet<String> = agent.intersection(&client).cloned().collect();
    assert_eq!(
        both.iter().map(String::as_str).collect::<Vec<_>>(),
        ["mcp/message"]
    );
    assert_eq!(ours(AGENT_METHODS), &agent - &both);
    assert_eq!(ours(CLIENT_METHODS), &client - &both);
}
