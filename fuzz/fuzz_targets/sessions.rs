//! A store reaches the same state however its NDJSON is cut, and the same state again when
//! each frame is decoded first and applied: the byte scanners' fast paths must agree with
//! the general path. Nothing panics.
#![no_main]

use acpwire::framing::{Event, Framer};
use acpwire::session::{ErrorRecord, Json, Sessions, SessionsConfig};
use libfuzzer_sys::fuzz_target;

mod split;

type State = (Vec<Json>, Vec<ErrorRecord>, Vec<String>);

/// Snapshots of every session, errors and changes (both drained).
fn state(store: &mut Sessions) -> State {
    let snapshots = store
        .ids()
        .iter()
        .map(|id| store.get(id).expect("listed session").snapshot())
        .collect();
    let errors = store.take_errors();
    let changes = store
        .take_changes()
        .into_iter()
        .map(|(sid, kind, id)| format!("{sid}/{kind}/{id}"))
        .collect();
    (snapshots, errors, changes)
}

/// `state` as applied messages leave it: no line or offset in error records, and no error for
/// a frame that was not a message (those are the framer's, and applying skips them).
fn without_positions((mut snapshots, errors, changes): State) -> State {
    for snapshot in &mut snapshots {
        strip_positions(snapshot);
    }
    let errors = errors
        .into_iter()
        .filter(|e| e.session_id.is_some())
        .map(|e| ErrorRecord {
            line: None,
            offset: None,
            ..e
        })
        .collect();
    (snapshots, errors, changes)
}

fn strip_positions(snapshot: &mut Json) {
    let Json::Object(members) = snapshot else {
        return;
    };
    for (key, value) in members.iter_mut() {
        if key != "errors" {
            continue;
        }
        if let Json::Array(records) = value {
            for record in records {
                if let Json::Object(fields) = record {
                    for (name, field) in fields.iter_mut() {
                        if name == "line" || name == "offset" {
                            *field = Json::Null;
                        }
                    }
                }
            }
        }
    }
}

fuzz_target!(|input: &[u8]| {
    let ([cols, cut_count], rest) = split::header::<2>(input);
    let config = SessionsConfig {
        max_frame_bytes: 4096,
        terminal_cols: (cols % 41 != 0).then_some(usize::from(cols % 41)),
        scrollback: usize::from(cols % 7),
        // Small bounds now and then, so that clearing terminals is split-tested too.
        max_terminal_bytes: if cols % 3 == 0 {
            usize::from(cols) * 16
        } else {
            acpwire::session::DEFAULT_MAX_TERMINAL_BYTES
        },
        // Stubs and truncated messages are the same however the stream is cut and when each
        // frame is applied. Eviction is not: feeding estimates by frame length, `apply` by
        // value, so the two may count at different messages.
        max_bytes: None,
        max_payload_bytes: (cols % 5 == 0).then_some(usize::from(cols) * 8),
        max_message_bytes: (cols % 4 == 0).then_some(usize::from(cols) * 4),
    };
    let cuts = usize::from(cut_count % 8).min(rest.len());
    let (sizes, data) = rest.split_at(cuts);

    let mut whole = Sessions::new(config);
    whole.feed(data);
    whole.finish();
    let mut cut = Sessions::new(config);
    for piece in split::pieces(data, sizes) {
        cut.feed(piece);
    }
    cut.finish();
    let fed = state(&mut whole);
    assert_eq!(fed, state(&mut cut));

    // The same frames, decoded here and applied: no fast path.
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let mut framer = Framer::new(config.max_frame_bytes);
    let mut keep = |event: Event<'_>| {
        if let Event::Frame(frame) = event {
            frames.push(frame.bytes.to_vec());
        }
    };
    framer.feed(data, &mut keep);
    framer.finish(&mut keep);
    let mut applied = Sessions::new(config);
    for frame in &frames {
        if let Some(value) = acpwire::session::decode(frame) {
            applied.apply(&value);
        }
    }
    assert_eq!(
        without_positions(fed),
        without_positions(state(&mut applied))
    );
});
