//! JSON-RPC: the protocol version in force, requests awaiting responses (by the side that
//! sent them), matching a response to its request, and prompt turns.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use crate::session::value::Value;

use super::client_terminals::TerminalAsk;
use super::fields::Fields;
use super::json::{Json, Members, as_str, dedup, member};
use super::reducer::Reducer;
use super::turns::TurnSlot;
use super::{HashMap, HashSet, MAX_PENDING, check, tables};

/// Which rules apply: before `initialize` (0), v1 (1) or v2 (2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Unknown,
    V1,
    V2,
}

pub(super) fn mode_of(version: Option<i64>) -> Mode {
    match version {
        None => Mode::Unknown,
        Some(v) if v < 2 => Mode::V1,
        Some(_) => Mode::V2,
    }
}

/// Which side sent a message (for a request: which side awaits its response).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Client,
    Agent,
}

impl Side {
    /// The side named `"client"` or `"agent"`.
    pub fn parse(name: &str) -> Option<Side> {
        match name {
            "client" => Some(Side::Client),
            "agent" => Some(Side::Agent),
            _ => None,
        }
    }

    fn other(self) -> Side {
        match self {
            Side::Client => Side::Agent,
            Side::Agent => Side::Client,
        }
    }
}

/// The keys a successful response to `method` must have (its response type's required
/// properties in the v1 and v2 schemas, stable and unstable); used to tell which of two
/// requests sharing an id a result answers. A prompt's response requires `stopReason` in v1
/// only.
fn response_keys(method: &str, mode: Mode) -> &'static [&'static str] {
    match (method, mode) {
        // Not required by the v2 schema, yet the spec's prompt lifecycle returns it.
        ("session/prompt", Mode::V2) => tables::V2_PROMPT_KEYS,
        // Before `initialize` either version's result is the prompt's.
        ("session/prompt", Mode::Unknown) => &[],
        _ => tables::response_keys(method),
    }
}

/// A prompt turn going on (see [`Session::turn`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Turn {
    /// Its first prompt.
    pub(super) start: usize,
    /// Its prompts answered with an error.
    pub(super) refused: usize,
    /// Its prompts before this one are marked by a cancel already.
    pub(super) cancelled_to: usize,
    /// Its record in the session's `turns`.
    pub(super) record: usize,
}

#[derive(Clone, Debug)]
pub(super) enum Pending {
    Initialize,
    /// `session/new` and `session/fork` (the method): the result names the session.
    NewSession(String),
    /// `session/load` and `session/resume` of a known session, and `session/set_config_option`
    /// (its result is the full set of options): the result's setup state applies. The session
    /// and the method.
    LoadSession(String, String),
    /// The session, the prompt's index, the rules in force when it was sent, which its
    /// answer is read by (a connection initialized again meanwhile changes them), and the
    /// turn it opened or joined.
    Prompt(String, usize, Mode, TurnSlot),
    Permission(String, usize),
    /// `session/set_mode` (v1): the session and the mode it asks for, current once answered
    /// with a result.
    SetMode(String, String),
    /// `terminal/create` (v1): the session and the terminal's fields as asked.
    TerminalCreate(String, Fields),
    /// Another `terminal/*` request (v1): the session, the terminal and what is asked.
    TerminalAsk(String, String, TerminalAsk),
    Other,
}

/// What a `session/set_mode` request waits for: the session and the mode it asks for. A
/// request without a session or mode id is still tracked, as any other.
fn set_mode_request(params: Option<&Value<'_>>) -> Pending {
    let Some(Value::Object(p)) = params else {
        return Pending::Other;
    };
    match (as_str(member(p, "sessionId")), as_str(member(p, "modeId"))) {
        (Some(sid), Some(mode)) => Pending::SetMode(sid.to_owned(), mode.to_owned()),
        _ => Pending::Other,
    }
}

/// The key of a trackable request id: a string, an integer, or a finite number written with a
/// fraction or an exponent (JSON-RPC discourages those, but a response must echo the same
/// value); `null` and other ids are not tracked. `2.0` and `2` are different ids.
fn id_key(id: &Value<'_>) -> Option<String> {
    match id {
        Value::Str(s) => Some(format!("s{s}")),
        Value::Int(i) => Some(format!("i{i}")),
        Value::BigInt(b) => Some(format!("i{b}")),
        Value::Float(f) if f.is_finite() => Some(format!("f{:x}", f.to_bits())),
        _ => None,
    }
}

