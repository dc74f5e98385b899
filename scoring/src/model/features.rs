//! Hashed n-gram featurizer for the model-backed detectors.
//!
//! The exact algorithm is shared with the Python trainer (`models/train/featurize.py`); every
//! constant comes from the model's `featurizer.json`, so the two sides cannot drift apart:
//!
//! 1. Take the first `max_bytes` bytes of the UTF-8 text and fold ASCII `A-Z` to lower case
//!    byte-wise (bytes >= 0x80 are kept as they are).
//! 2. For every family: `char` n = every byte window of length n; `word` n = every run of n
//!    consecutive words joined by one space byte, where a word is a maximal run of bytes that
//!    are ASCII `[a-z0-9]` or >= 0x80.
//! 3. Hash = 32-bit FNV-1a, state starting at the offset basis, then absorbing the family's
//!    `seed` as 4 little-endian bytes, then the n-gram bytes. `bucket = hash % dim`; counts add
//!    up over all families.
//! 4. `x = ln(1 + count)`, then L2-normalised (computed in f64, stored as f32).
//!
//! The work is bounded by `max_bytes` (4 KiB for `sqli`); text past the cap is not looked at.
//!
//! Two output forms of the same row, chosen by the spec's `input` field ([`InputForm`]):
//! - dense (`featurize_into`): all `dim` values; the old model input `features` [N, dim].
//! - sparse (`featurize_sparse`): only the non-zero `(bucket, value)` pairs, buckets ascending;
//!   the model input `indices`/`values` [N, K]. A short field has tens to a few thousand
//!   non-zeros out of 32,768, so this skips a 128 KB row per text and the full-width MatMul.
//!   Values are bit-identical to the dense row (same counts, same f64 sum in the same order).
//!
//! Neither allocates once its buffers have grown to the largest text seen.

use serde::Deserialize;

use super::ModelError;

const FNV_OFFSET: u32 = 0x811C_9DC5;
const FNV_PRIME: u32 = 0x0100_0193;
/// Longest word n-gram supported (the ring buffer of recent words is this long).
const MAX_WORD_N: usize = 8;
/// Longest byte n-gram supported.
const MAX_CHAR_N: usize = 16;

#[derive(Deserialize)]
struct Spec {
    dim: usize,
    max_bytes: usize,
    /// `"sparse"` or `"dense"`; absent = dense (models exported before the sparse graph).
    #[serde(default)]
    input: Option<String>,
    #[serde(default)]
    hash: Option<String>,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    lowercase: Option<String>,
    families: Vec<FamilySpec>,
}

#[derive(Deserialize)]
struct FamilySpec {
    kind: String,
    n: usize,
    seed: u32,
}

/// One n-gram family: its length and the FNV state after absorbing its seed.
#[derive(Clone, Copy, Debug)]
struct Family {
    n: usize,
    state: u32,
}

/// Which input the model graph takes (`featurizer.json` field `input`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputForm {
    /// `features` float32 [N, dim].
    Dense,
    /// `indices` int64 [N, K] + `values` float32 [N, K]; padding = index 0, value 0.0.
    Sparse,
}

/// Turns one text into a fixed-length, L2-normalised feature row.
#[derive(Clone, Debug)]
pub struct Featurizer {
    dim: usize,
    max_bytes: usize,
    input: InputForm,
    chars: Vec<Family>,
    words: Vec<Family>,
    max_word_n: usize,
}

#[inline(always)]
fn fnv_byte(h: u32, b: u8) -> u32 {
    (h ^ b as u32).wrapping_mul(FNV_PRIME)
}

/// Calls `f` with the hash of every byte window of length `N` (lower-cased), in order.
#[inline(always)]
fn char_grams<const N: usize>(bytes: &[u8], state: u32, f: &mut impl FnMut(u32)) {
    for w in bytes.windows(N) {
        let mut h = state;
        for &b in &w[..N] {
            h = fnv_byte(h, b.to_ascii_lowercase());
        }
        f(h);
    }
}

#[inline(always)]
fn is_word_byte(lower: u8) -> bool {
    lower.is_ascii_lowercase() || lower.is_ascii_digit() || lower >= 0x80
}

