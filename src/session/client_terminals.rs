//! v1 client terminals: the `terminal/*` requests an agent sends and the client answers. A
//! `terminal/create` answered with a `terminalId` makes a terminal entry (`source: "client"`),
//! each `terminal/output` response's `output` (the output retained so far) replaces what it
//! shows, rendered by the same live terminal as v2's, and the other requests' answers set its
//! exit status and its `killed` and `released` flags.

use crate::session::value::Value;

use super::fields::Fields;
use super::json::{Json, as_str, member};
use super::reducer::Reducer;
use super::rpc::{Pending, Side};

/// What a `terminal/*` request other than `terminal/create` asks of a terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TerminalAsk {
    Output,
    WaitForExit,
    Kill,
    Release,
}

impl TerminalAsk {
    fn method(self) -> &'static str {
        match self {
            TerminalAsk::Output => "terminal/output",
            TerminalAsk::WaitForExit => "terminal/wait_for_exit",
            TerminalAsk::Kill => "terminal/kill",
            TerminalAsk::Release => "terminal/release",
        }
    }
}

/// The members of a `terminal/create` request kept on its terminal, as sent.
const CREATE_FIELDS: [&str; 5] = ["command", "args", "cwd", "env", "outputByteLimit"];

impl Reducer {
    /// A `terminal/*` request (`method`), sent by the agent: tracked, with what its answer
    /// updates when its params name a session (and, but for `terminal/create`, a terminal).
    pub(super) fn terminal_request(
        &mut self,
        method: &str,
        id: Option<&Value<'_>>,
        params: Option<&Value<'_>>,
    ) {
        let what = self.terminal_pending(method, params);
        self.track(Side::Agent, id, method, what);
    }

    fn terminal_pending(&mut self, method: &str, params: Option<&Value<'_>>) -> Pending {
        let Some(sid) = self.params_session(method, params) else {
            return Pending::Other;
        };
        let Some(Value::Object(p)) = params else {
            return Pending::Other;
        };
        let ask = match method {
            "terminal/output" => TerminalAsk::Output,
            "terminal/wait_for_exit" => TerminalAsk::WaitForExit,
            "terminal/kill" => TerminalAsk::Kill,
            "terminal/release" => TerminalAsk::Release,
            _ => {
                if as_str(member(p, "command")).is_none() {
                    self.error(
                        Some(sid),
                        "terminal/create: params.command must be a string".to_owned(),
                    );
                }
                let mut fields = Fields::new();
                fields.set("source", "client".into());
                for key in CREATE_FIELDS {
                    match member(p, key) {
                        None | Some(Value::Null) => {}
                        Some(v) => fields.set(key, Json::from_value(v)),
                    }
                }
                return Pending::TerminalCreate(sid.to_owned(), fields);
            }
        };
        let Some(tid) = as_str(member(p, "terminalId")) else {
            self.error(
                Some(sid),
                format!("{method}: params.terminalId must be a string"),
            );
            return Pending::Other;
        };
        Pending::TerminalAsk(sid.to_owned(), tid.to_owned(), ask)
    }

    /// The answer to a `terminal/create`: a result with a `terminalId` makes the terminal
    /// (an error answer makes none).
    pub(super) fn terminal_created(
        &mut self,
        sid: &str,
        fields: Fields,
        result: Option<&Value<'_>>,
    ) {
        let Some(result) = result else {
            return;
        };
        let Some(tid) = (match result {
            Value::Object(r) => as_str(member(r, "terminalId")),
            _ => None,
        }) else {
            self.error(
                Some(sid),
                "terminal/create: result.terminalId must be a string".to_owned(),
            );
            return;
        };
        let entry = self.session(sid).terminal_entry(tid, "client");
        for (key, value) in fields.into_obj() {
            entry.fields.set(&key, value);
        }
        self.change(sid, "terminal", tid);
    }

    /// The answer to `ask` of terminal `tid`: an error answer changes nothing.
    pub(super) fn terminal_answered(
        &mut self,
        sid: &str,
        tid: &str,
        ask: TerminalAsk,
        result: Option<&Value<'_>>,
    ) {
        let Some(result) = result else {
            return;
        };
        let method = ask.method();
        let sidx = self.session_index(sid);
        if self.sessions[sidx].cold().terminals.get(tid).is_none() {
            self.error(
                Some(sid),
                format!("{method}: params.terminalId names no terminal of the session"),
            );
            return;
        }
        let r = match result {
            Value::Object(r) => Some(r),
            _ => None,
        };
        let mut notes = Vec::new();
        match (ask, r) {
            (TerminalAsk::Output, Some(r)) => {
                let Some(output) = as_str(member(r, "output")) else {
                    self.error(
                        Some(sid),
                        "terminal/output: result.output must be a string".to_owned(),
                    );
                    return;
                };
                let truncated = if let Some(Value::Bool(b)) = member(r, "truncated") {
                    Some(*b)
                } else {
                    notes.push("terminal/output: result.truncated must be a boolean (ignored)");
                    None
                };
                let exit_status = match member(r, "exitStatus") {
                    None | Some(Value::Null) => None,
                    Some(v @ Value::Object(_)) => Some(Json::from_value(v)),
                    Some(_) => {
                        notes.push(
                            "terminal/output: result.exitStatus must be an object or null (ignored)",
                        );
                        None
                    }
                };
                let entry = self.sessions[sidx]
                    .cold_mut()
                    .terminals
                    .get_mut(tid)
                    .expect("checked above");
                if let Some(truncated) = truncated {
                    entry.source_truncated = truncated;
                }
                if let Some(status) = exit_status {
                    entry.fields.set("exitStatus", status);
                }
                self.reset_terminal(sidx, tid, output.as_bytes());
            }
            // Any result says it was done (a void result may be written `null`).
            (TerminalAsk::Kill | TerminalAsk::Release, _) | (TerminalAsk::WaitForExit, Some(_)) => {
                let (key, value) = match ask {
                    TerminalAsk::WaitForExit => ("exitStatus", Json::from_value(result)),
                    TerminalAsk::Kill => ("killed", Json::Bool(true)),
                    _ => ("released", Json::Bool(true)),
                };
                let entry = self.sessions[sidx]
                    .cold_mut()
                    .terminals
                    .get_mut(tid)
                    .expect("checked above");
                entry.fields.set(key, value);
            }
            (TerminalAsk::Output | TerminalAsk::WaitForExit, None) => {
                self.error(Some(sid), format!("{method}: result must be an object"));
                return;
            }
        }
        for note in notes {
            self.error(Some(sid), note.to_owned());
        }
        self.change(sid, "terminal", tid);
    }
}