/// A pending request: its sequence number, what its response updates, and the keys a
/// result must have to be its response.
type PendingEntry = (u64, Pending, &'static [&'static str]);

/// Requests awaiting responses, oldest first, bounded by [`MAX_PENDING`].
#[derive(Default)]
pub(super) struct PendingMap {
    pub(super) map: HashMap<(Side, String), PendingEntry>,
    /// Insertion order; entries whose sequence number no longer matches are stale.
    pub(super) order: VecDeque<(Side, String, u64)>,
    pub(super) seq: u64,
}

impl PendingMap {
    fn insert(&mut self, side: Side, key: String, what: Pending, keys: &'static [&'static str]) {
        self.seq += 1;
        self.order.push_back((side, key.clone(), self.seq));
        self.map.insert((side, key), (self.seq, what, keys));
        if self.map.len() > MAX_PENDING {
            while let Some((s, k, q)) = self.order.pop_front() {
                let live = self
                    .map
                    .get(&(s, k.clone()))
                    .is_some_and(|(seq, _, _)| *seq == q);
                if live {
                    self.map.remove(&(s, k));
                    break;
                }
            }
        }
        // Drop stale order entries now and then so answered requests cost no memory.
        if self.order.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.order.retain(|(s, k, q)| {
                map.get(&(*s, k.clone()))
                    .is_some_and(|(seq, _, _)| seq == q)
            });
        }
    }

    /// The keys a response to the pending request must have, if there is one.
    pub(super) fn expects(&self, side: Side, key: &str) -> Option<&'static [&'static str]> {
        self.map
            .get(&(side, key.to_owned()))
            .map(|(_, _, keys)| *keys)
    }

    /// The requests of the sessions named stay pending, so that an answer cannot answer
    /// another request, but change nothing.
    pub(super) fn forget_sessions(&mut self, names: &HashSet<&str>) {
        for (_, what, _) in self.map.values_mut() {
            let (Pending::Prompt(sid, ..)
            | Pending::Permission(sid, _)
            | Pending::SetMode(sid, _)
            | Pending::LoadSession(sid, _)
            | Pending::TerminalCreate(sid, _)
            | Pending::TerminalAsk(sid, ..)) = what
            else {
                continue;
            };
            if names.contains(sid.as_str()) {
                *what = Pending::Other;
            }
        }
    }

    fn take(&mut self, side: Side, key: &str) -> Option<Pending> {
        self.map.remove(&(side, key.to_owned())).map(|(_, p, _)| p)
    }
}

impl Reducer {
    /// `initialize`'s `protocolVersion` (in its `params` or `result`, as `part` says): a
    /// `uint16` in the schema. Any other value present is an error record, and the rules stay.
    fn set_version(&mut self, part: &str, v: Option<&Value<'_>>) {
        let v = match v {
            None => return,
            // The same again: every session has it already (walking them all for each of a
            // stream of `initialize`s would be quadratic).
            Some(Value::Int(v)) if self.version == Some(*v) => return,
            Some(Value::Int(v)) if (0..=i64::from(u16::MAX)).contains(v) => v,
            Some(_) => {
                self.error(
                    None,
                    format!(
                        "initialize: {part}.protocolVersion must be an integer from 0 to 65535"
                    ),
                );
                return;
            }
        };
        self.version = Some(*v);
        self.shared_version.store(*v, Ordering::Relaxed);
        // Every session's version moved; the sessions named for it since the changes were
        // last taken need not be named again (walking them all at each switch of version
        // would be quadratic).
        for i in self.version_changes_named..self.sessions.len() {
            let sid = self.sessions[i].id.clone();
            self.change(&sid, "session", "protocolVersion");
        }
        self.version_changes_named = self.sessions.len();
    }