fn load_err(detail: String) -> ModelError {
    ModelError::LoadFailed { model: "featurizer", detail }
}

impl Featurizer {
    /// Parses a `featurizer.json` spec.
    pub fn from_json(text: &str) -> Result<Self, ModelError> {
        let spec: Spec = serde_json::from_str(text).map_err(|e| load_err(format!("bad featurizer.json: {e}")))?;
        if let Some(h) = &spec.hash {
            if h != "fnv1a32" {
                return Err(load_err(format!("unsupported hash `{h}`")));
            }
        }
        if let Some(v) = &spec.value {
            if v != "log1p_count_l2" {
                return Err(load_err(format!("unsupported value transform `{v}`")));
            }
        }
        if let Some(l) = &spec.lowercase {
            if l != "ascii" {
                return Err(load_err(format!("unsupported lowercase mode `{l}`")));
            }
        }
        if spec.dim == 0 || spec.dim > u32::MAX as usize {
            return Err(load_err(format!("dim {} out of range", spec.dim)));
        }
        if spec.max_bytes == 0 {
            return Err(load_err("max_bytes must be positive".into()));
        }
        let input = match spec.input.as_deref() {
            None | Some("dense") => InputForm::Dense,
            Some("sparse") => InputForm::Sparse,
            Some(other) => return Err(load_err(format!("unsupported input form `{other}`"))),
        };
        let mut chars = Vec::new();
        let mut words = Vec::new();
        for f in &spec.families {
            let state = f.seed.to_le_bytes().iter().fold(FNV_OFFSET, |h, &b| fnv_byte(h, b));
            match f.kind.as_str() {
                "char" if (1..=MAX_CHAR_N).contains(&f.n) => chars.push(Family { n: f.n, state }),
                "word" if (1..=MAX_WORD_N).contains(&f.n) => words.push(Family { n: f.n, state }),
                "char" | "word" => return Err(load_err(format!("{} n-gram length {} not supported", f.kind, f.n))),
                other => return Err(load_err(format!("unknown feature family `{other}`"))),
            }
        }
        if chars.is_empty() && words.is_empty() {
            return Err(load_err("no feature families".into()));
        }
        let max_word_n = words.iter().map(|f| f.n).max().unwrap_or(0);
        Ok(Featurizer { dim: spec.dim, max_bytes: spec.max_bytes, input, chars, words, max_word_n })
    }

