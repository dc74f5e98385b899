//! deploy/kubernetes, checked offline: every overlay renders with kustomize and validates
//! against the Kubernetes schemas (kubernetes-validate, strict), every Rampart container is
//! locked down and probed, every setting it names is one its command accepts, and the probe
//! paths are real: each command is started with the manifest's arguments and settings and its
//! probes answer; after SIGTERM readiness turns 503 while the listeners drain.
//! Tools: scripts/bootstrap-k8s (run by `scripts/bootstrap test`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::process::{start_logged, status, wait_for, Started};
use common::workspace_root;

const IMAGE: &str = "localhost/rampart:0.1.0";
/// Read by the binary outside clap (the log filter).
const NON_CLAP_SETTINGS: [&str; 1] = ["RAMPART_LOG"];

fn tool(relative: &str) -> PathBuf {
    let path = workspace_root().join(relative);
    assert!(path.is_file(), "{} missing: run scripts/bootstrap-k8s (or `scripts/bootstrap test`)", path.display());
    path
}

fn overlays() -> Vec<PathBuf> {
    let dir = workspace_root().join("deploy/kubernetes/overlays");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    found.sort();
    assert!(found.len() >= 3, "proxy, nginx-ingress and istio-extproc overlays: {found:?}");
    found
}

/// `kustomize build`, validated, as JSON documents.
fn render(overlay: &Path) -> Vec<Value> {
    let out = Command::new(tool("vendor/kustomize/bin/kustomize")).arg("build").arg(overlay).output().unwrap();
    assert!(out.status.success(), "kustomize build {}: {}", overlay.display(), String::from_utf8_lossy(&out.stderr));
    let rendered =
        std::env::temp_dir().join(format!("rampart-k8s-{}-{}.yaml", std::process::id(), overlay.file_name().unwrap().to_string_lossy()));
    std::fs::write(&rendered, &out.stdout).unwrap();
    let check = Command::new(tool("vendor/kubernetes-validate/bin/kubernetes-validate"))
        .args(["--strict", "--quiet"])
        .arg(&rendered)
        .output()
        .unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
    assert!(check.status.success() && !report.contains("ERROR"), "{} does not validate:\n{report}", overlay.display());
    // Only custom resources (Istio's EnvoyFilter) may lack a schema.
    for line in report.lines().filter(|l| l.contains("Couldn't find schema")) {
        assert!(line.contains("networking.istio.io"), "{}: {line}", overlay.display());
    }
    // YAML to JSON with the validator's own PyYAML (no YAML crate for one test).
    let to_json = "import sys, json, yaml; json.dump([d for d in yaml.safe_load_all(sys.stdin) if d], sys.stdout)";
    let mut python = Command::new(tool("vendor/kubernetes-validate/bin/python"))
        .args(["-c", to_json])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    python.stdin.take().unwrap().write_all(&out.stdout).unwrap();
    let json = python.wait_with_output().unwrap();
    assert!(json.status.success());
    let _ = std::fs::remove_file(&rendered);
    serde_json::from_slice::<Vec<Value>>(&json.stdout).unwrap()
}

fn kind<'a>(docs: &'a [Value], kind: &str) -> impl Iterator<Item = &'a Value> {
    let kind = kind.to_string();
    docs.iter().filter(move |d| d["kind"] == kind.as_str())
}

fn name(doc: &Value) -> &str {
    doc["metadata"]["name"].as_str().unwrap_or("?")
}

