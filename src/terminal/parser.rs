//! The escape-sequence parser: Paul Williams' DEC ANSI state machine, transition for transition
//! as the `vte` crate implements it, with three deliberate differences (mirrored by the Python
//! twin): the ground state hands whole printable runs to the screen instead of one character at
//! a time; raw bytes 0x80-0x9F are never C1 controls (input is UTF-8, so they are invalid bytes,
//! and a DCS is not ended by a raw 0x9C); OSC payloads are kept raw (';' included, capped) and
//! split by the handler that knows how many fields it takes.
//!
//! The ground state's fast path (text runs, CR, the common SGRs and short CSIs without a round
//! through the state machine) is here too: [`Terminal::advance`] is the entry of every feed.

// The parameter store kept its public path here when it moved to its own module.
pub use super::params::{MAX_PARAMS, Params};

use super::Terminal;
use super::osc::MAX_OSC_BYTES;
use super::params::param16;
use crate::simd::terminal_input::{scan_ascii, scan_printable};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    Ground,
    Escape,
    EscInter,
    CsiEntry,
    CsiParam,
    CsiInter,
    CsiIgnore,
    DcsEntry,
    DcsParam,
    DcsInter,
    DcsIgnore,
    DcsPass,
    OscString,
    SosString,
}

impl Terminal {
    pub(super) fn reset_params(&mut self) {
        self.inter_len = 0;
        self.ignoring = false;
        self.first_digits = false;
        self.param = 0;
        self.params.clear();
    }

    pub(super) fn advance(&mut self, data: &[u8]) {
        let n = data.len();
        let mut i = 0;
        while i < n {
            match self.state {
                State::Ground => {
                    i = self.ground(data, i);
                    if i == n {
                        return;
                    }
                }
                State::CsiEntry | State::CsiParam => i = self.csi_params(data, i),
                State::OscString => {
                    let ends = |b: u8| matches!(b, 0x07 | 0x18 | 0x1A | 0x1B);
                    // Most payloads hold no control byte but the one that ends them: found in
                    // one pass and copied whole. Other controls are dropped from the payload.
                    let ctl = data[i..]
                        .iter()
                        .position(|&b| b < 0x20)
                        .map_or(n, |p| p + i);
                    let clean = ctl == n || ends(data[ctl]);
                    let j = if clean {
                        ctl
                    } else {
                        data[ctl..]
                            .iter()
                            .position(|&b| ends(b))
                            .map_or(n, |p| p + ctl)
                    };
                    if j > i && !self.osc_overflow {
                        let payload = &data[i..j];
                        let keep = |b: &u8| *b >= 0x20;
                        let add = if clean {
                            payload.len()
                        } else {
                            payload.iter().filter(|b| keep(b)).count()
                        };
                        if self.osc.len() + add > MAX_OSC_BYTES {
                            self.osc_overflow = true;
                            self.osc = Vec::new();
                        } else if clean {
                            self.osc.extend_from_slice(payload);
                        } else {
                            self.osc.extend(payload.iter().copied().filter(keep));
                        }
                    }
                    if j == n {
                        return;
                    }
                    let b = data[j];
                    i = j + 1;
                    self.osc_end();
                    if b == 0x1B {
                        self.reset_params();
                        self.state = State::Escape;
                    } else {
                        self.state = State::Ground;
                    }
                }
                State::DcsPass | State::DcsIgnore | State::SosString => {
                    // Payloads of these strings are consumed and never stored.
                    match memchr::memchr3(0x18, 0x1A, 0x1B, &data[i..]) {
                        None => return,
                        Some(p) => {
                            let j = i + p;
                            i = j + 1;
                            if data[j] == 0x1B {
                                self.reset_params();
                                self.state = State::Escape;
                            } else {
                                self.state = State::Ground;
                            }
                        }
                    }
                }
                _ => {
                    self.step(data[i]);
                    i += 1;
                }
            }
        }
    }