    /// Reads and parses a `featurizer.json` file.
    pub fn from_path(path: &std::path::Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| load_err(format!("reading {}: {e}", path.display())))?;
        Self::from_json(&text)
    }

    /// Length of one feature row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Most bytes of a text that are looked at.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The model input this spec was exported with.
    pub fn input_form(&self) -> InputForm {
        self.input
    }

    /// Writes the feature row of `text` into `out` (overwritten entirely).
    ///
    /// # Panics
    /// When `out.len() != self.dim()`.
    pub fn featurize_into(&self, text: &str, out: &mut [f32]) {
        assert_eq!(out.len(), self.dim, "feature row has the wrong length");
        out.fill(0.0);
        self.for_each_bucket(text, |b| out[b] += 1.0);

        // log1p + L2 normalisation, in f64 like the trainer.
        let mut sumsq = 0.0f64;
        for &c in out.iter() {
            if c > 0.0 {
                let v = (c as f64).ln_1p();
                sumsq += v * v;
            }
        }
        if sumsq > 0.0 {
            let norm = sumsq.sqrt();
            for c in out.iter_mut() {
                if *c > 0.0 {
                    *c = ((*c as f64).ln_1p() / norm) as f32;
                }
            }
        }
    }

    /// Appends the non-zero features of `text` to `rows` as one more row: buckets ascending,
    /// values equal (bit for bit) to the non-zero entries of [`Self::featurize_into`].
    ///
    /// # Panics
    /// When `rows` was made for another `dim` ([`SparseRows::new`]).
    pub fn featurize_sparse(&self, text: &str, rows: &mut SparseRows) {
        assert_eq!(rows.counts.len(), self.dim, "SparseRows made for another dim");
        let SparseRows { counts, touched, indices, values, ends } = rows;
        touched.clear();
        self.for_each_bucket(text, |b| {
            // A count is at most the n-grams of one text (families x max_bytes), far below u32::MAX.
            counts[b] += 1;
            if counts[b] == 1 {
                touched.push(b as u32);
            }
        });
        // Ascending buckets: the order of the dense row, so the f64 sum below adds the same
        // terms in the same order and the values match the dense path exactly.
        touched.sort_unstable();
        let mut sumsq = 0.0f64;
        for &b in touched.iter() {
            let v = (counts[b as usize] as f64).ln_1p();
            sumsq += v * v;
        }
        let norm = sumsq.sqrt();
        for &b in touched.iter() {
            let c = std::mem::take(&mut counts[b as usize]); // leaves the scratch zeroed
            indices.push(i64::from(b));
            values.push(((c as f64).ln_1p() / norm) as f32);
        }
        ends.push(indices.len());
    }

    /// Calls `f(bucket)` once per n-gram occurrence of `text` (all families).
    #[inline(always)]
    fn for_each_bucket(&self, text: &str, mut f: impl FnMut(usize)) {
        // `h % dim` is an integer division per n-gram, most of the featurizer's time on long
        // texts; for a power-of-two dim (every shipped model) the same bucket is a mask.
        let dim = self.dim as u32;
        if dim.is_power_of_two() {
            self.for_each_hash(text, |h| f((h & (dim - 1)) as usize));
        } else {
            self.for_each_hash(text, |h| f((h % dim) as usize));
        }
    }

    /// Calls `f(hash)` once per n-gram occurrence of `text` (all families).
    #[inline(always)]
    fn for_each_hash(&self, text: &str, mut f: impl FnMut(u32)) {
        let raw = text.as_bytes();
        let bytes = &raw[..raw.len().min(self.max_bytes)];
        let len = bytes.len();
        if len == 0 {
            return;
        }

        // Byte n-grams. Lower-casing on the fly keeps this allocation-free; a fixed n lets the
        // compiler unroll the hash and drop the bounds checks (4x faster than a runtime n).
        for fam in &self.chars {
            match fam.n {
                1 => char_grams::<1>(bytes, fam.state, &mut f),
                2 => char_grams::<2>(bytes, fam.state, &mut f),
                3 => char_grams::<3>(bytes, fam.state, &mut f),
                4 => char_grams::<4>(bytes, fam.state, &mut f),
                5 => char_grams::<5>(bytes, fam.state, &mut f),
                6 => char_grams::<6>(bytes, fam.state, &mut f),
                n => {
                    for w in bytes.windows(n) {
                        f(w.iter().fold(fam.state, |h, &b| fnv_byte(h, b.to_ascii_lowercase())));
                    }
                }
            }
        }

        // Word n-grams over a ring buffer of the last `max_word_n` word spans.
        if !self.words.is_empty() {
            let mut ring = [(0usize, 0usize); MAX_WORD_N];
            let mut count = 0usize;
            let mut i = 0usize;
            while i < len {
                if !is_word_byte(bytes[i].to_ascii_lowercase()) {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < len && is_word_byte(bytes[i].to_ascii_lowercase()) {
                    i += 1;
                }
                ring[count % MAX_WORD_N] = (start, i);
                count += 1;
                for fam in &self.words {
                    if count < fam.n {
                        continue;
                    }
                    let mut h = fam.state;
                    for k in 0..fam.n {
                        if k > 0 {
                            h = fnv_byte(h, b' ');
                        }
                        let (s, e) = ring[(count - fam.n + k) % MAX_WORD_N];
                        for &b in &bytes[s..e] {
                            h = fnv_byte(h, b.to_ascii_lowercase());
                        }
                    }
                    f(h);
                }
            }
            debug_assert!(self.max_word_n <= MAX_WORD_N);
        }
    }
}

/// The sparse feature rows of a batch (CSR-like: row `i` is `ends[i-1]..ends[i]`) plus the
/// per-bucket scratch counts. Made once per executor and reused: [`Self::clear`] keeps the
/// capacity, and the scratch is left zeroed after every row.
#[derive(Clone, Debug)]
pub struct SparseRows {
    /// `dim` counters; all zero between rows.
    counts: Vec<u32>,
    /// Buckets seen in the current row, in first-seen order until sorted.
    touched: Vec<u32>,
    indices: Vec<i64>,
    values: Vec<f32>,
    ends: Vec<usize>,
}

