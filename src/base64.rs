//! Strict RFC 4648 base64 decoding of terminal data (`terminal_output_chunk` bytes,
//! `terminal_update` snapshots).

use std::fmt;

/// Terminal data that could not be decoded; nothing of it was applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TerminalDataError {
    /// A byte outside the base64 alphabet.
    Alphabet { offset: usize, byte: u8 },
    /// The length is not a multiple of 4.
    Length { len: usize },
    /// `=` somewhere other than the last one or two positions.
    Padding { offset: usize },
    /// The last data character carries bits past the data (non-canonical encoding).
    TrailingBits { offset: usize },
}

impl fmt::Display for TerminalDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Alphabet { offset, byte } => write!(
                f,
                "invalid base64: byte 0x{byte:02x} at offset {offset} is not in the RFC 4648 alphabet"
            ),
            Self::Length { len } => {
                write!(f, "invalid base64: length {len} is not a multiple of 4")
            }
            Self::Padding { offset } => {
                write!(f, "invalid base64: misplaced padding at offset {offset}")
            }
            Self::TrailingBits { offset } => {
                write!(
                    f,
                    "invalid base64: non-zero padding bits at offset {offset}"
                )
            }
        }
    }
}

impl std::error::Error for TerminalDataError {}

pub(super) fn b64_value(b: u8) -> Option<u8> {
    match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Explains why `data` is not strict base64 (the slow path, taken only after SIMD decoding
/// failed). The checks and their order are the Python twin's.
pub(super) fn base64_error(data: &[u8]) -> TerminalDataError {
    if let Some(i) = data
        .iter()
        .position(|&b| b != b'=' && b64_value(b).is_none())
    {
        return TerminalDataError::Alphabet {
            offset: i,
            byte: data[i],
        };
    }
    let n = data.len();
    if !n.is_multiple_of(4) {
        return TerminalDataError::Length { len: n };
    }
    if let Some(p) = data.iter().position(|&b| b == b'=') {
        if p + 2 < n || data[p..].iter().any(|&b| b != b'=') {
            return TerminalDataError::Padding { offset: p };
        }
        let last = p - 1;
        let mask = if n - p == 1 { 0x3 } else { 0xF };
        if b64_value(data[last]).unwrap_or(0) & mask != 0 {
            return TerminalDataError::TrailingBits { offset: last };
        }
    }
    // Unreachable when the decoder and these rules agree (the harness checks they do).
    TerminalDataError::Length { len: n }
}

/// Decodes strict RFC 4648 base64 (standard alphabet, padding required, canonical bits).
pub fn decode_base64(data: &[u8]) -> Result<Vec<u8>, TerminalDataError> {
    let mut out = Vec::new();
    decode_base64_into(data, &mut out)?;
    Ok(out)
}

/// [`decode_base64`] into `out`, replacing what it held and reusing its memory, so that a
/// stream of chunks decoded into one buffer allocates (and faults in fresh pages) only while
/// the chunks grow. On an error `out` is left empty.
pub fn decode_base64_into(data: &[u8], out: &mut Vec<u8>) -> Result<(), TerminalDataError> {
    out.clear();
    let decoder = &base64_simd::STANDARD;
    let len = decoder
        .decoded_length(data)
        .map_err(|_| base64_error(data))?;
    out.reserve(len);
    let written = decoder
        .decode(
            data,
            base64_simd::Out::from_uninit_slice(&mut out.spare_capacity_mut()[..len]),
        )
        .map_err(|_| base64_error(data))?
        .len();
    // SAFETY: `decode` initialized the first `written` bytes of the spare capacity.
    unsafe { out.set_len(written) };
    Ok(())
}
