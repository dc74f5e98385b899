//! `rampart up`: everything in one process, sharing one engine and one gate — one mode (the
//! proxy's `POST /api/mode` switches every door), one fail mode, one event stream (the
//! dashboard and `/api/events` show every door's verdicts), one metrics registry and one audit
//! writer — the inference service, the proxy (with the demo upstream when TARGET_URL is
//! unset), the auth adapter and ext_proc. The auth adapter's and ext_proc's default 9090
//! listeners would collide, so one management listener serves the combined /metrics, ext_proc's
//! /_waf/health and /api/mode (the auth adapter's own health stays on its port).

use std::net::SocketAddr;
use std::sync::Arc;

use super::*;
use crate::adapter_door::AdapterDoor;
use crate::auth::AuthAdapter;
use crate::config::{AdapterOptions, IpNetList, UpArgs};
use crate::extproc::ExtprocService;
use crate::gate::{Gate, GateParts, SharedMode};
use crate::scorer::InProcessScorer;

/// The demo upstream on its own listener.
pub fn start_demo(addr: SocketAddr) -> Result<Running, StartError> {
    // The demo upstream's only client is the proxy: its own default limits.
    spawn_server(addr, None, ProcessLimits::unobserved().gate, |req, _conn| crate::demo::handle(req))
}

/// Everything `rampart up` runs, in start order.
pub struct Stack {
    pub inference: Running,
    pub demo: Option<Running>,
    pub proxy: ProxyServer,
    pub auth: Running,
    pub extproc: Running,
    pub management: Running,
}

impl Stack {
    pub fn into_servers(self) -> Vec<Running> {
        let mut all = vec![self.inference, self.proxy.running, self.auth, self.extproc, self.management];
        all.extend(self.demo);
        all
    }
}

pub fn start_up(args: &UpArgs) -> Result<Stack, StartError> {
    let engine = Arc::new(Engine::new(args.inference.engine.engine_config())?);
    // One metrics registry and one set of limits for every listener of the process.
    let metrics = Arc::new(Metrics::new());
    let limits = args.proxy.limits.build(metrics.clone());
    let inference = start_inference_with(engine.clone(), args.inference.addr, args.inference.max_body_bytes, limits.gate.clone())?;
    let (demo, target) = match &args.proxy.target_url {
        Some(url) => (None, url.clone()),
        None => {
            let demo = start_demo(args.demo_addr)?;
            let url = format!("http://{}", demo.addr).parse().expect("a socket address makes a valid URL");
            (Some(demo), url)
        }
    };
    let scorer: Arc<dyn Scorer> = Arc::new(InProcessScorer::served_at(engine.clone(), format!("http://{}", inference.addr)));
    let gate = Arc::new(Gate::new(GateParts {
        mode: SharedMode::new(args.proxy.mode.mode),
        threshold: args.inference.engine.threshold,
        policy: args.proxy.policy.policy(args.proxy.on_scoring_error),
        scorer,
        metrics,
        audit: open_audit(&args.proxy.audit_log)?,
        sse_keepalive: std::time::Duration::from_secs(args.proxy.sse_keepalive_secs),
    }));
    // One engine serves every door: a rules-directory reload reaches all of them.
    super::rules_watch::start(args.inference.engine.rules_dir.as_deref(), Some(&engine), Some(gate.metrics().clone()))?;
    // One gate serves every door: the policy file applies to all of them.
    follow_policy(args.proxy.policy_file.as_deref(), &gate, Some(engine))?;
    let proxy = Arc::new(crate::proxy::Proxy::with_gate(args.proxy.settings(&target), &target, gate.clone(), &limits));
    let proxy = serve_proxy(&args.proxy, &target, proxy, limits.clone())?;
    // nginx / Envoy usually run beside Rampart: loopback is trusted for their forwarded
    // headers, plus whatever the proxy trusts.
    let mut trusted = args.proxy.trusted_proxies.0.clone();
    trusted.extend(["127.0.0.1", "::1"].map(|ip| ip.parse::<crate::client_ip::IpNet>().expect("a literal address")));
    let adapter_options = AdapterOptions {
        trusted_proxies: IpNetList(trusted),
        client_ip_header: args.proxy.client_ip_header,
        audit_log: args.proxy.audit_log.clone(),
        body_limit: args.proxy.body_limit,
        on_scoring_error: args.proxy.on_scoring_error,
        policy: args.proxy.policy.clone(),
        // The shared gate already follows the file.
        policy_file: None,
    };
    let door = || AdapterDoor::new(adapter_options.door_settings(), gate.clone(), limits.budget.clone());
    let auth = spawn_auth(args.auth_addr, limits.gate.clone(), Arc::new(AuthAdapter::new(door())))?;
    let service = Arc::new(ExtprocService::new(door()));
    let extproc = spawn_grpc(args.extproc_addr, &limits, service.clone())?;
    let management = spawn_extproc_http(args.management_addr, limits.gate.clone(), service)?;
    Ok(Stack { inference, demo, proxy, auth, extproc, management })
}
