//! Cutting fuzz input into pieces, the same way in every target.

/// `data` cut into pieces whose lengths (1 to 256) follow the bytes of `sizes`, cycled; one
/// piece when `sizes` is empty.
pub fn pieces<'a>(data: &'a [u8], sizes: &[u8]) -> Vec<&'a [u8]> {
    if sizes.is_empty() {
        return vec![data];
    }
    let mut out = Vec::new();
    let mut rest = data;
    let mut k = 0;
    while !rest.is_empty() {
        let n = (usize::from(sizes[k % sizes.len()]) + 1).min(rest.len());
        out.push(&rest[..n]);
        rest = &rest[n..];
        k += 1;
    }
    out
}

/// Splits fuzz input into a header of `n` bytes (zero-padded when short) and the rest.
pub fn header<const N: usize>(input: &[u8]) -> ([u8; N], &[u8]) {
    let mut head = [0u8; N];
    let n = input.len().min(N);
    head[..n].copy_from_slice(&input[..n]);
    (head, &input[n..])
}
