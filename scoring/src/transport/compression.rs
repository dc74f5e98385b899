//! Content-Encoding: gzip, deflate and br request bodies are decoded before scoring, because
//! the application (or a framework middleware) inflates them and reads the attack.
//!
//! Output is bounded twice: never more than `max_output` bytes (the body limit), and never more
//! than `max_ratio` times the compressed input, so a bomb (1 GiB of zeros in 1 MiB) stops after
//! the bound, not after the gigabyte. Stacked codings (`gzip, br`) are undone last-applied
//! first, each layer under the same bounds.

use std::io::Read;

use flate2::read::{DeflateDecoder, MultiGzDecoder, ZlibDecoder};

/// How far decompression may go.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// Most decoded bytes kept.
    pub max_output: usize,
    /// Most decoded bytes per compressed byte.
    pub max_ratio: usize,
}

/// One Content-Encoding token we can undo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    Deflate,
    Brotli,
    Identity,
}

impl Coding {
    /// The coding a token names (`x-gzip` is gzip's old alias); `None` for the unknown.
    pub fn from_token(token: &str) -> Option<Coding> {
        match token.to_ascii_lowercase().as_str() {
            "gzip" | "x-gzip" => Some(Coding::Gzip),
            "deflate" => Some(Coding::Deflate),
            "br" => Some(Coding::Brotli),
            "identity" | "" => Some(Coding::Identity),
            _ => None,
        }
    }
}

/// Why decoding stopped short.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// The output reached a bound; the decoded prefix is kept.
    Limit,
    /// The data is not valid for its coding; what decoded before the fault is kept.
    Corrupt,
}

/// A decoded layer: the bytes, and why it stopped early if it did.
pub struct Inflated {
    pub bytes: Vec<u8>,
    pub stop: Option<Stop>,
}

/// Undoes one coding of `input` within `bounds`.
pub fn inflate(coding: Coding, input: &[u8], bounds: Bounds) -> Inflated {
    let cap = bounds.max_output.min(input.len().saturating_mul(bounds.max_ratio).max(bounds.max_ratio));
    match coding {
        Coding::Identity => {
            let keep = input.len().min(bounds.max_output);
            Inflated { bytes: input[..keep].to_vec(), stop: (keep < input.len()).then_some(Stop::Limit) }
        }
        Coding::Gzip => read_bounded(MultiGzDecoder::new(input), cap),
        Coding::Deflate if looks_like_zlib(input) => read_bounded(ZlibDecoder::new(input), cap),
        // RFC 9110 says zlib, but some clients send a raw deflate stream; servers accept both.
        Coding::Deflate => read_bounded(DeflateDecoder::new(input), cap),
        Coding::Brotli => read_bounded(brotli_decompressor::Decompressor::new(input, 16 * 1024), cap),
    }
}

/// A zlib header: compression method 8 and a header checksum divisible by 31.
fn looks_like_zlib(input: &[u8]) -> bool {
    match input {
        [cmf, flg, ..] => cmf & 0x0F == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0,
        _ => false,
    }
}

/// Reads at most `cap` bytes; one byte more than that means a bound was hit.
fn read_bounded(reader: impl Read, cap: usize) -> Inflated {
    let mut bytes = Vec::with_capacity(cap.min(64 * 1024));
    let mut limited = reader.take(cap as u64 + 1);
    let stop = match limited.read_to_end(&mut bytes) {
        Ok(_) if bytes.len() > cap => Some(Stop::Limit),
        Ok(_) => None,
        Err(_) => Some(Stop::Corrupt),
    };
    bytes.truncate(cap);
    Inflated { bytes, stop }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::time::Instant;

    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use flate2::Compression;

    use super::*;

    const BOUNDS: Bounds = Bounds { max_output: 1 << 20, max_ratio: 1000 };

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn gzip_zlib_and_raw_deflate_decode() {
        let text = b"q=1' UNION SELECT password FROM users--";
        let out = inflate(Coding::Gzip, &gzip(text), BOUNDS);
        assert_eq!((out.bytes.as_slice(), out.stop), (&text[..], None));
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(text).unwrap();
        assert_eq!(inflate(Coding::Deflate, &z.finish().unwrap(), BOUNDS).bytes, text);
        let mut d = DeflateEncoder::new(Vec::new(), Compression::default());
        d.write_all(text).unwrap();
        assert_eq!(inflate(Coding::Deflate, &d.finish().unwrap(), BOUNDS).bytes, text);
    }

    #[test]
    fn corrupt_and_truncated_streams_keep_what_decoded() {
        let text = vec![b'a'; 100_000];
        let packed = gzip(&text);
        let cut = inflate(Coding::Gzip, &packed[..packed.len() / 2], BOUNDS);
        assert_eq!(cut.stop, Some(Stop::Corrupt));
        assert!(cut.bytes.iter().all(|&b| b == b'a'));
        assert_eq!(inflate(Coding::Brotli, b"not brotli at all", BOUNDS).stop, Some(Stop::Corrupt));
        assert_eq!(inflate(Coding::Gzip, b"", BOUNDS).bytes, b"");
    }

    #[test]
    fn bombs_stop_at_the_bounds() {
        // 64 MiB of zeros: the ratio bound (1000 × input) cuts long before max_output.
        let zeros = vec![0u8; 64 << 20];
        let packed = gzip(&zeros);
        let started = Instant::now();
        let out = inflate(Coding::Gzip, &packed, Bounds { max_output: usize::MAX, max_ratio: 1000 });
        println!("gzip bomb: {} B in, {} B out, {:?}", packed.len(), out.bytes.len(), started.elapsed());
        assert_eq!(out.stop, Some(Stop::Limit));
        assert_eq!(out.bytes.len(), packed.len() * 1000);
        let out = inflate(Coding::Gzip, &packed, BOUNDS);
        assert_eq!((out.bytes.len(), out.stop), (1 << 20, Some(Stop::Limit)));
    }

    #[test]
    fn tokens() {
        assert_eq!(Coding::from_token("X-GZIP"), Some(Coding::Gzip));
        assert_eq!(Coding::from_token("br"), Some(Coding::Brotli));
        assert_eq!(Coding::from_token("compress"), None);
        assert_eq!(Coding::from_token("zstd"), None);
    }
}
