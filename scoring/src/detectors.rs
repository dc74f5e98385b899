//! The detector catalog: every slug of spec section 1 and what backs it, then the families the
//! spec has no slug for (issue 12): PHP and Java code injection, server-side includes, GraphQL
//! abuse, mail command injection, scanner fingerprints, HTTP protocol anomalies, prototype
//! pollution and session fixation. The spec's
//! 14 slugs keep their meaning and order; the new ones follow them.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backing {
    Model,
    Regex,
}

#[derive(Clone, Copy, Debug)]
pub struct DetectorInfo {
    pub slug: &'static str,
    pub backing: Backing,
}

/// Index into [`DETECTORS`].
pub type DetectorId = usize;

pub const SQLI: DetectorId = 0;
pub const XSS: DetectorId = 1;
pub const PROMPT_INJECTION: DetectorId = 2;

/// Spec 4.2 rule 2: an XSS match scores exactly this on `/score/xss` and everywhere else.
pub const XSS_MATCH_SCORE: f32 = 0.95;

/// How many detectors the spec names (section 1); the rest of [`DETECTORS`] are Rampart's own.
pub const SPEC_DETECTORS: usize = 14;

/// Spec section 1 order, then Rampart's own. sqli and prompt-injection are model-backed; the
/// rest are patterns and code detectors (the `syntax` crate), reported as `regex` because the
/// spec's `/health` knows only `model` and `regex`.
pub const DETECTORS: [DetectorInfo; 23] = [
    DetectorInfo { slug: "sqli", backing: Backing::Model },
    DetectorInfo { slug: "xss", backing: Backing::Regex },
    DetectorInfo { slug: "prompt-injection", backing: Backing::Model },
    DetectorInfo { slug: "nosqli", backing: Backing::Regex },
    DetectorInfo { slug: "command-injection", backing: Backing::Regex },
    DetectorInfo { slug: "ssti", backing: Backing::Regex },
    DetectorInfo { slug: "path-traversal", backing: Backing::Regex },
    DetectorInfo { slug: "ldap-injection", backing: Backing::Regex },
    DetectorInfo { slug: "xpath-injection", backing: Backing::Regex },
    DetectorInfo { slug: "ssrf", backing: Backing::Regex },
    DetectorInfo { slug: "xxe", backing: Backing::Regex },
    DetectorInfo { slug: "deserialization", backing: Backing::Regex },
    DetectorInfo { slug: "open-redirect", backing: Backing::Regex },
    DetectorInfo { slug: "crlf", backing: Backing::Regex },
    DetectorInfo { slug: "php-injection", backing: Backing::Regex },
    DetectorInfo { slug: "java-injection", backing: Backing::Regex },
    DetectorInfo { slug: "ssi", backing: Backing::Regex },
    DetectorInfo { slug: "graphql", backing: Backing::Regex },
    DetectorInfo { slug: "mail-injection", backing: Backing::Regex },
    DetectorInfo { slug: "scanner", backing: Backing::Regex },
    DetectorInfo { slug: "protocol", backing: Backing::Regex },
    DetectorInfo { slug: "prototype-pollution", backing: Backing::Regex },
    DetectorInfo { slug: "session-fixation", backing: Backing::Regex },
];

pub fn detector_id(slug: &str) -> Option<DetectorId> {
    DETECTORS.iter().position(|d| d.slug == slug)
}
