//! Skipping a nested JSON value 64 bytes at a time.
//!
//! For each 64-byte block we compute bitmasks (bit `k` = byte `k`) of quotes, backslashes,
//! opening brackets (`{` `[`) and closing brackets (`}` `]`). Escaped bytes are found from
//! the runs of backslashes, the unescaped quotes give the "inside a string" mask by a prefix
//! XOR, and the brackets outside strings are then matched one set bit at a time. This is the
//! stage-1 technique of simdjson (Langdale & Lemire, "Parsing Gigabytes of JSON per Second",
//! 2019) reduced to what the index needs.
//!
//! Acceptance is exactly that of a byte-by-byte skimmer: every string closes and every
//! bracket outside strings matches; anything else between them is accepted (the full parse
//! judges numbers and literals). A backslash escapes the byte after it wherever it stands:
//! outside strings JSON has no backslashes, so such a line is invalid either way.

/// Bitmasks of one 64-byte block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Masks {
    quote: u64,
    backslash: u64,
    open: u64,
    close: u64,
}

/// The masks of `block`, one byte at a time (reference and non-x86 fallback).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn masks_scalar(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (k, &b) in block.iter().enumerate() {
        let bit = 1u64 << k;
        match b {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b'{' | b'[' => m.open |= bit,
            b'}' | b']' => m.close |= bit,
            _ => {}
        }
    }
    m
}

/// The masks of `block` with SSE2 (part of every x86_64 CPU): 16 bytes per compare.
#[cfg(target_arch = "x86_64")]
fn masks(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // `{` = 0x7B and `[` = 0x5B differ only in bit 0x20, as do `}` = 0x7D and `]` = 0x5D:
    // OR-ing 0x20 in maps each pair to one value (and no other byte to either).
    //
    // SAFETY: SSE2 is part of the x86_64 baseline, so these intrinsics are always available;
    // `block` holds 64 bytes, so the loads at 16k..16k+16 (k < 4) are in bounds, and
    // `_mm_loadu_si128` has no alignment requirement.
    unsafe {
        let mut m = Masks::default();
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let case = _mm_set1_epi8(0x20);
        let open = _mm_set1_epi8(b'{' as i8);
        let close = _mm_set1_epi8(b'}' as i8);
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            let folded = _mm_or_si128(v, case);
            let bits = |eq| u64::from(_mm_movemask_epi8(eq) as u16) << (16 * k);
            m.quote |= bits(_mm_cmpeq_epi8(v, quote));
            m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
            m.open |= bits(_mm_cmpeq_epi8(folded, open));
            m.close |= bits(_mm_cmpeq_epi8(folded, close));
        }
        m
    }
}

/// The masks of `block` with AVX2: 32 bytes per compare. Callers check the CPU has it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn masks_avx2(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };
    let mut m = Masks::default();
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let case = _mm256_set1_epi8(0x20);
    let open = _mm256_set1_epi8(b'{' as i8);
    let close = _mm256_set1_epi8(b'}' as i8);
    for k in 0..2 {
        // SAFETY: `block` holds 64 bytes, so bytes 32k..32k+32 are in bounds for k < 2, and
        // `_mm256_loadu_si256` has no alignment requirement.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * k).cast::<__m256i>()) };
        let folded = _mm256_or_si256(v, case);
        let bits = |eq| u64::from(_mm256_movemask_epi8(eq) as u32) << (32 * k);
        m.quote |= bits(_mm256_cmpeq_epi8(v, quote));
        m.backslash |= bits(_mm256_cmpeq_epi8(v, backslash));
        m.open |= bits(_mm256_cmpeq_epi8(folded, open));
        m.close |= bits(_mm256_cmpeq_epi8(folded, close));
    }
    m
}

#[cfg(not(target_arch = "x86_64"))]
fn masks(block: &[u8; 64]) -> Masks {
    masks_scalar(block)
}

const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// Bits of the bytes escaped by a backslash. `carry` is 1 when the previous block ended
/// with an unfinished escape (its last byte an escaping backslash) and is updated.
///
/// A run of backslashes escapes every second byte from its start; the byte after the run
/// is escaped when the run has odd length. Runs are told apart by their start parity, and
/// an addition carries each run's start to its end.
fn escaped(backslash: u64, carry: &mut u64) -> u64 {
    let backslash = backslash & !*carry;
    let follows_escape = (backslash << 1) | *carry;
    let odd_starts = backslash & !EVEN_BITS & !follows_escape;
    let (sequences_on_even, overflow) = odd_starts.overflowing_add(backslash);
    *carry = u64::from(overflow);
    let invert = sequences_on_even << 1;
    (EVEN_BITS ^ invert) & follows_escape
}

