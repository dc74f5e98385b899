//! The model queue's own metrics over real sockets: a proxy scoring in process with the
//! repo's models, requests with prose (the prompt-injection model must read it), then
//! `/metrics` scraped from the proxy's listener. The series come from the queue's atomics, so
//! what is asserted here is what the queue did: batches ran, the queue emptied, and a client
//! over its lane (RAMPART_MODEL_CLIENT_QUEUE 1) had its texts shed.

mod common;

use std::time::{Duration, Instant};

use common::proxy::{engine_with, get, metrics_text, send, start_proxy_on, upstream};

/// The queues' stats are process-wide per model name, so the two tests must not overlap: one
/// would see the other's batches and sheds.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Two prose fields: two texts for the prompt-injection model in one request.
fn two_questions(n: usize) -> String {
    format!(
        "/ask?q=Could+you+please+tell+me+more+about+the+opening+hours+of+the+library+on+day+{n}\
         &r=We+would+also+like+to+know+whether+the+reading+room+is+quiet+enough+for+study+group+{n}"
    )
}

/// The sum over every model of the samples of `metric` whose labels contain `with` (all
/// models: which queue a text reaches first depends on the prompt-injection cascade setting).
fn total(text: &str, metric: &str, with: &str) -> f64 {
    text.lines()
        .filter_map(|line| line.strip_prefix(metric)?.strip_prefix('{'))
        .filter(|rest| rest.contains(with))
        .filter_map(|rest| rest.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

async fn depth_returns_to_zero(addr: std::net::SocketAddr) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = metrics_text(addr).await;
        if total(&text, "waf_model_queue_depth", "model=") == 0.0 {
            return text;
        }
        assert!(Instant::now() < deadline, "the model queues never emptied:\n{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_that_reach_the_model_grow_the_batch_histogram_and_leave_the_queue_empty() {
    let _serial = SERIAL.lock().await;
    // No score cache: every request must run the model.
    let engine = engine_with(&["--model-cache-entries", "0"]);
    let app = upstream().await;
    let proxy = start_proxy_on(engine, app.addr, &[]);
    let before = metrics_text(proxy.addr).await;
    assert!(before.contains("# TYPE waf_model_batch_size histogram"), "{before}");
    assert!(before.contains("waf_model_queue_depth{model=\"prompt-injection\"}"), "{before}");

    const REQUESTS: usize = 6;
    for n in 0..REQUESTS {
        let reply = send(proxy.addr, get(&two_questions(n))).await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
    }
    let after = depth_returns_to_zero(proxy.addr).await;
    let calls = total(&after, "waf_model_batch_size_count", "model=") - total(&before, "waf_model_batch_size_count", "model=");
    let texts = total(&after, "waf_model_batch_size_sum", "model=") - total(&before, "waf_model_batch_size_sum", "model=");
    println!("{REQUESTS} requests: {calls} executor calls, {texts} texts");
    assert!(calls >= REQUESTS as f64, "each sequential request runs the model at least once: {calls} calls");
    assert!(texts >= 2.0 * REQUESTS as f64, "both prose fields of every request were scored: {texts} texts");
    let timed = total(&after, "waf_model_batch_seconds_count", "model=") - total(&before, "waf_model_batch_seconds_count", "model=");
    assert_eq!(timed, calls, "every executor call is timed");
    assert_eq!(
        total(&after, "waf_model_shed_texts_total", "reason=") - total(&before, "waf_model_shed_texts_total", "reason="),
        0.0,
        "nothing was shed:\n{after}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_over_its_model_lane_is_shed_and_counted() {
    let _serial = SERIAL.lock().await;
    // A lane of one text: a request with two prose fields cannot be queued at all.
    let engine = engine_with(&["--model-cache-entries", "0", "--model-client-queue", "1"]);
    let app = upstream().await;
    let proxy = start_proxy_on(engine, app.addr, &[]);
    let before = metrics_text(proxy.addr).await;
    const REQUESTS: usize = 3;
    for n in 0..REQUESTS {
        // Shadow mode (the default) forwards a request its model could not score.
        let reply = send(proxy.addr, get(&two_questions(100 + n))).await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        assert_eq!(app.last().headers["x-waf-error"], "scoring-incomplete");
    }
    let after = depth_returns_to_zero(proxy.addr).await;
    let lane = "reason=\"client-queue-full\"";
    let shed = total(&after, "waf_model_shed_texts_total", lane) - total(&before, "waf_model_shed_texts_total", lane);
    assert_eq!(shed, 2.0 * REQUESTS as f64, "each request's two texts were shed:\n{after}");
    let overloaded = "waf_model_missing_total{why=\"model-overloaded\"}";
    assert_eq!(common::proxy::sample(&after, overloaded) - common::proxy::sample(&before, overloaded), REQUESTS as f64);
}
