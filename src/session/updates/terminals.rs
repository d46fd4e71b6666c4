//! Terminals (v2): `terminal_update` and `terminal_output_chunk` (also on the byte fast
//! path) feed live terminals, within the store's bound on what they hold together. v1's
//! client terminals (`client_terminals`) are rendered by the same means.

use crate::session::value::Value;

use super::super::fields::patch_op;
use super::super::json::{Json, Members, as_str, dedup, member};
use super::super::model::lock;
use super::super::reducer::Reducer;
use super::super::rpc::Mode;
use super::super::scan;
use crate::terminal::{decode_base64, decode_base64_into};

/// The largest chunk buffer kept between terminal output chunks.
const MAX_KEPT_DECODED: usize = 1 << 20;

impl Reducer {
    pub(super) fn terminal_update(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "terminalId")) else {
            self.error(
                Some(sid),
                "terminal_update: terminalId must be a string".to_owned(),
            );
            return;
        };
        // The bytes to reset the terminal to (`null` resets it empty), if any. A snapshot that
        // is not base64 cannot be read: like any optional object that cannot, it is left out.
        let mut output: Option<Vec<u8>> = None;
        // The snapshot's `_meta`, kept as the entry's `output` (its `data` is the rendering):
        // replaced with each snapshot read, cleared by one without.
        let mut output_meta: Option<Json> = None;
        match member(u, "output") {
            Some(Value::Null) => output = Some(Vec::new()),
            Some(Value::Object(o)) => {
                if let Some(Value::Str(data)) = member(o, "data") {
                    if let Ok(bytes) = decode_base64(data.as_bytes()) {
                        output = Some(bytes);
                        match member(o, "_meta") {
                            None | Some(Value::Null) => {}
                            Some(meta @ (Value::Object(_) | Value::Raw(_)))
                                if crate::session::json::is_object(Some(meta)) =>
                            {
                                output_meta = Some(Json::Object(vec![(
                                    "_meta".to_owned(),
                                    Json::from_value(meta),
                                )]));
                            }
                            Some(_) => self.notes.push(
                                "terminal_update: output._meta must be an object or null (ignored)"
                                    .to_owned(),
                            ),
                        }
                    } else {
                        self.notes.push(
                            "terminal_update: output.data is not valid base64 (output ignored)"
                                .to_owned(),
                        );
                    }
                }
            }
            _ => {}
        }
        let sidx = self.session_index(sid);
        let entry = self.sessions[sidx].terminal_entry(id, "agent");
        let mut ops: Vec<_> = dedup(u)
            .into_iter()
            .filter(|(k, _)| !matches!(*k, "sessionUpdate" | "terminalId" | "output"))
            .map(|(k, v)| patch_op(k, v))
            .collect();
        if output.is_some() {
            ops.push(("output", output_meta));
        }
        entry.fields.apply(ops);
        if let Some(output) = output {
            self.reset_terminal(sidx, id, &output);
        }
        self.change(sid, "terminal", id);
    }

    /// Resets terminal `id` of session `sidx` (which has it) to `output`, within the store's
    /// bound.
    pub(in crate::session) fn reset_terminal(&mut self, sidx: usize, id: &str, output: &[u8]) {
        let Some(entry) = self.sessions[sidx].cold_mut().terminals.get_mut(id) else {
            return;
        };
        let held = {
            let mut term = lock(&entry.term);
            term.reset(output);
            term.settle()
        };
        self.terminal_budget.written(entry, sidx, id, held);
        self.clear_past_terminal_bound();
    }

    pub(super) fn terminal_chunk(&mut self, sid: &str, u: &Members<'_>) {
        let Some(id) = as_str(member(u, "terminalId")) else {
            self.error(
                Some(sid),
                "terminal_output_chunk: terminalId must be a string".to_owned(),
            );
            return;
        };
        let Some(data) = as_str(member(u, "data")) else {
            self.error(
                Some(sid),
                "terminal_output_chunk: data must be a string".to_owned(),
            );
            return;
        };
        let Ok(bytes) = decode_base64(data.as_bytes()) else {
            self.error(
                Some(sid),
                "terminal_output_chunk: data is not valid base64".to_owned(),
            );
            return;
        };
        self.terminal_output(sid, id, &bytes);
    }

    /// Feed one decoded chunk of terminal output.
    fn terminal_output(&mut self, sid: &str, id: &str, bytes: &[u8]) {
        let sidx = self.session_index(sid);
        let entry = self.sessions[sidx].terminal_entry(id, "agent");
        let held = {
            let mut term = lock(&entry.term);
            term.feed(bytes);
            term.settle()
        };
        self.terminal_budget.written(entry, sidx, id, held);
        self.clear_past_terminal_bound();
        self.change(sid, "terminal", id);
    }

    /// Clears the terminals written least recently until what they all hold fits the
    /// store's bound (never the one written last: its own bounds hold it).
    fn clear_past_terminal_bound(&mut self) {
        loop {
            let budget = &mut self.terminal_budget;
            if budget.held <= budget.limit {
                break;
            }
            let Some(oldest) = budget.order.first_entry() else {
                break;
            };
            if *oldest.key() == budget.writes {
                break;
            }
            let (victim_index, victim_id) = oldest.remove();
            let session = &mut self.sessions[victim_index];
            let victim = session
                .cold_mut()
                .terminals
                .get_mut(&victim_id)
                .expect("terminals are never removed");
            victim.written = 0;
            // One that holds nothing a clear would drop loses nothing: it is not cleared, nor
            // marked truncated. A clear keeps the links its pen and saved cursors carry.
            let mut term = lock(&victim.term);
            let kept = term.kept_bytes();
            if victim.held > kept {
                term.drop_retained();
                drop(term);
                budget.held -= victim.held - kept;
                victim.held = kept;
                let victim_session = session.id.clone();
                self.change(&victim_session, "terminal", &victim_id);
            }
        }
    }

    /// The terminal-output hot path (see [`scan::terminal_chunk`]): a heavy terminal session
    /// is mostly these frames, and their base64 is fed without building a parse tree. Returns
    /// false, having changed nothing, for any other frame, and where v1 rules make the variant
    /// unknown (the general path keeps it raw).
    pub(in crate::session) fn fast_terminal_chunk(&mut self, bytes: &[u8]) -> bool {
        if self.mode() == Mode::V1 {
            return false;
        }
        let Some(chunk) = scan::terminal_chunk(bytes) else {
            return false;
        };
        // Invalid base64, or a string with escapes, is the general path's to record or decode.
        // Chunks are decoded into one reused buffer: no allocation per chunk.
        let mut output = std::mem::take(&mut self.pty_bytes);
        let valid = decode_base64_into(chunk.data, &mut output).is_ok();
        if valid {
            self.terminal_output(chunk.session_id, chunk.terminal_id, &output);
        }
        // Kept unless one huge chunk grew it: memory between chunks stays small.
        if output.capacity() <= MAX_KEPT_DECODED {
            self.pty_bytes = output;
        }
        valid
    }
}