/// Each bit set when an odd number of bits at or below it are set in `x`: the
/// "inside a string" mask of the quote bits (opening quote included, closing excluded).
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// Open brackets, innermost last: one bit per level (1 = `{`), 64 levels in a register and
/// the rest spilled to the heap (deeper nesting is rare, and still exact).
struct Brackets {
    depth: usize,
    low: u64,
    high: Vec<u64>,
}

impl Brackets {
    fn push(&mut self, brace: bool) {
        let d = self.depth;
        if d < 64 {
            self.low = (self.low & !(1 << d)) | (u64::from(brace) << d);
        } else {
            let (w, b) = ((d - 64) / 64, (d - 64) % 64);
            if w == self.high.len() {
                self.high.push(0);
            }
            self.high[w] = (self.high[w] & !(1 << b)) | (u64::from(brace) << b);
        }
        self.depth += 1;
    }

    /// Pops the innermost bracket; false when it is not of the closing kind.
    fn pop(&mut self, brace: bool) -> bool {
        let Some(d) = self.depth.checked_sub(1) else {
            return false;
        };
        self.depth = d;
        let top = if d < 64 {
            self.low >> d & 1
        } else {
            self.high[(d - 64) / 64] >> ((d - 64) % 64) & 1
        };
        top == u64::from(brace)
    }
}

/// `b[start]` is `{` or `[`: the position just after its matching bracket.
///
/// Errors: `"unterminated string"` or `"unexpected end of line"` when the line ends first,
/// `"mismatched bracket"` when a closing bracket does not match.
pub(super) fn skip_container(b: &[u8], start: usize) -> Result<usize, &'static str> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return skip_container_avx2(b, start);
    }
    skip_with(b, start, masks)
}

/// [`skip_container`] with AVX2 masks.
#[cfg(target_arch = "x86_64")]
fn skip_container_avx2(b: &[u8], start: usize) -> Result<usize, &'static str> {
    #[target_feature(enable = "avx2")]
    fn run(b: &[u8], start: usize) -> Result<usize, &'static str> {
        skip_with(b, start, |block| masks_avx2(block))
    }
    // SAFETY: only called after `is_x86_feature_detected!("avx2")`.
    unsafe { run(b, start) }
}