    /// The ground state from `data[i..]` (not empty) until the state changes or the data ends;
    /// returns where to continue. Text, C0 controls and CSIs all stay in this loop.
    #[inline]
    pub(super) fn ground(&mut self, data: &[u8], mut i: usize) -> usize {
        let n = data.len();
        loop {
            let mut j = i;
            let mut b = data[j];
            // Escapes often follow one another: no text between them, nothing to scan.
            if b < 0x20 {
                if self.utf8_len > 0 {
                    self.end_utf8();
                }
            } else if self.utf8_len == 0 {
                let (len, high) = scan_ascii(&data[i..]);
                if high {
                    j = self.print_text(data, i);
                    let Some(&next) = data.get(j) else {
                        return n;
                    };
                    b = next;
                    if self.utf8_len > 0 {
                        self.end_utf8();
                    }
                } else {
                    // Printing ASCII leaves no sequence pending: nothing to end.
                    if len > 0 {
                        self.put_ascii(&data[i..i + len]);
                    }
                    j = i + len;
                    let Some(&next) = data.get(j) else {
                        return n;
                    };
                    b = next;
                }
            } else {
                let (len, _) = scan_printable(&data[i..]);
                self.ground_run(&data[i..i + len]);
                j = i + len;
                let Some(&next) = data.get(j) else {
                    return n;
                };
                b = next;
                if self.utf8_len > 0 {
                    self.end_utf8();
                }
            }
            i = j + 1;
            if b != 0x1B {
                i = self.control(b, data, i);
                if i == n {
                    return n;
                }
                continue;
            }
            self.repeatable = self.last.take();
            // `ESC[0m`, a third of the escapes in coloured output, in one compare.
            if data.get(j..j + 4) == Some(b"\x1b[0m") {
                self.set_pen(self.reset_pen());
                i = j + 4;
                if i == n {
                    return n;
                }
                continue;
            }
            // Most escapes are CSIs: enter that state without a round through `step`, and an
            // OSC's (progress, links) too.
            if data.get(i) != Some(&b'[') {
                self.reset_params();
                self.state = State::Escape;
                if data.get(i) == Some(&b']') {
                    self.step(b']');
                    return i + 1;
                }
                return i;
            }
            // The other SGRs of one code of one or two digits (`ESC[1m`, `ESC[32m`), most of
            // the rest, without the general parse and dispatch of a short CSI.
            let code = match data.get(i + 1..i + 4) {
                Some(&[one @ b'0'..=b'9', b'm', _]) => Some((u16::from(one - b'0'), 3)),
                Some(&[tens @ b'0'..=b'9', ones @ b'0'..=b'9', b'm']) => {
                    Some((u16::from(tens - b'0') * 10 + u16::from(ones - b'0'), 4))
                }
                _ => None,
            };
            if let Some((code, len)) = code {
                self.sgr_code(code);
                i += len;
                if i == n {
                    return n;
                }
                continue;
            }
            if let Some(end) = self
                .short_csi(data, i + 1)
                .or_else(|| self.memo_sgr(data, i + 1))
                .or_else(|| self.plain_csi(data, i + 1))
            {
                i = end;
                if i == n {
                    return n;
                }
                continue;
            }
            self.reset_params();
            self.state = State::CsiEntry;
            i = self.csi_params(data, i + 1);
            if i == n || self.state != State::Ground {
                return i;
            }
        }
    }

    /// The CSI entry and parameter states over `data[i..]`, the transitions of [`Self::step`]
    /// for the bytes a CSI usually holds, without a dispatch per byte. Any other byte goes to
    /// `step`. Returns where to continue.
    pub(super) fn csi_params(&mut self, data: &[u8], mut i: usize) -> usize {
        if self.state == State::CsiEntry {
            let Some(&b) = data.get(i) else { return i };
            match b {
                b @ 0x3C..=0x3F => {
                    self.collect(b);
                    self.state = State::CsiParam;
                    i += 1;
                }
                0x30..=0x3B | 0x40..=0x7E => {}
                b => {
                    self.step(b);
                    return i + 1;
                }
            }
        }
        while let Some(&b) = data.get(i) {
            i += 1;
            match b {
                b'0'..=b'9' => self.param_digit(b),
                b';' => self.param_next(),
                b':' => self.param_sub(),
                0x40..=0x7E => {
                    self.csi_end(b);
                    return i;
                }
                _ => {
                    self.state = State::CsiParam;
                    self.step(b);
                    return i;
                }
            }
            self.state = State::CsiParam;
        }
        i
    }

