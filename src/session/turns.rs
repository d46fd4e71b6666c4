//! Prompt turns as a client shows them: one record per turn, opened by a `session/prompt`
//! and placed on the timeline, closed by its answer (v1) or by the idle `state_update` (v2),
//! with the stop reason, usage, cancel and error answer it had.

use crate::session::value::Value;

use super::fields::Fields;
use super::json::{Json, Members, View, member};
use super::model::{EntryKind, Session, TimelineEntry};
use super::reducer::Reducer;

/// Where a prompt went: the turn it opened or joined, and (for a v2 prompt sent while that
/// turn ran) its place among the turn's `joined` prompts.
#[derive(Clone, Copy, Debug)]
pub(super) struct TurnSlot {
    pub(super) turn: usize,
    pub(super) joined: Option<usize>,
}

/// One prompt turn of a session's `turns`.
pub(super) struct TurnRecord {
    /// The prompt's request id as sent (`null` when it had none).
    request_id: Json,
    /// The prompt's `params.prompt` as sent (`null` when absent).
    prompt: Json,
    /// The user message the prompt inserted: the v2 acknowledgement's `messageId`.
    message_id: Option<String>,
    stop_reason: Option<String>,
    cancel_requested: bool,
    usage: Option<Json>,
    /// The error answer to the prompt.
    error: Option<Json>,
    /// v2 prompts sent while the turn ran: `{requestId, prompt, messageId?, error?}`.
    joined: Vec<Fields>,
    /// The index in the session's timeline of the turn's entry, and the timeline's length
    /// when it closed (kept right when removed plans are compacted out).
    pub(super) start: usize,
    pub(super) end: Option<usize>,
}

/// The request id and prompt of a `session/prompt`, as sent.
fn sent(id: Option<&Value<'_>>, params: Option<&Value<'_>>) -> (Json, Json) {
    let prompt = match params {
        Some(Value::Object(p)) => member(p, "prompt").map_or(Json::Null, Json::from_value),
        _ => Json::Null,
    };
    (id.map_or(Json::Null, Json::from_value), prompt)
}

fn index(i: usize) -> Json {
    Json::Int(i64::try_from(i).unwrap_or(i64::MAX))
}

impl Session {
    /// A turn opened by prompt `id` with `params`, its entry placed last on the timeline.
    pub(super) fn open_turn(
        &mut self,
        id: Option<&Value<'_>>,
        params: Option<&Value<'_>>,
    ) -> TurnSlot {
        let (request_id, prompt) = sent(id, params);
        let turn = self.turns.len();
        self.turns.push(TurnRecord {
            request_id,
            prompt,
            message_id: None,
            stop_reason: None,
            cancel_requested: false,
            usage: None,
            error: None,
            joined: Vec::new(),
            start: self.timeline.len(),
            end: None,
        });
        self.timeline
            .push(TimelineEntry::new(EntryKind::Turn, &turn.to_string()));
        TurnSlot { turn, joined: None }
    }

    /// Prompt `id` with `params` joins turn `turn`, which is running.
    pub(super) fn join_turn(
        &mut self,
        turn: usize,
        id: Option<&Value<'_>>,
        params: Option<&Value<'_>>,
    ) -> TurnSlot {
        let (request_id, prompt) = sent(id, params);
        let record = &mut self.turns[turn];
        let mut entry = Fields::new();
        entry.set("requestId", request_id);
        entry.set("prompt", prompt);
        record.joined.push(entry);
        TurnSlot {
            turn,
            joined: Some(record.joined.len() - 1),
        }
    }

    /// Closes turn `turn` (once) with `stop_reason` and `usage`, at the timeline's end.
    pub(super) fn close_turn(
        &mut self,
        turn: usize,
        stop_reason: Option<&str>,
        usage: Option<&Value<'_>>,
    ) {
        let end = self.timeline.len();
        let record = &mut self.turns[turn];
        if record.end.is_some() {
            return;
        }
        record.end = Some(end);
        record.stop_reason = stop_reason.map(str::to_owned);
        record.usage = usage.map(Json::from_value);
    }

