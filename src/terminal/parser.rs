//! The escape-sequence parser: Paul Williams' DEC ANSI state machine, transition for transition
//! as the `vte` crate implements it, with three deliberate differences (mirrored by the Python
//! twin): the ground state hands whole printable runs to the screen instead of one character at
//! a time; raw bytes 0x80-0x9F are never C1 controls (input is UTF-8, so they are invalid bytes,
//! and a DCS is not ended by a raw 0x9C); OSC payloads are kept raw (';' included, capped) and
//! split by the handler that knows how many fields it takes.

/// Most parameters plus sub-parameters in one CSI; more makes the sequence ignored.
pub const MAX_PARAMS: usize = 32;

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

/// Parameters of the CSI being parsed: values saturate at 65535; groups are `;`-separated
/// parameters, each with its `:`-separated sub-parameters.
#[derive(Clone)]
pub struct Params {
    vals: [u16; MAX_PARAMS],
    groups: [(u8, u8); MAX_PARAMS],
    count: usize,
    ngroups: usize,
    cur_start: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            vals: [0; MAX_PARAMS],
            groups: [(0, 0); MAX_PARAMS],
            count: 0,
            ngroups: 0,
            cur_start: 0,
        }
    }
}

impl Params {
    pub fn clear(&mut self) {
        self.count = 0;
        self.ngroups = 0;
        self.cur_start = 0;
    }
    pub fn is_full(&self) -> bool {
        self.count == MAX_PARAMS
    }
    /// Ends the current parameter with value `v`.
    pub fn push(&mut self, v: u16) {
        self.vals[self.count] = v;
        self.count += 1;
        // Both fit: there are at most MAX_PARAMS (32) values.
        let start = u8::try_from(self.cur_start).unwrap_or(u8::MAX);
        let len = u8::try_from(self.count - self.cur_start).unwrap_or(u8::MAX);
        self.groups[self.ngroups] = (start, len);
        self.ngroups += 1;
        self.cur_start = self.count;
    }
    /// Adds `v` to the current parameter as a value followed by a sub-parameter.
    pub fn extend(&mut self, v: u16) {
        self.vals[self.count] = v;
        self.count += 1;
    }
    pub fn len(&self) -> usize {
        self.ngroups
    }
    pub fn is_empty(&self) -> bool {
        self.ngroups == 0
    }
    /// No value read yet, not even a sub-parameter.
    pub fn is_blank(&self) -> bool {
        self.count == 0
    }
    /// Parameter `i` with its sub-parameters.
    pub fn group(&self, i: usize) -> &[u16] {
        let (s, n) = self.groups[i];
        &self.vals[s as usize..s as usize + n as usize]
    }
    /// First value of parameter `i`, or `default` when it is missing or 0.
    pub fn arg(&self, i: usize, default: u16) -> u16 {
        let v = if i < self.ngroups {
            self.vals[self.groups[i].0 as usize]
        } else {
            0
        };
        if v == 0 { default } else { v }
    }
    /// True for a CSI written without parameters (or with a single 0).
    pub fn is_bare(&self) -> bool {
        self.ngroups == 1 && self.groups[0].1 == 1 && self.vals[0] == 0
    }
}
