//! Auth-subrequest header parsing under fuzzing (feature `fuzzing`; also built for this
//! crate's unit tests): arbitrary headers in, [`Original`] out, and the properties the adapter
//! relies on. fuzz/fuzz_targets/auth_headers.rs is a thin wrapper.

use gate::fuzzing::{headers_from, Bytes};
use hyper::Method;

use crate::original::{Original, URI_HEADERS};

/// The URI comes from the first non-empty URI header and nowhere else (a request without one
/// is refused, never scored as `/`); no header the line was read from is scored again as the
/// client's; every other client header is scored, byte for byte.
pub fn auth_headers(data: &[u8]) {
    let mut input = Bytes(data);
    let subrequest = [Method::GET, Method::POST, Method::HEAD][input.byte() as usize % 3].clone();
    let headers = headers_from(&mut input, 32);
    let Ok(original) = Original::read(&headers, &subrequest) else {
        assert!(
            URI_HEADERS.iter().all(|name| headers.get(*name).is_none_or(|v| v.is_empty())),
            "refused although a URI header was given: {headers:?}"
        );
        return;
    };
    let (from_name, from) = URI_HEADERS
        .iter()
        .find_map(|name| headers.get(*name).filter(|v| !v.is_empty()).map(|v| (*name, v)))
        .expect("read a URI from some header");
    assert_eq!(original.uri, String::from_utf8_lossy(from.as_bytes()), "the URI is not the first URI header's value");
    let (path, query) = original.path_and_query();
    assert!(original.uri.starts_with(path) && !path.contains('?'));
    assert!(original.uri.ends_with(query));
    assert!(!original.method.is_empty());

    let scored = original.scored_headers(&headers);
    let client: Vec<(&str, &[u8])> =
        headers.iter().filter(|(name, _)| !original.is_plumbing(name.as_str())).map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
    assert_eq!(&scored[..client.len()], &client[..], "a client header was dropped or changed");
    assert!(scored.iter().all(|(name, _)| *name != from_name), "{from_name}, the URI's source, was scored as the client's");
    match &original.content_type {
        Some(content_type) => assert_eq!(scored.last(), Some(&("content-type", content_type.as_bytes()))),
        None => assert_eq!(scored.len(), client.len()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_uri_header_and_its_plumbing() {
        super::auth_headers(b"\x00x-original-uri: /a?b=1\xffx-forwarded-uri: /other\xffx-original-content-type: text/plain\xffcookie: c=1");
        super::auth_headers(b"\x01cookie: c=1\xffx-original-uri:\xffx-original-url: /x");
        super::auth_headers(b"");
    }
}
