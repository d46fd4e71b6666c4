//! Unit tests of the session reducer.

use super::*;

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
    assert!(!s.r.pending.contains(Side::Agent, "i0"));
    assert!(
        s.r.pending
            .contains(Side::Agent, &format!("i{}", MAX_PENDING + 99))
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
