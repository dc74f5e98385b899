//! How a scope names the requests it covers: a host (exact or `*.example.com`), a path (a
//! prefix, or a glob when it holds `*`) and methods. Each parses while the file is read, so a
//! bad pattern is reported at its line. Each also says how specific it is: resolution applies
//! the matching scopes from the least to the most specific (docs/POLICY.md).

use std::fmt;

use serde::Deserialize;

/// `shop.example.com` (exact) or `*.example.com` (any name ending in `.example.com`, not the
/// bare `example.com`). Compared lower-case, without the port.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum HostPattern {
    Exact(String),
    /// The suffix with its leading dot: `.example.com`.
    Wildcard(String),
}

impl TryFrom<String> for HostPattern {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let host = text.trim().to_ascii_lowercase();
        let bare = host.strip_prefix("*.").unwrap_or(&host);
        if bare.is_empty() || bare.contains(['*', '/', ':', ' ', '@']) {
            return Err(format!("`{text}` is not a host: a name like `shop.example.com` or `*.example.com` (no scheme, port or path)"));
        }
        Ok(match host.strip_prefix('*') {
            Some(suffix) => HostPattern::Wildcard(suffix.to_string()),
            None => HostPattern::Exact(host),
        })
    }
}

impl HostPattern {
    /// `host` lower-case and without its port.
    pub fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Exact(name) => host == name,
            HostPattern::Wildcard(suffix) => host.len() > suffix.len() && host.ends_with(suffix.as_str()),
        }
    }

    /// An exact name beats any wildcard; a longer wildcard beats a shorter one.
    pub fn rank(&self) -> (u8, usize) {
        match self {
            HostPattern::Exact(name) => (2, name.len()),
            HostPattern::Wildcard(suffix) => (1, suffix.len()),
        }
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostPattern::Exact(name) => f.write_str(name),
            HostPattern::Wildcard(suffix) => write!(f, "*{suffix}"),
        }
    }
}

/// A path without `*` is a prefix on segment boundaries (`/api` covers `/api` and `/api/x`,
/// not `/apix`; `/api/` covers everything under it). With `*` it is a glob over the whole
/// path: `*` is any run of characters but `/`, `**` any run at all.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct PathPattern {
    text: String,
    glob: bool,
}

impl TryFrom<String> for PathPattern {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        if !text.starts_with('/') || text.contains(['?', '#', ' ']) {
            return Err(format!("`{text}` is not a path pattern: it starts with `/` and holds no query (`?`), `#` or space"));
        }
        if text.contains("***") {
            return Err(format!("`{text}`: use `*` (within a segment) or `**` (across segments)"));
        }
        let glob = text.contains('*');
        Ok(PathPattern { text, glob })
    }
}

impl PathPattern {
    pub fn matches(&self, path: &str) -> bool {
        if self.glob {
            return glob_match(self.text.as_bytes(), path.as_bytes());
        }
        match path.strip_prefix(self.text.as_str()) {
            Some(rest) => rest.is_empty() || self.text.ends_with('/') || rest.starts_with('/'),
            None => false,
        }
    }

    /// Longer literal text is more specific; at equal length a prefix beats a glob.
    pub fn rank(&self) -> (usize, u8) {
        (self.text.bytes().filter(|&b| b != b'*').count(), u8::from(!self.glob))
    }
}

impl fmt::Display for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Iterative glob: on a mismatch the last `*` takes one more character (never a `/`); when
/// it cannot, the last `**` does. Linear in practice, no recursion.
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // (pattern index after the star, text index the star's match ends at)
    let mut single: Option<(usize, usize)> = None;
    let mut deep: Option<(usize, usize)> = None;
    while t < text.len() {
        if pattern.get(p) == Some(&b'*') {
            if pattern.get(p + 1) == Some(&b'*') {
                p += 2;
                deep = Some((p, t));
                single = None;
            } else {
                p += 1;
                single = Some((p, t));
            }
        } else if pattern.get(p) == Some(&text[t]) {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = single.filter(|&(_, st)| text[st] != b'/') {
            single = Some((sp, st + 1));
            (p, t) = (sp, st + 1);
        } else if let Some((dp, dt)) = deep {
            single = None;
            deep = Some((dp, dt + 1));
            (p, t) = (dp, dt + 1);
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

/// HTTP methods, upper-case; parsed while the file is read.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct Methods(pub Vec<String>);

impl TryFrom<Vec<String>> for Methods {
    type Error = String;

    fn try_from(names: Vec<String>) -> Result<Self, String> {
        if names.is_empty() {
            return Err("`methods` is empty: leave it out to match every method".into());
        }
        let upper: Vec<String> = names.iter().map(|m| m.trim().to_ascii_uppercase()).collect();
        match upper.iter().find(|m| m.is_empty() || !m.bytes().all(|b| b.is_ascii_alphabetic())) {
            Some(bad) => Err(format!("`{bad}` is not an HTTP method")),
            None => Ok(Methods(upper)),
        }
    }
}

impl Methods {
    pub fn matches(&self, method: &str) -> bool {
        self.0.iter().any(|m| m.eq_ignore_ascii_case(method))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> PathPattern {
        PathPattern::try_from(p.to_string()).unwrap()
    }

    #[test]
    fn prefixes_stop_at_segments() {
        assert!(path("/api").matches("/api"));
        assert!(path("/api").matches("/api/users"));
        assert!(!path("/api").matches("/apix"));
        assert!(path("/api/").matches("/api/users"));
        assert!(path("/").matches("/anything"));
    }

    #[test]
    fn globs_match_the_whole_path() {
        assert!(path("/users/*/comments").matches("/users/42/comments"));
        assert!(!path("/users/*/comments").matches("/users/4/2/comments"));
        assert!(path("/static/**").matches("/static/a/b/c.js"));
        assert!(path("/**.php").matches("/a/b/index.php"));
        assert!(!path("/*.php").matches("/a/index.php"));
        assert!(!path("/users/*").matches("/users"));
        assert!(path("/**/x/*.js").matches("/a/b/x/c.js"));
        assert!(!path("/**/x/*.js").matches("/a/x/b/c.js"));
    }

    #[test]
    fn hosts() {
        let wild = HostPattern::try_from("*.Example.com".to_string()).unwrap();
        assert!(wild.matches("shop.example.com"));
        assert!(!wild.matches("example.com"));
        assert!(HostPattern::try_from("http://x".to_string()).is_err());
        assert!(HostPattern::Exact("a.example.com".into()).rank() > wild.rank());
    }
}
