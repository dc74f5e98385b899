//! ext_proc message handling under fuzzing (feature `fuzzing`; also built for this crate's
//! unit tests): arbitrary bytes decoded as a stream of `ProcessingRequest`s, each answered by
//! the door's [`Exchange`] without a server, the judge ruling as the first byte says. The
//! properties: every message with a phase gets one answer of its own phase (or an immediate
//! response, and only when the ruling stops the request); a message without a phase is an
//! error, never an answer; a header mutation leaves no X-Waf-* header the client sent.
//! fuzz/fuzz_targets/extproc_messages.rs is a thin wrapper.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use gate::decision::{Action, Decision, Effect, WafMode};
use gate::errors::ScoreError;
use gate::gate::Ruling;
use gate::scorer::{ScoreQuery, Verdict};
use prost::Message;
use proto::processing_request::Request as Phase;
use proto::processing_response::Response as Answer;
use proto::ProcessingRequest;

use crate::exchange::{Exchange, Judge, RequestLine};

/// Rules every request the same way, at once.
struct FixedJudge {
    effect: Effect,
}

impl Judge for FixedJudge {
    fn judge(
        &self,
        _query: ScoreQuery,
        _request: &RequestLine,
        _truncated: bool,
    ) -> impl Future<Output = Result<Ruling, ScoreError>> + Send {
        let action = match self.effect {
            Effect::Forward => Action::Passed,
            Effect::Kill => Action::ActiveKill,
            Effect::Refuse => Action::Error,
        };
        let verdict = Verdict { score: 0.9, reason: "sqli:union".into(), detector: "sqli".into(), ..Default::default() };
        let decision = Decision { action, effect: self.effect, cause: None };
        std::future::ready(Ok(Ruling::new(WafMode::Active, decision, Ok(verdict), Duration::ZERO)))
    }
}

/// The fixed judge never waits, so neither may the exchange.
fn run_now<T>(future: impl Future<Output = T>) -> T {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("the exchange waited although its judge answers at once"),
    }
}

pub fn extproc_messages(data: &[u8]) {
    let (head, mut rest) = data.split_at(data.len().min(2));
    let effect = [Effect::Forward, Effect::Kill, Effect::Refuse][head.first().copied().unwrap_or(0) as usize % 3];
    let body_limit = head.get(1).copied().unwrap_or(0) as usize * 64;
    let judge = FixedJudge { effect };
    let mut exchange = Exchange::new(body_limit);
    let mut forged: Vec<String> = Vec::new();
    // Messages: a 2-byte length, then that many bytes of protobuf.
    while rest.len() >= 2 {
        let len = u16::from_le_bytes([rest[0], rest[1]]) as usize;
        let (frame, after) = rest[2..].split_at(len.min(rest.len() - 2));
        rest = after;
        // Bytes that are not a message never reach the exchange (tonic refuses them).
        let Ok(message) = ProcessingRequest::decode(frame) else { continue };
        let phase = message.request.clone();
        if let Some(Phase::RequestHeaders(headers)) = &phase {
            let keys = headers.headers.iter().flat_map(|map| map.headers.iter()).map(|h| h.key.to_ascii_lowercase());
            forged.extend(keys.filter(|k| k.starts_with("x-waf-")));
        }
        let answered = run_now(exchange.answer(message, &judge));
        let Some(phase) = phase else {
            assert!(answered.is_err(), "a message without a phase was answered");
            continue;
        };
        let answer = answered.expect("a message with a phase is answered").response.expect("the answer has a phase");
        check_answer(&phase, &answer, effect, &forged);
    }
}

fn check_answer(phase: &Phase, answer: &Answer, effect: Effect, forged: &[String]) {
    let request_phase = matches!(phase, Phase::RequestHeaders(_) | Phase::RequestBody(_) | Phase::RequestTrailers(_));
    match (phase, answer) {
        (_, Answer::ImmediateResponse(immediate)) => {
            assert!(request_phase, "an immediate response to a response phase");
            let code = immediate.status.as_ref().map_or(0, |s| s.code);
            match effect {
                Effect::Kill => assert_eq!(code, 403),
                Effect::Refuse => assert_eq!(code, 503),
                Effect::Forward => panic!("a forwarded request got an immediate response {code}"),
            }
        }
        (Phase::RequestHeaders(_), Answer::RequestHeaders(headers)) => check_mutation(headers.response.as_ref(), forged),
        (Phase::RequestBody(_), Answer::RequestBody(body)) => check_mutation(body.response.as_ref(), forged),
        (Phase::RequestTrailers(_), Answer::RequestTrailers(_)) => {}
        (Phase::ResponseHeaders(_), Answer::ResponseHeaders(h)) => assert!(h.response.is_none(), "a response phase was changed"),
        (Phase::ResponseBody(_), Answer::ResponseBody(b)) => assert!(b.response.is_none(), "a response phase was changed"),
        (Phase::ResponseTrailers(_), Answer::ResponseTrailers(t)) => assert!(t.header_mutation.is_none(), "a response phase was changed"),
        (phase, answer) => panic!("{phase:?} answered with {answer:?}"),
    }
}

/// A mutation (the ruling's headers) sets or removes every X-Waf-* header the client sent.
fn check_mutation(response: Option<&proto::CommonResponse>, forged: &[String]) {
    let Some(mutation) = response.and_then(|r| r.header_mutation.as_ref()) else { return };
    let set: Vec<&str> = mutation.set_headers.iter().filter_map(|h| h.header.as_ref()).map(|h| h.key.as_str()).collect();
    for name in forged {
        assert!(set.contains(&name.as_str()) || mutation.remove_headers.contains(name), "forged {name} survives the mutation");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::{HeaderMap, HeaderValue, HttpHeaders};

    fn framed(messages: &[ProcessingRequest]) -> Vec<u8> {
        let mut out = Vec::new();
        for m in messages {
            let bytes = m.encode_to_vec();
            out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        out
    }

    #[test]
    fn a_forged_verdict_header_is_removed_or_overwritten_under_every_ruling() {
        let header = |key: &str, value: &str| HeaderValue { key: key.into(), raw_value: value.as_bytes().to_vec(), ..Default::default() };
        let headers = HttpHeaders {
            headers: Some(HeaderMap {
                headers: vec![
                    header(":method", "GET"),
                    header(":path", "/a?b=1"),
                    header("X-Waf-Score", "0.0"),
                    header("x-waf-other", "1"),
                ],
            }),
            end_of_stream: true,
            ..Default::default()
        };
        let messages =
            [ProcessingRequest { request: Some(Phase::RequestHeaders(headers)), ..Default::default() }, ProcessingRequest::default()];
        for effect in 0..3u8 {
            let mut data = vec![effect, 4];
            data.extend(framed(&messages));
            extproc_messages(&data);
        }
        extproc_messages(&[]);
        extproc_messages(&[0, 0, 5, 0, 0xff, 0xff, 0xff]);
    }
}
