//! The generative evasion suite: for each attack family, a small grammar that builds payloads
//! from the family's syntax (not from a payload list) and mutates them the way attackers do
//! (encodings, case, comments, concatenation, whitespace, quoting). Seeded, so a failing
//! variant is reproducible from `(family, seed, index)`.
//!
//! Used by the tests (a bounded sample per family, `make test`) and by `rampart eval
//! --evasion` (the full run: recall per family and per mutation).

pub mod families;
pub mod mutate;
pub mod place;
mod rng;

pub use families::{families, family};
pub use place::{Placement, Request};
pub use rng::Rng;

/// How a variant travels.
#[derive(Clone, Debug, PartialEq)]
pub enum Carrier {
    /// A value the harness may place in any field (query, form, JSON, header, cookie, XML...).
    Value,
    /// A value that only makes sense in this header (a scanner User-Agent, a JNDI lookup in
    /// X-Api-Version); the name is lower-case.
    Header(&'static str),
    /// A whole request (protocol anomalies, GraphQL batches): placed as it is.
    Request(Request),
}

/// One generated attack.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// The family's name (see [`families`]).
    pub family: &'static str,
    /// The mutations applied, `+`-joined in order (`base` when none), for the per-mutation
    /// table.
    pub mutation: String,
    /// The attack text (for [`Carrier::Request`], a short description of the request).
    pub payload: String,
    pub carrier: Carrier,
}

/// One attack family's grammar.
pub trait Family: Sync {
    /// Short kebab-case name, such as `xss-js-expression`.
    fn name(&self) -> &'static str;
    /// The detector slug expected to catch it (any detector catching it counts as recall;
    /// this one is reported as `own`).
    fn detector(&self) -> &'static str;
    /// One variant; every random choice comes from `rng`.
    fn generate(&self, rng: &mut Rng) -> Variant;
}

/// `n` variants of `family` from `seed`: the same arguments always give the same variants.
pub fn sample(family: &dyn Family, seed: u64, n: usize) -> Vec<Variant> {
    let mut rng = Rng::new(seed ^ fnv1a(family.name()));
    (0..n).map(|_| family.generate(&mut rng)).collect()
}

/// Stable per-family seed offset, so families drawn with one seed do not share a stream.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}