impl SparseRows {
    pub fn new(dim: usize) -> Self {
        SparseRows { counts: vec![0; dim], touched: Vec::new(), indices: Vec::new(), values: Vec::new(), ends: Vec::new() }
    }

    /// Drops the rows, keeps the buffers.
    pub fn clear(&mut self) {
        self.indices.clear();
        self.values.clear();
        self.ends.clear();
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Row `i`: its buckets (ascending) and values.
    pub fn row(&self, i: usize) -> (&[i64], &[f32]) {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let end = self.ends[i];
        (&self.indices[start..end], &self.values[start..end])
    }

    /// Non-zeros of row `i`.
    pub fn nnz(&self, i: usize) -> usize {
        self.row(i).0.len()
    }

    /// The most non-zeros of any row (0 when there is none).
    pub fn max_nnz(&self) -> usize {
        (0..self.len()).map(|i| self.nnz(i)).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"{"dim": 1024, "max_bytes": 64, "hash": "fnv1a32", "value": "log1p_count_l2",
        "lowercase": "ascii",
        "families": [{"kind": "char", "n": 1, "seed": 1}, {"kind": "char", "n": 3, "seed": 3},
                     {"kind": "word", "n": 1, "seed": 11}, {"kind": "word", "n": 2, "seed": 12}]}"#;

    fn row(f: &Featurizer, text: &str) -> Vec<f32> {
        let mut out = vec![7.0; f.dim()];
        f.featurize_into(text, &mut out);
        out
    }

    fn fnv(seed: u32, data: &[u8]) -> u32 {
        let h = seed.to_le_bytes().iter().fold(FNV_OFFSET, |h, &b| fnv_byte(h, b));
        data.iter().fold(h, |h, &b| fnv_byte(h, b))
    }

    #[test]
    fn fnv1a_reference_values() {
        // Standard FNV-1a test vectors (no seed absorbed).
        let plain = |d: &[u8]| d.iter().fold(FNV_OFFSET, |h, &b| fnv_byte(h, b));
        assert_eq!(plain(b""), 0x811c9dc5);
        assert_eq!(plain(b"a"), 0xe40c292c);
        assert_eq!(plain(b"foobar"), 0xbf9cf968);
    }

    #[test]
    fn empty_text_is_all_zero() {
        let f = Featurizer::from_json(SPEC).unwrap();
        assert!(row(&f, "").iter().all(|&x| x == 0.0));
        assert!(row(&f, "").len() == 1024);
    }

    #[test]
    fn unit_norm_and_case_folding() {
        let f = Featurizer::from_json(SPEC).unwrap();
        let a = row(&f, "Hello World");
        let b = row(&f, "hello world");
        assert_eq!(a, b);
        let norm: f64 = a.iter().map(|&x| (x as f64) * (x as f64)).sum();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
    }

    #[test]
    fn exact_buckets_for_tiny_text() {
        // "ab": char1 "a","b"; char3 none; word1 "ab"; word2 none -> 3 buckets of count 1.
        let f = Featurizer::from_json(SPEC).unwrap();
        let r = row(&f, "AB");
        let mut expect = vec![0.0f64; 1024];
        for (seed, d) in [(1u32, &b"a"[..]), (1, b"b"), (11, b"ab")] {
            expect[(fnv(seed, d) % 1024) as usize] += 1.0;
        }
        let v: Vec<f64> = expect.iter().map(|&c| if c > 0.0 { f64::ln_1p(c) } else { 0.0 }).collect();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        for i in 0..1024 {
            assert!((r[i] as f64 - v[i] / n).abs() < 1e-6, "bucket {i}");
        }
    }

    #[test]
    fn word_bigrams_join_with_space() {
        let spec = r#"{"dim": 4096, "max_bytes": 64, "families": [{"kind": "word", "n": 2, "seed": 5}]}"#;
        let f = Featurizer::from_json(spec).unwrap();
        let r = row(&f, "  Foo, bar!! ");
        let b = (fnv(5, b"foo bar") % 4096) as usize;
        assert!((r[b] - 1.0).abs() < 1e-6);
        assert_eq!(r.iter().filter(|&&x| x != 0.0).count(), 1);
    }

    #[test]
    fn non_ascii_bytes_are_word_bytes_and_not_folded() {
        let spec = r#"{"dim": 4096, "max_bytes": 64, "families": [{"kind": "word", "n": 1, "seed": 5}]}"#;
        let f = Featurizer::from_json(spec).unwrap();
        let r = row(&f, "CAFÉ");
        let b = (fnv(5, "cafÉ".as_bytes()) % 4096) as usize;
        assert!((r[b] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn long_text_is_capped() {
        let f = Featurizer::from_json(SPEC).unwrap();
        let long = "x".repeat(64) + " union select";
        assert_eq!(row(&f, &long), row(&f, &"x".repeat(64)));
        // A cap inside a multi-byte character must not panic.
        let multi = "é".repeat(100);
        let _ = row(&f, &multi);
    }

    #[test]
    fn sparse_row_equals_dense_non_zeros_exactly() {
        let f = Featurizer::from_json(SPEC).unwrap();
        let texts = [
            "",
            "a",
            "AB",
            "1' UNION SELECT username, password FROM users--",
            "O'Brien",
            "CAFÉ naïve 日本語",
            &"x".repeat(200),
            "aaaa aaaa aaaa",
        ];
        let mut rows = SparseRows::new(f.dim());
        for t in texts {
            f.featurize_sparse(t, &mut rows);
        }
        assert_eq!(rows.len(), texts.len());
        for (i, t) in texts.iter().enumerate() {
            let dense = row(&f, t);
            let (idx, val) = rows.row(i);
            let want: Vec<(i64, f32)> = dense.iter().enumerate().filter(|(_, &v)| v != 0.0).map(|(j, &v)| (j as i64, v)).collect();
            let got: Vec<(i64, f32)> = idx.iter().copied().zip(val.iter().copied()).collect();
            assert_eq!(got, want, "text {t:?}");
        }
        assert_eq!(rows.row(0).0.len(), 0, "empty text has no features");
        assert!(rows.max_nnz() > 0);
        // The scratch is left zeroed: a repeat after clear gives the same rows.
        let first: Vec<i64> = rows.row(3).0.to_vec();
        rows.clear();
        assert!(rows.is_empty());
        f.featurize_sparse(texts[3], &mut rows);
        assert_eq!(rows.row(0).0, &first[..]);
    }

    #[test]
    fn input_form_from_spec() {
        assert_eq!(Featurizer::from_json(SPEC).unwrap().input_form(), InputForm::Dense);
        let sparse = SPEC.replacen("\"dim\"", "\"input\": \"sparse\", \"dim\"", 1);
        assert_eq!(Featurizer::from_json(&sparse).unwrap().input_form(), InputForm::Sparse);
        let bad = SPEC.replacen("\"dim\"", "\"input\": \"ragged\", \"dim\"", 1);
        assert!(Featurizer::from_json(&bad).is_err());
    }

    #[test]
    fn rejects_bad_specs() {
        assert!(Featurizer::from_json("{").is_err());
        assert!(Featurizer::from_json(r#"{"dim": 0, "max_bytes": 8, "families": [{"kind":"char","n":1,"seed":1}]}"#).is_err());
        assert!(Featurizer::from_json(r#"{"dim": 8, "max_bytes": 8, "families": [{"kind":"bpe","n":1,"seed":1}]}"#).is_err());
        assert!(Featurizer::from_json(r#"{"dim": 8, "max_bytes": 8, "families": [{"kind":"word","n":9,"seed":1}]}"#).is_err());
        assert!(
            Featurizer::from_json(r#"{"dim": 8, "max_bytes": 8, "hash": "md5", "families": [{"kind":"char","n":1,"seed":1}]}"#).is_err()
        );
        assert!(Featurizer::from_json(r#"{"dim": 8, "max_bytes": 8, "families": []}"#).is_err());
    }
}
