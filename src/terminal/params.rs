//! CSI parameters: the parser's store of parameters and sub-parameters, and the plain
//! `;`-separated decimal parameters the ground fast path reads without it.

/// The `;`-separated decimal parameters (at most 16, each at most 65535) and the final byte of
/// a CSI at `rest` (after `ESC [`), and its length; `None` for anything else (private markers,
/// colons, intermediates, controls, the end of the data).
#[inline]
pub(super) fn plain_params(rest: &[u8]) -> Option<([u16; 16], usize, u8, usize)> {
    let mut vals = [0u16; 16];
    let mut count = 0;
    let mut j = 0;
    loop {
        // A parameter's digits, in a loop of their own: a colour's take most of an SGR.
        let mut acc: u32 = 0;
        while let Some(d) = rest
            .get(j)
            .map(|b| b.wrapping_sub(b'0'))
            .filter(|&d| d < 10)
        {
            acc = (acc * 10 + u32::from(d)).min(65535);
            j += 1;
        }
        let &b = rest.get(j)?;
        j += 1;
        match b {
            b';' if count < vals.len() - 1 => {}
            0x40..=0x7E => {}
            _ => return None,
        }
        vals[count] = param16(acc);
        count += 1;
        if b != b';' {
            return Some((vals, count, b, j));
        }
    }
}

/// A parameter value (already saturated at 65535) as stored.
#[inline]
pub(super) fn param16(v: u32) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}

/// Parameters of a CSI, each with its sub-parameters.
pub(super) trait ParamGroups {
    fn len(&self) -> usize;
    fn group(&self, i: usize) -> &[u16];
}

impl ParamGroups for Params {
    fn len(&self) -> usize {
        Params::len(self)
    }
    fn group(&self, i: usize) -> &[u16] {
        Params::group(self, i)
    }
}

/// Parameters without sub-parameters.
pub(super) struct Plain<'a>(pub(super) &'a [u16]);

impl ParamGroups for Plain<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn group(&self, i: usize) -> &[u16] {
        std::slice::from_ref(&self.0[i])
    }
}

/// Most parameters plus sub-parameters in one CSI; more makes the sequence ignored.
pub const MAX_PARAMS: usize = 32;

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