/// Whether `selector` (matchLabels or a Service's plain map) selects pods labelled `labels`.
fn selects(selector: &Value, labels: &Value) -> bool {
    let wanted = selector.get("matchLabels").unwrap_or(selector);
    wanted.as_object().is_some_and(|m| !m.is_empty() && m.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

/// The settings (`[env: NAME`) a command's --help lists.
fn accepted_settings(command: &str) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_rampart")).args([command, "--help"]).output().unwrap();
    assert!(out.status.success(), "rampart {command} --help");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut names: BTreeSet<String> = help
        .split("[env: ")
        .skip(1)
        .map(|rest| rest.chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect())
        .collect();
    names.extend(NON_CLAP_SETTINGS.iter().map(|s| s.to_string()));
    names
}

/// One Rampart container as a manifest runs it.
struct Workload {
    deployment: String,
    command: String,
    env: BTreeMap<String, String>,
    readiness: String,
    liveness: String,
}

fn workloads(docs: &[Value]) -> Vec<Workload> {
    let configmaps: BTreeMap<&str, &Value> = kind(docs, "ConfigMap").map(|c| (name(c), &c["data"])).collect();
    let mut found = Vec::new();
    for deployment in kind(docs, "Deployment") {
        let what = name(deployment);
        let pod = &deployment["spec"]["template"];
        let spec = &pod["spec"];
        assert_eq!(spec["securityContext"]["runAsNonRoot"], true, "{what}: runAsNonRoot");
        assert_eq!(spec["automountServiceAccountToken"], false, "{what}: no API token in the pod");
        assert!(selects(&deployment["spec"]["selector"], &pod["metadata"]["labels"]), "{what}: selector matches its pods");
        let labels = &pod["metadata"]["labels"];
        assert!(kind(docs, "PodDisruptionBudget").any(|p| selects(&p["spec"]["selector"], labels)), "{what}: a PodDisruptionBudget");
        assert!(kind(docs, "NetworkPolicy").any(|p| selects(&p["spec"]["podSelector"], labels)), "{what}: a NetworkPolicy");
        for container in spec["containers"].as_array().unwrap() {
            let what = format!("{what}/{}", container["name"].as_str().unwrap());
            assert_eq!(container["image"], IMAGE, "{what}: the image set by the overlay");
            let security = &container["securityContext"];
            assert_eq!(security["readOnlyRootFilesystem"], true, "{what}");
            assert_eq!(security["allowPrivilegeEscalation"], false, "{what}");
            assert!(security["capabilities"]["drop"].as_array().is_some_and(|d| d.contains(&"ALL".into())), "{what}: drop ALL");
            for bound in ["requests", "limits"] {
                for resource in ["cpu", "memory"] {
                    assert!(container["resources"][bound][resource].is_string(), "{what}: resources.{bound}.{resource}");
                }
            }
            let ports: BTreeSet<&str> = container["ports"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
            let probe_path = |probe: &str| {
                let get = &container[probe]["httpGet"];
                let port = get["port"].as_str().unwrap_or_else(|| panic!("{what}: {probe} names its port"));
                assert!(ports.contains(port), "{what}: {probe} port `{port}` is one of {ports:?}");
                get["path"].as_str().unwrap_or_else(|| panic!("{what}: {probe}.httpGet.path")).to_string()
            };
            let command = container["args"][0].as_str().unwrap_or_else(|| panic!("{what}: args[0] names the command")).to_string();
            let accepted = accepted_settings(&command);
            let mut env = BTreeMap::new();
            for source in container["envFrom"].as_array().into_iter().flatten() {
                let map = source["configMapRef"]["name"].as_str().unwrap();
                let data = configmaps.get(map).unwrap_or_else(|| panic!("{what}: ConfigMap {map} is in the overlay"));
                for (key, value) in data.as_object().unwrap() {
                    env.insert(key.clone(), value.as_str().unwrap().to_string());
                }
            }
            for var in container["env"].as_array().into_iter().flatten() {
                let key = var["name"].as_str().unwrap();
                assert!(accepted.contains(key), "{what}: `{key}` is not a setting of `rampart {command}` ({accepted:?})");
                env.insert(key.to_string(), var["value"].as_str().unwrap().to_string());
            }
            found.push(Workload {
                deployment: name(deployment).to_string(),
                command,
                env,
                readiness: probe_path("readinessProbe"),
                liveness: probe_path("livenessProbe"),
            });
        }
    }
    // Every key of the shared settings is read by some command of the overlay.
    let commands: Vec<String> = found.iter().map(|w| w.command.clone()).collect();
    let all_accepted: BTreeSet<String> = commands.iter().flat_map(|c| accepted_settings(c)).collect();
    for (map, data) in &configmaps {
        if map.starts_with("rampart-grafana") {
            continue;
        }
        for key in data.as_object().unwrap().keys() {
            assert!(all_accepted.contains(key), "ConfigMap {map}: `{key}` is read by none of {commands:?}");
        }
    }
    for service in kind(docs, "Service") {
        let selector = &service["spec"]["selector"];
        let target = kind(docs, "Deployment").find(|d| selects(selector, &d["spec"]["template"]["metadata"]["labels"]));
        let target = target.unwrap_or_else(|| panic!("Service {} selects no Deployment", name(service)));
        let ports: BTreeSet<&str> = target["spec"]["template"]["spec"]["containers"][0]["ports"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        for port in service["spec"]["ports"].as_array().unwrap() {
            let wanted = port["targetPort"].as_str().unwrap();
            assert!(ports.contains(wanted), "Service {}: targetPort {wanted} not in {ports:?}", name(service));
        }
    }
    found
}

/// Starts the workload as its manifest does, listeners moved to loopback port 0, the models
/// service at `inference`; returns once every listener is logged.
fn start(workload: &Workload, inference: Option<SocketAddr>) -> Started {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rampart"));
    cmd.arg(&workload.command).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    let mut listeners_wanted = 0;
    for (key, value) in &workload.env {
        let value = if key.ends_with("_ADDR") {
            listeners_wanted += 1;
            "127.0.0.1:0".to_string()
        } else if key == "INFERENCE_URL" {
            format!("http://{}", inference.expect("the inference service runs first"))
        } else if key == "TARGET_URL" {
            "http://127.0.0.1:9".to_string()
        } else {
            value.clone()
        };
        cmd.env(key, value);
    }
    // The repository's ONNX Runtime (the image has its own next to the binary).
    let ort = std::env::var("ORT_DYLIB_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|_| workspace_root().join("vendor/onnxruntime/lib/libonnxruntime.so.1.22.1"));
    cmd.env("ORT_DYLIB_PATH", ort).env("RAMPART_MODELS_DIR", workspace_root().join("models"));
    start_logged(cmd, listeners_wanted, &format!("rampart {} ({})", workload.command, workload.deployment))
}

#[test]
fn every_overlay_renders_validates_and_its_probes_answer() {
    let mut by_command: BTreeMap<String, Workload> = BTreeMap::new();
    for overlay in overlays() {
        let docs = render(&overlay);
        let found = workloads(&docs);
        assert!(found.iter().any(|w| w.command == "inference"), "{}: the inference Deployment", overlay.display());
        assert!(found.iter().any(|w| w.command != "inference"), "{}: a decision service", overlay.display());
        for workload in found {
            by_command.insert(workload.command.clone(), workload);
        }
    }
    let names: Vec<&String> = by_command.keys().collect();
    assert_eq!(names, ["auth", "extproc", "inference", "proxy"], "one Deployment per front door and the models");

    let inference = start(&by_command["inference"], None);
    let models = inference.listeners[0];
    let others: Vec<(&Workload, Started)> =
        by_command.values().filter(|w| w.command != "inference").map(|w| (w, start(w, Some(models)))).collect();
    for (workload, started) in std::iter::once((&by_command["inference"], &inference)).chain(others.iter().map(|(w, s)| (*w, s))) {
        let what = format!("{} ({})", workload.deployment, workload.command);
        wait_for(&started.listeners, &workload.liveness, 200, &what);
        wait_for(&started.listeners, &workload.readiness, 200, &what);
    }

    // SIGTERM: readiness turns 503 at once while the proxy still serves (WAF_DRAIN_MS), then it
    // exits cleanly.
    let (proxy, mut started) = others.into_iter().find(|(w, _)| w.command == "proxy").unwrap();
    let drain_ms: u64 = proxy.env.get("WAF_DRAIN_MS").expect("the settings set WAF_DRAIN_MS").parse().unwrap();
    assert!(drain_ms >= 1000, "a drain long enough for endpoints to update");
    let sent = Instant::now();
    assert!(Command::new("kill").args(["-TERM", &started.child.id().to_string()]).status().unwrap().success());
    wait_for(&started.listeners, &proxy.readiness, 503, "proxy draining");
    assert_eq!(status(started.listeners[0], &proxy.liveness), Some(200), "still serving while draining");
    let exit = loop {
        if let Some(exit) = started.child.try_wait().unwrap() {
            break exit;
        }
        assert!(sent.elapsed() < Duration::from_millis(drain_ms + 10_000), "the proxy exits after draining");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit}");
    assert!(sent.elapsed() >= Duration::from_millis(drain_ms), "it served for the whole drain ({:?})", sent.elapsed());
}
