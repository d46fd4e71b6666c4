//! Unit tests of the session reducer that reach into its private state (the scanners, the
//! pending requests, the method tables) or exercise what only Rust has; the behaviour cases
//! shared with the Python tests are data, run by `cases.rs`.

use super::json::{View, obj_get};
use super::tables::{AGENT_METHODS, CLIENT_METHODS};
use super::*;
use crate::terminal::decode_base64;
use jiter::JsonValue;

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
    Json::from_jiter(&JsonValue::parse(text.as_bytes(), false).unwrap())
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
        if let Some(value) = value::parse(line.as_bytes()) {
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
    assert_eq!(s.get(SID).unwrap().cold().notices.len(), MAX_NOTICES);
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
            c.message_id.unwrap_or("").to_owned(),
            match c.body {
                scan::ChunkBody::Text(text) => text.to_owned(),
                scan::ChunkBody::Block { json, .. } => format!("block {json}"),
            },
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
    let Some(value) = value::parse(line) else {
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
    // What the store counts (a block kept as its text costs what its tree does), where no
    // error record tells the two apart by its position.
    if fed.errors().next().is_none() {
        assert_eq!(fed.retained_bytes(), applied.retained_bytes(), "{context}");
    }
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
        // A v1 chunk: no messageId (with one v2 preamble, declined by the reducer instead).
        (chunk_frame(&[KIND, &plain]), "plain text"),
        (
            chunk_frame(&[r#""sessionUpdate":"agent_thought_chunk""#, &plain]),
            "plain text",
        ),
        // The content's keys in either order, and `_meta` (an object or null) anywhere.
        (
            chunk_frame(&[KIND, MID, r#""content":{"text":"x","type":"text"}"#]),
            "x",
        ),
        (chunk_frame(&[KIND, MID, &plain, r#""_meta":{}"#]), "plain text"),
        (
            chunk_frame(&[r#""_meta":{"a":[1,{"b":"\u00e9"}],"c":null}"#, KIND, &plain]),
            "plain text",
        ),
        (chunk_frame(&[KIND, r#""_meta" : null"#, MID, &plain]), "plain text"),
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
fn scanner_takes_blocks_of_other_types_as_their_json_text() {
    let blocks = [
        r#"{"type":"resource_link","name":"main.rs","uri":"file:///src/main.rs"}"#,
        r#"{"uri":"file:///a","type":"resource_link","name":"a"}"#,
        r#"{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}"#,
        r#"{"type":"image","text":"x"}"#,
        // Escapes, numbers, nesting and `_meta` inside; a repeated key (the dict keeps the
        // last value in the first place); the last of two `type`s decides.
        r#"{"type":"resource","resource":{"uri":"u\n\u00e9","text":"q\"","n":[1,-2.5e3,18446744073709551616,null,true]},"_meta":{"a":{}}}"#,
        r#"{"type":"resource_link","name":"a","name":"b","uri":"u"}"#,
        r#"{"type":"text","type":"audio","data":"AAAA"}"#,
        r#"{ "type" : "image" , "data" : "AA==" }"#,
        r#"{"type":"t\u0065xt2"}"#,
    ];
    for preamble in preambles() {
        for block in blocks {
            let line = chunk_frame(&[KIND, MID, &format!(r#""content":{block}"#)]);
            let scanned = fast_vs_general(&preamble, line.as_bytes());
            let (_, _, _, got) = scanned.unwrap_or_else(|| panic!("declined {line}"));
            assert_eq!(got, format!("block {}", block.trim_end()), "{line}");
        }
    }
    // A v1 chunk of a block, and one after plain text on the same message.
    let resource_link = r#""content":{"type":"resource_link","name":"a","uri":"u"}"#;
    let text_first = chunk_frame(&[KIND, MID, &content(r#""see ""#)]);
    assert!(fast_vs_general(&[init(1)], chunk_frame(&[KIND, resource_link]).as_bytes()).is_some());
    assert!(
        fast_vs_general(
            &[text_first],
            chunk_frame(&[KIND, MID, resource_link]).as_bytes()
        )
        .is_some()
    );
    // Declined: text with other members, `type` not a string or missing (or last not a
    // string), not an object, not JSON, too deep.
    let nested = format!("{}1{}", "[".repeat(197), "]".repeat(197));
    for block in [
        r#"{"type":"text","text":"x","annotations":null}"#.to_owned(),
        r#"{"type":"image","type":"text","text":"x"}"#.to_owned(),
        r#"{"type":7,"data":"x"}"#.to_owned(),
        r#"{"type":"image","type":null}"#.to_owned(),
        r#"{"data":"x"}"#.to_owned(),
        "{}".to_owned(),
        r#"[{"type":"image"}]"#.to_owned(),
        r#""image""#.to_owned(),
        r#"{"type":"image","data":"\ud800"}"#.to_owned(),
        r#"{"type":"image","data":}"#.to_owned(),
        r#"{"type":"image","data":"x""#.to_owned(),
        format!(r#"{{"type":"image","a":{nested}}}"#),
    ] {
        for preamble in preambles() {
            let line = chunk_frame(&[KIND, MID, &format!(r#""content":{block}"#)]);
            assert_eq!(fast_vs_general(&preamble, line.as_bytes()), None, "{line}");
        }
    }
    // One level less, it is taken.
    let nested = format!("{}1{}", "[".repeat(196), "]".repeat(196));
    let line = chunk_frame(&[
        KIND,
        MID,
        &format!(r#""content":{{"type":"image","a":{nested}}}"#),
    ]);
    assert!(fast_vs_general(&[], line.as_bytes()).is_some());
}

#[test]
fn scanner_declines_a_meta_that_is_not_an_object_or_null_or_not_json_or_repeated() {
    let plain = content(r#""x""#);
    let nested = format!("{}1{}", "[".repeat(197), "]".repeat(197));
    for meta in [
        r#""_meta":[]"#.to_owned(),
        r#""_meta":"m""#.to_owned(),
        r#""_meta":{"a":}"#.to_owned(),
        r#""_meta":{"a":"\ud800"}"#.to_owned(),
        r#""_meta":{},"_meta":{}"#.to_owned(),
        // Past jiter's nesting limit only with the three objects around it.
        format!(r#""_meta":{{"a":{nested}}}"#),
    ] {
        for preamble in preambles() {
            let line = chunk_frame(&[KIND, MID, &plain, &meta]);
            assert_eq!(fast_vs_general(&preamble, line.as_bytes()), None, "{line}");
        }
    }
    // One level less, it is taken.
    let nested = format!("{}1{}", "[".repeat(196), "]".repeat(196));
    let line = chunk_frame(&[KIND, MID, &plain, &format!(r#""_meta":{{"a":{nested}}}"#)]);
    assert!(fast_vs_general(&[], line.as_bytes()).is_some());
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
        chunk_frame(&[KIND, MID, r#""content":{"type":"text","text":"x","annotations":null}"#]),
        chunk_frame(&[KIND, MID, r#""content":{"type":"text","text":"x","_meta":{}}"#]),
        chunk_frame(&[KIND, MID, r#""content":{"text":"x"}"#]),
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
    // A plain text block joins the buffer whatever its keys' order.
    assert_eq!(session.messages[0].content.as_ref().unwrap().text, "abc");
    // The snapshot shows the run of plain text blocks after the image as one; the blocks as
    // sent keep theirs.
    assert_eq!(
        get(&session.snapshot(), &["messages", "0", "content"]),
        &parse(
            r#"[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"bc"}]"#
        )
    );
    assert_eq!(
        session.message_blocks(0).unwrap(),
        parse(
            r#"[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"},{"type":"text","text":"c"}]"#
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
        vec![(Arc::from(SID), "agentMessage", Arc::from("m"))]
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
    let value = value::parse(text.as_bytes()).unwrap();
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
fn empty_batch_applied_is_an_error_and_reject_records_one() {
    let mut s = Sessions::default();
    s.apply(&value::parse(b"[]").unwrap());
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
            let meta = value::parse(&text).expect("meta is JSON");
            let Value::Object(meta) = meta else {
                panic!("{version}/{name}: not an object");
            };
            for (side, key) in sides.iter_mut().zip(["agentMethods", "clientMethods"]) {
                let Some(Value::Object(methods)) = json::member(&meta, key) else {
                    panic!("{version}/{name}: no {key}");
                };
                for (_, method) in methods {
                    let Value::Str(method) = method else {
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

#[test]
fn a_sessions_cost_is_that_of_its_snapshot_built_whole() {
    let prompt = r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}"#;
    let lines = [
        prompt.to_owned(),
        upd(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"héllo"}}"#),
        upd(
            r#"{"sessionUpdate":"tool_call","toolCallId":"c1","title":"ls","rawInput":{"a":[1,2.5,null,true]}}"#,
        ),
        upd(
            r#"{"sessionUpdate":"plan","entries":[{"content":"x","priority":"low","status":"pending"}]}"#,
        ),
        upd(
            r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}"#,
        ),
        upd(r#"{"sessionUpdate":"mystery","x":1}"#),
    ];
    let mut s = store(Some(1), &lines);
    let session = s.get(SID).expect("made");
    // The snapshot's members that are null, [] or {} cost nothing; a session like this one
    // has several (no usage, no permissions, ...).
    let View::Object(members) = session.snapshot_view() else {
        panic!("a snapshot is an object");
    };
    let all = budget::view_cost(&View::Object(members));
    let View::Object(members) = session.snapshot_view() else {
        panic!("a snapshot is an object");
    };
    let kept: Vec<_> = members
        .into_iter()
        .filter(|(_, v)| !budget::is_empty(v))
        .collect();
    let whole = budget::view_cost(&View::Object(kept));
    assert!(whole < all);
    assert_eq!(session.snapshot_cost(), whole);
    let changes: usize =
        s.r.changes
            .iter()
            .map(|(sid, _, id)| budget::change_cost(sid, id))
            .sum();
    assert_eq!(s.retained_bytes(), budget::SESSION_COST + whole + changes);
}

#[test]
fn a_tool_call_keeps_its_id_once_and_shows_it_first() {
    let v1 = store(
        Some(1),
        &[
            upd(r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}"#),
            upd(r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"ls"}"#),
            upd(r#"{"sessionUpdate":"tool_call","toolCallId":"c2","title":"cat","kind":"read"}"#),
            upd(r#"{"sessionUpdate":"tool_call","toolCallId":"c2","title":"cat again"}"#),
        ],
    );
    let v2 = store(
        Some(2),
        &[upd(
            r#"{"sessionUpdate":"tool_call_content_chunk","toolCallId":"c3","content":{"type":"text","text":"x"}}"#,
        )],
    );
    let c1 = parse(r#"{"toolCallId":"c1","status":"in_progress","title":"ls"}"#);
    // Json objects compare in order: the id comes first, as the pure backend's dict has it,
    // and a tool_call of a known id replaces its fields.
    let session = v1.get(SID).unwrap();
    assert_eq!(
        get(&session.snapshot(), &["toolCalls"]),
        &parse(&format!(
            r#"{{"c1":{},"c2":{{"toolCallId":"c2","title":"cat again"}}}}"#,
            c1.to_json_string()
        ))
    );
    assert_eq!(session.tool_call("c1"), Some(c1));
    let chunked = v2.get(SID).unwrap();
    assert_eq!(
        chunked.tool_call("c3"),
        Some(parse(
            r#"{"toolCallId":"c3","content":[{"type":"text","text":"x"}]}"#
        ))
    );
    for session in [session, chunked] {
        for (id, fields) in session.tool_calls.iter() {
            assert!(!fields.contains("toolCallId"), "{id} keeps its id twice");
            let placed = session
                .timeline
                .iter()
                .find(|entry| entry.kind == model::EntryKind::ToolCall && *entry.id == *id)
                .unwrap();
            // One allocation: the map's key (`id`, as iterated) is the timeline's id.
            assert!(std::ptr::eq(placed.id.as_ptr(), id.as_ptr()));
        }
    }
}
