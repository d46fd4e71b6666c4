//! The strict base64 decoder accepts exactly canonical, padded RFC 4648 base64, and decodes
//! it to the bytes a plain reference decoder gives.
#![no_main]

use acpwire::terminal::decode_base64;
use libfuzzer_sys::fuzz_target;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn value(b: u8) -> Option<u32> {
    ALPHABET.iter().position(|&c| c == b).map(|v| v as u32)
}

/// Decodes four characters at a time; `None` for anything but canonical padded base64.
fn reference(data: &[u8]) -> Option<Vec<u8>> {
    if !data.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::new();
    let groups = data.len() / 4;
    for (g, quad) in data.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&b| b == b'=').count();
        if pad > 2 || (pad > 0 && g + 1 != groups) {
            return None;
        }
        let mut word = 0u32;
        for &b in &quad[..4 - pad] {
            word = word << 6 | value(b)?;
        }
        word <<= 6 * pad;
        let bytes = word.to_be_bytes();
        let keep = 3 - pad;
        // Bits below the kept bytes must be zero (canonical encoding).
        if bytes[1 + keep..].iter().any(|&b| b != 0) {
            return None;
        }
        out.extend_from_slice(&bytes[1..=keep]);
    }
    Some(out)
}

fn encode(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for group in data.chunks(3) {
        let mut word = [0u8; 3];
        word[..group.len()].copy_from_slice(group);
        let w = u32::from(word[0]) << 16 | u32::from(word[1]) << 8 | u32::from(word[2]);
        for k in 0..4 {
            if k <= group.len() {
                out.push(ALPHABET[(w >> (18 - 6 * k) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

fuzz_target!(|input: &[u8]| {
    assert_eq!(decode_base64(input).ok(), reference(input));
    assert_eq!(decode_base64(&encode(input)).ok().as_deref(), Some(input));
});
