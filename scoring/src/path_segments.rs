//! What the SQLi model reads of a path besides the whole path. A routed API takes its ids from
//! path segments (`/products/<id>/reviews`), so an injection arrives as one segment between
//! benign ones; read whole, the route's words dilute the injection's n-grams (a payload that
//! scores 0.97 as a query value scored 0.36 inside `/products/…/reviews`).

/// The segments of `path` the SQLi model reads on their own: those the gate selects
/// (`gated`), when the path has more than one segment (a one-segment path is already read
/// whole). A segment keeps the slashes of an injection that contains `/*` comments: it ends at
/// a `/` only when that slash does not open or close a comment.
pub fn path_sql_segments(path: &str, gated: impl Fn(&str) -> bool) -> Vec<&str> {
    let segments = split_segments(path);
    if segments.len() < 2 {
        return Vec::new();
    }
    segments.into_iter().filter(|s| s.len() >= MIN_SEGMENT_BYTES && gated(s)).collect()
}

/// The shortest segment worth a model call (`1 or 1`).
pub const MIN_SEGMENT_BYTES: usize = 6;

/// `path` cut at each `/` that is neither part of `/*` nor of `*/`, empty pieces dropped.
fn split_segments(path: &str) -> Vec<&str> {
    let bytes = path.as_bytes();
    let mut segments = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let comment = bytes.get(i + 1) == Some(&b'*') || (i > 0 && bytes[i - 1] == b'*');
        if b == b'/' && !comment {
            if i > start {
                segments.push(&path[start..i]);
            }
            start = i + 1;
        }
    }
    if start < path.len() {
        segments.push(&path[start..]);
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any(_: &str) -> bool {
        true
    }

    #[test]
    fn a_payload_segment_is_read_alone() {
        let segments = path_sql_segments("/products/1' or '1'='1/reviews", |s| s.contains('\''));
        assert_eq!(segments, vec!["1' or '1'='1"]);
    }

    #[test]
    fn comment_slashes_stay_inside_the_segment() {
        let segments = path_sql_segments("/item/1/**/union/**/select/**/1,2/detail", |s| s.contains("union"));
        assert_eq!(segments, vec!["1/**/union/**/select/**/1,2"]);
    }

    #[test]
    fn one_segment_paths_and_short_segments_add_nothing() {
        assert!(path_sql_segments("/1' or 1=1--", any).is_empty());
        assert!(path_sql_segments("/a/b/c", any).is_empty());
    }
}