#[inline(always)]
fn skip_with(
    b: &[u8],
    start: usize,
    masks: impl Fn(&[u8; 64]) -> Masks,
) -> Result<usize, &'static str> {
    debug_assert!(matches!(b.get(start), Some(b'{' | b'[')));
    let mut brackets = Brackets {
        depth: 0,
        low: 0,
        high: Vec::new(),
    };
    let mut carry = 0u64;
    let mut in_string = 0u64;
    let mut base = start;
    while base < b.len() {
        let rest = &b[base..];
        let mut tail = [0u8; 64];
        let block: &[u8; 64] = match rest.first_chunk::<64>() {
            Some(block) => block,
            None => {
                tail[..rest.len()].copy_from_slice(rest);
                &tail
            }
        };
        let m = masks(block);
        // Most blocks hold no backslash: skip the escape arithmetic for them.
        let escaped = if m.backslash | carry == 0 {
            0
        } else {
            escaped(m.backslash, &mut carry)
        };
        let quotes = m.quote & !escaped;
        let inside = prefix_xor(quotes) ^ in_string;
        // Broadcast the last bit: are we inside a string at the end of the block?
        in_string = ((inside as i64) >> 63) as u64;
        let mut structural = (m.open | m.close) & !inside & !escaped;
        while structural != 0 {
            let k = structural.trailing_zeros() as usize;
            structural &= structural - 1;
            let brace = matches!(block[k], b'{' | b'}');
            if m.open >> k & 1 == 1 {
                brackets.push(brace);
            } else if !brackets.pop(brace) {
                return Err("mismatched bracket");
            } else if brackets.depth == 0 {
                return Ok(base + k + 1);
            }
        }
        base += 64;
    }
    if in_string != 0 {
        Err("unterminated string")
    } else {
        Err("unexpected end of line")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-by-byte skimmer `skip_container` must agree with.
    fn skip_container_bytewise(b: &[u8], start: usize) -> Result<usize, &'static str> {
        let mut stack = Vec::new();
        let mut i = start;
        while i < b.len() {
            match b[i] {
                b'\\' => {
                    i += 2;
                    continue;
                }
                b'"' => {
                    i += 1;
                    loop {
                        match b.get(i) {
                            None => return Err("unterminated string"),
                            Some(b'\\') => i += 2,
                            Some(b'"') => break,
                            Some(_) => i += 1,
                        }
                    }
                    if i >= b.len() {
                        return Err("unterminated string");
                    }
                }
                c @ (b'{' | b'[') => stack.push(if c == b'{' { b'}' } else { b']' }),
                c @ (b'}' | b']') => {
                    if stack.pop() != Some(c) {
                        return Err("mismatched bracket");
                    }
                    if stack.is_empty() {
                        return Ok(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Err("unexpected end of line")
    }

    #[test]
    fn vector_masks_match_the_scalar_ones() {
        let mut block = [0u8; 64];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            for b in &mut block {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly the interesting bytes, sometimes anything.
                *b = match x % 9 {
                    0 => b'"',
                    1 => b'\\',
                    2 => b'{',
                    3 => b'[',
                    4 => b'}',
                    5 => b']',
                    6 => (x >> 8) as u8,
                    _ => b'a',
                };
            }
            assert_eq!(masks(&block), masks_scalar(&block), "{block:?}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2 (checked just above).
                let avx2 = unsafe { masks_avx2(&block) };
                assert_eq!(avx2, masks_scalar(&block), "{block:?}");
            }
        }
    }

    #[test]
    fn escapes_are_found_across_blocks() {
        // One backslash escapes the next byte; two escape each other; a run crossing the
        // block boundary carries over.
        let mut carry = 0;
        assert_eq!(escaped(0b1, &mut carry), 0b10);
        assert_eq!(escaped(0b11, &mut carry), 0b10);
        assert_eq!(escaped(0b111, &mut carry), 0b1010);
        assert_eq!(carry, 0);
        assert_eq!(escaped(1 << 63, &mut carry), 0);
        assert_eq!(carry, 1);
        assert_eq!(escaped(0, &mut carry), 1);
        assert_eq!(carry, 0);
    }

    #[test]
    fn skims_like_the_bytewise_skimmer() {
        let cases: [&[u8]; 14] = [
            br#"{"a":1}"#,
            br#"[1,[2,{"x":"]}"}],3] tail"#,
            br#"{"s":"\"}"}"#,
            br#"{"s":"\\"}"#,
            br#"{"s":"\\\"}"}"#,
            br#"{"a":[}"#,
            br#"{"a":"#,
            br#"{"a":"x"#,
            br#"{"a":"x\"#,
            br#"["#,
            br#"[]]"#,
            br#"{]"#,
            "{\"\\u00e9\":\"é{[\"}".as_bytes(),
            br#"[[[[[[[[]]]]]]]]"#,
        ];
        for c in cases {
            assert_eq!(
                skip_container(c, 0),
                skip_container_bytewise(c, 0),
                "{}",
                String::from_utf8_lossy(c)
            );
        }
    }

    #[test]
    fn skims_like_the_bytewise_skimmer_on_random_lines() {
        let alphabet = b"\"\\{}[]a:, ";
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 300) as usize;
            let mut line = vec![if x & 1 == 0 { b'{' } else { b'[' }];
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                line.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            let expected = skip_container_bytewise(&line, 0);
            assert_eq!(
                skip_container(&line, 0),
                expected,
                "{}",
                String::from_utf8_lossy(&line)
            );
            assert_eq!(skip_with(&line, 0, masks_scalar), expected);
        }
    }

    #[test]
    fn deep_nesting_spills_and_still_matches() {
        for depth in [63, 64, 65, 130, 1000] {
            let mut line = "[".repeat(depth).into_bytes();
            line.extend(b"{}".iter());
            line.extend("]".repeat(depth).bytes());
            assert_eq!(skip_container(&line, 0), Ok(line.len()), "{depth}");
            let mut bad = "[".repeat(depth).into_bytes();
            bad.push(b'}');
            assert_eq!(
                skip_container(&bad, 0),
                Err("mismatched bracket"),
                "{depth}"
            );
            // A mismatch deep inside, past the register.
            let mut mixed = "{\"a\":".repeat(depth).into_bytes();
            mixed.push(b']');
            assert_eq!(
                skip_container(&mixed, 0),
                Err("mismatched bracket"),
                "{depth}"
            );
        }
    }

    #[test]
    fn starts_at_an_offset() {
        let line = br#"{"type":"x","message":{"a":"}"},"z":1}"#;
        let at = line.iter().position(|&c| c == b'{').map(|_| 22).unwrap();
        assert_eq!(line[at], b'{');
        assert_eq!(skip_container(line, at), Ok(31));
        assert_eq!(&line[31..32], b",");
    }
}