    pub(super) fn cancel_turn(&mut self, turn: usize) {
        self.turns[turn].cancel_requested = true;
    }

    /// The answer to the prompt in `slot`: the v2 acknowledgement's `messageId`, or the error.
    pub(super) fn answer_turn(
        &mut self,
        slot: TurnSlot,
        result: Option<&Members<'_>>,
        error: Option<&Value<'_>>,
    ) {
        let record = &mut self.turns[slot.turn];
        let message_id = match result.and_then(|r| member(r, "messageId")) {
            Some(Value::Str(m)) => Some(m.to_string()),
            _ => None,
        };
        let error = error.map(Json::from_value);
        match slot.joined {
            None => {
                if message_id.is_some() {
                    record.message_id = message_id;
                }
                if error.is_some() {
                    record.error = error;
                }
            }
            Some(j) => {
                let entry = &mut record.joined[j];
                if let Some(m) = message_id {
                    entry.set("messageId", Json::Str(m));
                }
                if let Some(e) = error {
                    entry.set("error", e);
                }
            }
        }
    }

    /// After removed plans' entries were compacted out of the timeline: `kept_before[i]` is
    /// how many entries before old index `i` were kept.
    pub(super) fn remap_turns(&mut self, kept_before: &[usize]) {
        for record in &mut self.turns {
            record.start = kept_before[record.start];
            record.end = record.end.map(|end| kept_before[end]);
        }
    }

    /// `turns`, with timeline indices as the snapshot's timeline counts them: `shown[i]` is
    /// the snapshot index of timeline entry `i` (and of its end, for `i` the length).
    pub(super) fn turns_view(&self, shown: &[usize]) -> View<'_> {
        View::Array(
            self.turns
                .iter()
                .map(|t| {
                    let mut o = vec![
                        ("requestId", View::Json(&t.request_id)),
                        ("prompt", View::Json(&t.prompt)),
                    ];
                    if let Some(m) = &t.message_id {
                        o.push(("messageId", View::Str(m)));
                    }
                    o.push(("stopReason", View::of_str(t.stop_reason.as_deref())));
                    o.push((
                        "cancelRequested",
                        View::Owned(Json::Bool(t.cancel_requested)),
                    ));
                    if let Some(u) = &t.usage {
                        o.push(("usage", View::Json(u)));
                    }
                    if let Some(e) = &t.error {
                        o.push(("error", View::Json(e)));
                    }
                    if !t.joined.is_empty() {
                        o.push((
                            "joined",
                            View::Array(t.joined.iter().map(Fields::to_view).collect()),
                        ));
                    }
                    o.push(("start", View::Owned(index(shown[t.start]))));
                    o.push((
                        "end",
                        View::Owned(t.end.map_or(Json::Null, |end| index(shown[end]))),
                    ));
                    View::Object(o)
                })
                .collect(),
        )
    }

    /// The request id shown for the timeline entry of turn `turn`.
    pub(super) fn turn_request_id(&self, turn: usize) -> &Json {
        &self.turns[turn].request_id
    }
}

impl Reducer {
    /// `usage` of a v1 prompt result (the unstable schema's), if it is an object; another
    /// value is an error record and is ignored.
    pub(super) fn prompt_usage<'a, 's>(
        &mut self,
        sid: &str,
        result: Option<&'a Members<'s>>,
    ) -> Option<&'a Value<'s>> {
        match result.and_then(|r| member(r, "usage")) {
            Some(u @ Value::Object(_)) => Some(u),
            None | Some(Value::Null) => None,
            Some(_) => {
                self.error(
                    Some(sid),
                    "session/prompt: result.usage must be an object or null (ignored)".to_owned(),
                );
                None
            }
        }
    }
}