    /// The `sessionId` of a request's params, or an error record naming `method`.
    pub(super) fn params_session<'a>(
        &mut self,
        method: &str,
        params: Option<&'a Value<'_>>,
    ) -> Option<&'a str> {
        let Some(Value::Object(p)) = params else {
            self.error(None, format!("{method}: params must be an object"));
            return None;
        };
        let sid = as_str(member(p, "sessionId"));
        if sid.is_none() {
            self.error(None, format!("{method}: sessionId must be a string"));
        }
        sid
    }

    /// Remember request `id` of `method` until its response. `side` is the sender the
    /// method implies, unless the caller named the sender.
    pub(super) fn track(
        &mut self,
        side: Side,
        id: Option<&Value<'_>>,
        method: &str,
        what: Pending,
    ) {
        if let Some(key) = id.and_then(id_key) {
            let side = self.sender.unwrap_or(side);
            let keys = response_keys(method, self.mode());
            self.pending.insert(side, key, what, keys);
        }
    }

    /// A notification sent with an id (`session/update`, `session/cancel`) by `side`: tracked
    /// only while the other side has a request of that id pending, whose response the
    /// notification's own could otherwise take (nothing answers one as a rule, and untracked
    /// it cannot push real requests out of the pending table).
    fn track_if_contested(&mut self, side: Side, id: Option<&Value<'_>>, method: &str) {
        let side = self.sender.unwrap_or(side);
        if let Some(key) = id.and_then(id_key)
            && self.pending.expects(side.other(), &key).is_some()
        {
            self.track(side, id, method, Pending::Other);
        }
    }

    /// A `session/prompt` request: the user's turn.
    fn prompt(&mut self, id: Option<&Value<'_>>, params: Option<&Value<'_>>) {
        let method = "session/prompt";
        let Some(sid) = self.params_session(method, params) else {
            // Refused, yet its response is still this request's.
            self.track(Side::Client, id, method, Pending::Other);
            return;
        };
        let entry = request_entry(id, params);
        let mode = self.mode();
        let s = self.session(sid);
        s.prompts.push(entry);
        let index = s.prompts.len() - 1;
        let slot = match s.turn {
            Some(turn) if mode == Mode::V2 => s.join_turn(turn.record, id, params),
            _ => {
                let slot = s.open_turn(id, params);
                s.turn = Some(Turn {
                    start: index,
                    refused: 0,
                    cancelled_to: index,
                    record: slot.turn,
                });
                slot
            }
        };
        // The user's turn: v1 chunks without an id that follow start a new message.
        s.current = None;
        if mode != Mode::V2 {
            s.state = Some("running".to_owned());
            let stopped = s.stop_reason.take().is_some();
            self.change(sid, "session", "state");
            if stopped {
                self.change(sid, "session", "stopReason");
            }
        }
        self.change(sid, "session", "prompts");
        self.change(sid, "session", "turns");
        self.check_request(sid, method, params);
        self.track(
            Side::Client,
            id,
            method,
            Pending::Prompt(sid.to_owned(), index, mode, slot),
        );
    }

    /// An error record for each member a `session/prompt` or `session/request_permission`
    /// request must have and lacks (its schema's required params, of the version in use);
    /// the request is kept as it came, and its answer is still awaited.
    fn check_request(&mut self, sid: &str, method: &str, params: Option<&Value<'_>>) {
        let Some(Value::Object(p)) = params else {
            return;
        };
        let array = |v: Option<&Value<'_>>| matches!(v, Some(Value::Array(_)));
        let mut missing: Vec<&str> = Vec::new();
        if method == "session/prompt" {
            if !array(member(p, "prompt")) {
                missing.push("params.prompt must be an array");
            }
        } else {
            match self.mode() {
                Mode::V1 if !matches!(member(p, "toolCall"), Some(Value::Object(_))) => {
                    missing.push("params.toolCall must be an object");
                }
                Mode::V2 if as_str(member(p, "title")).is_none() => {
                    missing.push("params.title must be a string");
                }
                _ => {}
            }
            if !array(member(p, "options")) {
                missing.push("params.options must be an array");
            }
        }
        for what in missing {
            self.error(Some(sid), format!("{method}: {what}"));
        }
    }

    /// A `session/cancel`: marks the turn going on, if one is.
    fn cancel(&mut self, id: Option<&Value<'_>>, params: Option<&Value<'_>>) {
        let method = "session/cancel";
        self.track_if_contested(Side::Client, id, method);
        let Some(sid) = self.params_session(method, params) else {
            return;
        };
        let s = self.session(sid);
        // Only an ongoing turn can be cancelled, and in it only the prompts not
        // answered with an error: a finished one stays as it was.
        if let Some(turn) = &mut s.turn {
            // Each prompt once, however many cancels a turn sees.
            for prompt in &mut s.prompts[turn.cancelled_to..] {
                if prompt.get("error").is_none() {
                    prompt.set("cancelRequested", Json::Bool(true));
                }
            }
            turn.cancelled_to = s.prompts.len();
            let record = turn.record;
            s.cancel_turn(record);
            self.change(sid, "session", "prompts");
            self.change(sid, "session", "turns");
        }
    }

    pub(super) fn request(
        &mut self,
        method: &str,
        id: Option<&Value<'_>>,
        params: Option<&Value<'_>>,
    ) {
        match method {
            "session/update" => {
                self.track_if_contested(Side::Agent, id, method);
                self.session_update(params);
            }
            "session/prompt" => self.prompt(id, params),
            "terminal/create"
            | "terminal/output"
            | "terminal/wait_for_exit"
            | "terminal/kill"
            | "terminal/release" => self.terminal_request(method, id, params),
            "session/request_permission" => {
                let Some(sid) = self.params_session(method, params) else {
                    self.track(Side::Agent, id, method, Pending::Other);
                    return;
                };
                let entry = request_entry(id, params);
                let s = self.session(sid);
                let permissions = &mut s.cold_mut().permissions;
                permissions.push(entry);
                let index = permissions.len() - 1;
                self.change(sid, "session", "permissions");
                self.check_request(sid, method, params);
                self.track(
                    Side::Agent,
                    id,
                    method,
                    Pending::Permission(sid.to_owned(), index),
                );
            }
            "session/cancel" => self.cancel(id, params),
            "initialize" => {
                if let Some(Value::Object(p)) = params {
                    self.set_version("params", member(p, "protocolVersion"));
                }
                self.track(Side::Client, id, method, Pending::Initialize);
            }
            "session/new" | "session/fork" => {
                self.track(
                    Side::Client,
                    id,
                    method,
                    Pending::NewSession(method.to_owned()),
                );
            }
            "session/load" | "session/resume" => {
                let Some(sid) = self.params_session(method, params) else {
                    self.track(Side::Client, id, method, Pending::Other);
                    return;
                };
                self.session(sid);
                self.track(
                    Side::Client,
                    id,
                    method,
                    Pending::LoadSession(sid.to_owned(), method.to_owned()),
                );
            }
            "session/set_mode" => {
                let what = set_mode_request(params);
                self.track(Side::Client, id, method, what);
            }
            "session/set_config_option" => {
                // A request without a session id is still tracked, as any other.
                let what = match params {
                    Some(Value::Object(p)) => as_str(member(p, "sessionId"))
                        .map_or(Pending::Other, |sid| {
                            Pending::LoadSession(sid.to_owned(), method.to_owned())
                        }),
                    _ => Pending::Other,
                };
                self.track(Side::Client, id, method, what);
            }
            _ => {
                let client = tables::AGENT_METHODS.contains(&method);
                let agent = tables::CLIENT_METHODS.contains(&method);
                if client && !agent {
                    self.track(Side::Client, id, method, Pending::Other);
                } else if agent && !client {
                    self.track(Side::Agent, id, method, Pending::Other);
                } else if let Some(sender) = self.sender {
                    // A method of either side or none: tracked when the caller names the sender.
                    self.track(sender, id, method, Pending::Other);
                }
            }
        }
    }

    /// Which side's pending request `key` a response with `result` answers, if any.
    fn answered_side(&self, key: &str, result: Option<&Value<'_>>) -> Option<Side> {
        if let Some(sender) = self.sender {
            // A response answers a request of the other side.
            return Some(sender.other());
        }
        let client = self.pending.expects(Side::Client, key);
        let agent = self.pending.expects(Side::Agent, key);
        let (client, agent) = match (client, agent) {
            (None, None) => return None,
            (Some(_), None) => return Some(Side::Client),
            (None, Some(_)) => return Some(Side::Agent),
            (Some(client), Some(agent)) => (client, agent),
        };
        let fits = |keys: &[&str]| match result {
            Some(Value::Object(r)) => keys.iter().all(|k| member(r, k).is_some()),
            _ => false,
        };
        let (client_fits, agent_fits) = (fits(client), fits(agent));
        // A type that requires keys the result has tells more than one that requires none
        // (which any result fits).
        let named = |fit: bool, keys: &[&str]| fit && !keys.is_empty();
        Some(
            match (named(client_fits, client), named(agent_fits, agent)) {
                (true, false) => Side::Client,
                (false, true) => Side::Agent,
                _ => match (client_fits, agent_fits) {
                    (true, false) => Side::Client,
                    (false, true) => Side::Agent,
                    _ => match result {
                        Some(Value::Object(r)) if member(r, "outcome").is_some() => Side::Agent,
                        _ => Side::Client,
                    },
                },
            },
        )
    }

    pub(super) fn response(
        &mut self,
        id: &Value<'_>,
        result: Option<&Value<'_>>,
        error: Option<&Value<'_>>,
    ) {
        let Some(key) = id_key(id) else {
            return;
        };
        let Some(side) = self.answered_side(&key, result) else {
            return;
        };
        let Some(what) = self.pending.take(side, &key) else {
            return;
        };
        match what {
            Pending::Initialize => {
                if let Some(Value::Object(r)) = result {
                    self.set_version("result", member(r, "protocolVersion"));
                }
            }
            Pending::NewSession(method) => {
                if let Some(Value::Object(r)) = result
                    && let Some(sid) = as_str(member(r, "sessionId"))
                {
                    self.session(sid);
                    self.session_setup(sid, &method, r);
                }
            }
            Pending::LoadSession(sid, method) => {
                if let Some(Value::Object(r)) = result {
                    self.session_setup(&sid, &method, r);
                }
            }
            Pending::Prompt(sid, index, asked, slot) => {
                self.prompt_answer(&sid, index, (asked, slot), result, error);
            }
            Pending::Permission(sid, index) => {
                let s = self.session(&sid);
                answer(&mut s.cold_mut().permissions[index], result, error);
                self.change(&sid, "session", "permissions");
            }
            Pending::SetMode(sid, mode) => {
                // v1 only, as `current_mode_update`: v2 has no modes.
                if result.is_some() && error.is_none() && self.mode() != Mode::V2 {
                    self.session(&sid).cold_mut().current_mode_id = Some(mode);
                    self.change(&sid, "session", "currentModeId");
                }
            }
            Pending::TerminalCreate(sid, fields) => self.terminal_created(&sid, fields, result),
            Pending::TerminalAsk(sid, tid, ask) => self.terminal_answered(&sid, &tid, ask, result),
            Pending::Other => {}
        }
    }

    /// The answer to prompt `index` of session `sid`, sent under the rules `asked`, in the
    /// turn `slot`.
    fn prompt_answer(
        &mut self,
        sid: &str,
        index: usize,
        (asked, slot): (Mode, TurnSlot),
        result: Option<&Value<'_>>,
        error: Option<&Value<'_>>,
    ) {
        let r = match result {
            Some(Value::Object(r)) => Some(r),
            _ => None,
        };
        let stop = r.and_then(|r| as_str(member(r, "stopReason")));
        // Sent before `initialize`, it is read by the rules in force now, and before
        // it by the result's shape: a `messageId` without a `stopReason` is a v2
        // acknowledgement.
        let mode = if asked == Mode::Unknown {
            self.mode()
        } else {
            asked
        };
        let v1 = match mode {
            Mode::V2 => false,
            Mode::V1 => true,
            Mode::Unknown => stop.is_some() || r.is_none_or(|r| member(r, "messageId").is_none()),
        };
        // v1: the result ends the turn with its stop reason; a result without one is
        // malformed, and ends the turn as an error response does.
        if v1 && stop.is_none() && result.is_some() {
            self.error(
                Some(sid),
                "session/prompt: result.stopReason must be a string".to_owned(),
            );
        }
        // v2: the acknowledgement names the user message it inserted, always (the
        // prompt lifecycle: "a required, non-null string"); recorded as it came.
        if !v1 && result.is_some() && r.and_then(|r| as_str(member(r, "messageId"))).is_none() {
            self.error(
                Some(sid),
                "session/prompt: result.messageId must be a string".to_owned(),
            );
        }
        // v1: the answer closes the prompt's turn, with the usage it reports.
        let members = r.map(|r| &r[..]);
        let usage = if v1 {
            self.prompt_usage(sid, members)
        } else {
            None
        };
        let s = self.session(sid);
        answer(&mut s.prompts[index], result, error);
        s.answer_turn(slot, members, error);
        if v1 {
            s.close_turn(slot.turn, stop, usage);
        }
        // A v2 result only acknowledges the prompt: its turn ends with an idle update,
        // or once every prompt of it was refused with an error.
        let prompts = s.prompts.len();
        if let Some(turn) = &mut s.turn
            && error.is_some()
            && index >= turn.start
        {
            turn.refused += 1;
        }
        let ended = if v1 {
            index + 1 == prompts
        } else {
            s.turn
                .is_some_and(|turn| turn.refused == prompts - turn.start)
        };
        if ended {
            // v2: each of its prompts refused, the turn is over.
            if let Some(turn) = s.turn.take()
                && !v1
            {
                s.close_turn(turn.record, None, None);
            }
        }
        // v1: any answer ends the turn (a response carries a result or an error); the
        // answer to an earlier prompt than the last one ends no turn that is going on.
        if v1 && index + 1 == s.prompts.len() {
            s.state = Some("idle".to_owned());
            let stop = stop.map(str::to_owned);
            // Named when set, also to the value it had, or cleared.
            let moved = stop.is_some() || s.stop_reason.is_some();
            s.stop_reason = stop;
            self.change(sid, "session", "state");
            if moved {
                self.change(sid, "session", "stopReason");
            }
        }
        self.change(sid, "session", "prompts");
        self.change(sid, "session", "turns");
    }

    /// `configOptions` and `modes.currentModeId` of the result of session setup `method`
    /// (new, fork, load, resume, `set_config_option`), read as the schemas say: an option that
    /// cannot be read is left out, a field of the wrong type is ignored, each with an error
    /// record, as in a `config_option_update`.
    fn session_setup(&mut self, sid: &str, method: &str, r: &Members<'_>) {
        self.session(sid);
        let mode = self.mode();
        let mut notes = Vec::new();
        let options = match member(r, "configOptions") {
            Some(v @ Value::Array(items)) => Some(
                match check::repair_config_options(method, items, mode, &mut notes) {
                    Some(kept) => Json::from_value(&Value::Array(kept)),
                    None => Json::from_value(v),
                },
            ),
            None | Some(Value::Null) => None,
            Some(_) => {
                notes.push(format!(
                    "{method}: result.configOptions must be an array or null (ignored)"
                ));
                None
            }
        };
        let mode_id = match member(r, "modes") {
            Some(Value::Object(modes)) => {
                if let Some(Value::Str(id)) = member(modes, "currentModeId") {
                    Some(id.to_string())
                } else {
                    notes.push(format!(
                        "{method}: result.modes.currentModeId must be a string (modes ignored)"
                    ));
                    None
                }
            }
            None | Some(Value::Null) => None,
            Some(_) => {
                notes.push(format!(
                    "{method}: result.modes must be an object or null (ignored)"
                ));
                None
            }
        };
        for note in notes {
            self.error(Some(sid), note);
        }
        if let Some(options) = options {
            self.session(sid).cold_mut().config_options = Some(options);
            self.change(sid, "session", "configOptions");
        }
        if let Some(id) = mode_id {
            self.session(sid).cold_mut().current_mode_id = Some(id);
            self.change(sid, "session", "currentModeId");
        }
    }
}

/// Keys of a prompt or permission entry that the reducer sets: params of those names are not
/// kept, so that an unanswered request cannot pass for an answered one.
const ENTRY_KEYS: [&str; 5] = [
    "sessionId",
    "requestId",
    "response",
    "error",
    "cancelRequested",
];

/// A prompt or permission entry: `requestId` then the params other than [`ENTRY_KEYS`].
fn request_entry(id: Option<&Value<'_>>, params: Option<&Value<'_>>) -> Fields {
    let mut entry = Fields::new();
    entry.set("requestId", id.map_or(Json::Null, Json::from_value));
    if let Some(Value::Object(p)) = params {
        let fields = dedup(p)
            .into_iter()
            .filter(|(k, _)| !ENTRY_KEYS.contains(k))
            .map(|(k, v)| (k, Some(Json::from_value(v))));
        entry.apply(fields.collect());
    }
    entry
}

fn answer(entry: &mut Fields, result: Option<&Value<'_>>, error: Option<&Value<'_>>) {
    if let Some(r) = result {
        entry.set("response", Json::from_value(r));
    } else if let Some(e) = error {
        entry.set("error", Json::from_value(e));
    }
}