    pub(super) fn anywhere(&mut self, b: u8) {
        if b == 0x1B {
            self.reset_params();
            self.state = State::Escape;
        } else if b == 0x18 || b == 0x1A {
            self.state = State::Ground;
        }
    }

    pub(super) fn collect(&mut self, b: u8) {
        if self.inter_len == 2 {
            self.ignoring = true;
        } else {
            self.inter[self.inter_len] = b;
            self.inter_len += 1;
        }
    }

    pub(super) fn param_digit(&mut self, b: u8) {
        if self.params.is_full() {
            self.ignoring = true;
        } else {
            self.first_digits |= self.params.is_blank();
            self.param = (self.param * 10 + u32::from(b - b'0')).min(65535);
        }
    }

    pub(super) fn param_next(&mut self) {
        if self.params.is_full() {
            self.ignoring = true;
        } else {
            self.params.push(param16(self.param));
            self.param = 0;
        }
    }

    pub(super) fn param_sub(&mut self) {
        if self.params.is_full() {
            self.ignoring = true;
        } else {
            self.params.extend(param16(self.param));
            self.param = 0;
        }
    }

    pub(super) fn step(&mut self, b: u8) {
        let state = self.state;
        if b < 0x20 {
            if b == 0x18 || b == 0x1A || b == 0x1B {
                self.anywhere(b);
            } else if matches!(
                state,
                State::Escape
                    | State::EscInter
                    | State::CsiEntry
                    | State::CsiParam
                    | State::CsiInter
                    | State::CsiIgnore
            ) {
                // ESC and CSI states execute C0 controls in passing; DCS entry states ignore them.
                self.execute(b);
            }
            return;
        }
        if b >= 0x7F {
            return;
        }
        match state {
            State::Escape => match b {
                0x20..=0x2F => {
                    self.collect(b);
                    self.state = State::EscInter;
                }
                b'[' => self.state = State::CsiEntry,
                b']' => {
                    self.osc.clear();
                    self.osc_overflow = false;
                    self.state = State::OscString;
                }
                b'P' => self.state = State::DcsEntry,
                b'X' | b'^' | b'_' => self.state = State::SosString,
                _ => {
                    self.state = State::Ground;
                    self.esc_dispatch(b);
                }
            },
            State::EscInter => {
                if b < 0x30 {
                    self.collect(b);
                } else {
                    self.state = State::Ground;
                    self.esc_dispatch(b);
                }
            }
            State::CsiEntry | State::CsiParam => match b {
                0x20..=0x2F => {
                    self.collect(b);
                    self.state = State::CsiInter;
                }
                b'0'..=b'9' => {
                    self.param_digit(b);
                    self.state = State::CsiParam;
                }
                b':' => {
                    self.param_sub();
                    self.state = State::CsiParam;
                }
                b';' => {
                    self.param_next();
                    self.state = State::CsiParam;
                }
                0x3C..=0x3F => {
                    if state == State::CsiEntry {
                        self.collect(b);
                        self.state = State::CsiParam;
                    } else {
                        self.state = State::CsiIgnore;
                    }
                }
                _ => self.csi_end(b),
            },
            State::CsiInter => match b {
                0x20..=0x2F => self.collect(b),
                0x30..=0x3F => self.state = State::CsiIgnore,
                _ => self.csi_end(b),
            },
            State::CsiIgnore if b >= 0x40 => self.state = State::Ground,
            State::DcsEntry | State::DcsParam => match b {
                0x20..=0x2F => self.state = State::DcsInter,
                0x30..=0x3B => self.state = State::DcsParam,
                0x3C..=0x3F => {
                    self.state = if state == State::DcsEntry {
                        State::DcsParam
                    } else {
                        State::DcsIgnore
                    };
                }
                _ => self.state = State::DcsPass,
            },
            State::DcsInter => match b {
                0x20..=0x2F => {}
                0x30..=0x3F => self.state = State::DcsIgnore,
                _ => self.state = State::DcsPass,
            },
            _ => {}
        }
    }

    pub(super) fn csi_end(&mut self, fin: u8) {
        self.state = State::Ground;
        if self.params.is_full() {
            self.ignoring = true;
        } else {
            self.params.push(param16(self.param));
        }
        if !self.ignoring {
            self.csi(fin);
        }
    }
}
