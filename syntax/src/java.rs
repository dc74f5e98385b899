//! Java code injection: Java class names and expression-language syntax *used* in a data field.
//!
//! Read token by token (Java is case-sensitive, so matching is too):
//! - OGNL (Struts): `#_memberAccess`, `(#cmd='id')`, static access `@java.lang.Runtime@getRuntime()`,
//!   `#context[...]` / `#request...` inside `%{...}` or `${...}`.
//! - SpEL type references `T(java.lang.Runtime)`; EL / OGNL / SpEL wrappers (`${...}`, `#{...}`,
//!   `%{...}`) holding reflection (`''.getClass().forName(...)`, `getRuntime()`, `new java.`...).
//! - Reflection and process chains outside a wrapper: `Runtime.getRuntime().exec(`,
//!   `Class.forName("...")`, `getClass().getClassLoader()`, `new java.lang.ProcessBuilder(`.
//! - Spring4Shell / Struts class-loader parameter names (`class.module.classLoader...`) and
//!   XStream object graphs (XML elements named by JDK classes, `<java.util.PriorityQueue>`).
//! - A class that executes, loads code or reaches JNDI (`java.lang.Runtime`, `javax.naming.InitialContext`,
//!   `com.sun.org.apache.xalan...TemplatesImpl`, ...) as the whole value, an XML element name
//!   (XStream), or called — but not as the frame of a stack trace (`at java.lang.ProcessBuilder.start(ProcessBuilder.java:1048)`).
//!
//! Level: 1 in a short, code-like value; 2 in pasted source or prose (a developer's question
//! with a stack trace), see [`crate::php::pasted_source`]; a bare mention of an executing class in
//! short text is level 2.
//! Linear: look-aheads from a position are bounded by constants.

use crate::php::pasted_source;
use crate::{Check, Finding, Input, Trigger};

pub struct Java;

/// Classes (and packages, ending in `.`) whose use from a request is code execution, code
/// loading, JNDI or file access.
const EXECUTING: &[&str] = &[
    "java.lang.Runtime",
    "java.lang.ProcessBuilder",
    "java.lang.ProcessImpl",
    "java.lang.UNIXProcess",
    "java.lang.ClassLoader",
    "java.lang.System",
    "java.lang.Class",
    "java.lang.reflect.",
    "java.lang.invoke.",
    "javax.script.",
    "javax.naming.",
    "javax.management.",
    "javax.el.",
    "java.net.URLClassLoader",
    "java.beans.EventHandler",
    "java.beans.XMLDecoder",
    "jdk.jshell.",
    "jdk.nashorn.",
    "groovy.lang.GroovyShell",
    "bsh.Interpreter",
    "com.sun.org.apache.",
    "com.sun.rowset.",
    "com.sun.jndi.",
    "sun.misc.Unsafe",
    "org.springframework.context.support.",
    "org.springframework.beans.factory.",
    "org.springframework.expression.",
    "org.apache.commons.collections",
    "org.codehaus.groovy.runtime.",
    "freemarker.template.utility.Execute",
    "java.io.File",
    "java.io.FileInputStream",
    "java.io.FileOutputStream",
    "java.io.FileReader",
    "java.io.FileWriter",
    "java.io.ObjectInputStream",
    "java.io.RandomAccessFile",
    "java.nio.file.",
    "java.net.Socket",
    "java.net.URL",
    "java.net.InetAddress",
    "ognl.",
    "org.apache.struts2.",
    "com.opensymphony.xwork2.",
    "org.apache.xbean.",
    "org.apache.shiro.jndi.",
    "ch.qos.logback.core.db.",
    "com.zaxxer.hikari.",
    "org.apache.tomcat.dbcp.",
    "org.apache.commons.dbcp",
    "com.mchange.v2.c3p0.",
    "br.com.anteros.dbcp.",
    "org.apache.ibatis.datasource.",
    "org.apache.commons.configuration.JNDIConfiguration",
    "org.mozilla.javascript.",
    "org.python.core.",
];

/// Classes that are attack entry points and next to never a frame of an ordinary stack trace,
/// so one given as a whole value (a cookie, a header, a JSON or XML value) counts at level 1.
/// Classes of [`EXECUTING`] outside this list (`java.lang.reflect.Method`, `sun.misc.Unsafe`,
/// `java.net.URLClassLoader`, Spring's bean factory...) are frames in every error report an SDK
/// posts (`"module": "java.lang.reflect.Method"`), so as a bare value they count from level 2,
/// and at level 1 only after a type key (`"@type":`, `class=`) or when used.
const GADGETS: &[&str] = &[
    "java.lang.Runtime",
    "java.lang.ProcessBuilder",
    "java.lang.ProcessImpl",
    "java.lang.UNIXProcess",
    "javax.script.ScriptEngineManager",
    "javax.management.loading.MLet",
    "javax.el.ELProcessor",
    "javax.naming.InitialContext",
    "groovy.lang.GroovyShell",
    "com.sun.org.apache.xalan.internal.xsltc.trax.TemplatesImpl",
    "com.sun.org.apache.bcel.internal.util.ClassLoader",
    "com.sun.rowset.JdbcRowSetImpl",
    "java.beans.EventHandler",
    "java.beans.XMLDecoder",
    "jdk.jshell.JShell",
    "bsh.Interpreter",
    "org.apache.commons.collections.functors.",
    "org.apache.commons.collections4.functors.",
    "org.apache.xbean.propertyeditor.JndiConverter",
    "org.apache.shiro.jndi.JndiObjectFactory",
    "ch.qos.logback.core.db.JNDIConnectionSource",
    "br.com.anteros.dbcp.AnterosDBCPConfig",
    "org.apache.ibatis.datasource.jndi.JndiDataSourceFactory",
    "com.mchange.v2.c3p0.JndiRefForwardingDataSource",
    "com.mchange.v2.c3p0.WrapperConnectionPoolDataSource",
    "freemarker.template.utility.Execute",
    "org.springframework.context.support.ClassPathXmlApplicationContext",
    "org.springframework.context.support.FileSystemXmlApplicationContext",
    "org.codehaus.groovy.runtime.MethodClosure",
    "org.apache.commons.configuration.JNDIConfiguration",
];

/// Package roots of anything a Java expression can name (used for `T(...)`, `@...@`, `new ...(`).
const ROOTS: &[&str] = &["java.", "javax.", "jdk.", "sun.", "com.", "org.", "ognl.", "bsh.", "groovy.", "freemarker.", "ch.", "br."];

/// Markers of an expression-language payload inside `${...}`, `#{...}`, `%{...}`.
const EL_MARKERS: &[&str] = &[
    "getClass",
    "forName",
    "getRuntime",
    "ProcessBuilder",
    "new java.",
    "getMethod",
    "getDeclared",
    "newInstance",
    "getClassLoader",
    "loadClass",
    "ScriptEngineManager",
    "getEngineByName",
    "@java.",
    "@ognl.",
    "#_memberAccess",
    "#context",
    "#request",
    "#response",
    "#session",
    "#application",
    "#parameters",
    "#attr",
    "T(java.",
    "T (java.",
    "java.lang.",
    "getServletContext",
    "getWriter",
    "OgnlContext",
    "#cmd",
];

/// One of [`EL_MARKERS`] starts at `p` and ends before `end` (markers are tried only where
/// the byte can start one).
fn marker_at(t: &[u8], p: usize, end: usize) -> bool {
    if !matches!(t[p], b'g' | b'f' | b'P' | b'n' | b'i' | b'S' | b'@' | b'#' | b'T' | b'j' | b'e' | b'O' | b'l') {
        return false;
    }
    EL_MARKERS.iter().any(|m| p + m.len() <= end && starts(t, p, m))
}

impl Check for Java {
    fn trigger(&self) -> Trigger {
        // A dotted class name, an OGNL `#`, an `@` static call.
        Trigger::any_of(b".#@")
    }

    fn detector(&self) -> &'static str {
        "java-injection"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        if !input.bytes.any(b".#@") {
            return None;
        }
        // Without `(`, `#`, `@`, `{` or `<` only a class given as data can be present, and its
        // name starts with a package root.
        let expressions = input.bytes.any(b"(#@{<");
        // Without those bytes every finding is a dotted name of two or more segments (`x.y`):
        // prose whose dots all end sentences is not scanned word by word.
        if !expressions && !dotted_pair(input.text.as_bytes()) {
            return None;
        }
        let (reason, base) = find(input.text.as_bytes(), expressions)?;
        let level = if base == 1 && pasted_source(input.text) { 2 } else { base };
        (level <= input.sensitivity).then_some(Finding { reason, score: 0.95, level })
    }
}

/// Some `.` joins a name byte to a letter or `_` (`a.b`): a dotted name of two segments.
fn dotted_pair(t: &[u8]) -> bool {
    let mut from = 1;
    while let Some(p) = t.get(from..).and_then(|rest| rest.iter().position(|&b| b == b'.')) {
        let dot = from + p;
        if is_ident(t[dot - 1]) && t.get(dot + 1).is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_') {
            return true;
        }
        from = dot + 1;
    }
    false
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

fn starts(t: &[u8], i: usize, s: &str) -> bool {
    t.len() >= i + s.len() && &t[i..i + s.len()] == s.as_bytes()
}

fn skip_ws(t: &[u8], mut i: usize) -> usize {
    let limit = (i + 16).min(t.len());
    while i < limit && t[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// End of the dotted name `a.b.C` starting at `i` (at most 160 bytes) and its segment count.
fn dotted(t: &[u8], i: usize) -> (usize, usize) {
    let limit = (i + 160).min(t.len());
    let mut end = i;
    let mut segments = 0;
    while end < limit && (t[end].is_ascii_alphabetic() || t[end] == b'_') {
        while end < limit && is_ident(t[end]) {
            end += 1;
        }
        segments += 1;
        if end + 1 < limit && t[end] == b'.' && (t[end + 1].is_ascii_alphabetic() || t[end + 1] == b'_') {
            end += 1;
        } else {
            break;
        }
    }
    (end, segments)
}

fn has_root(name: &[u8]) -> bool {
    ROOTS.iter().any(|r| name.starts_with(r.as_bytes()))
}

fn executing(name: &[u8]) -> bool {
    listed(EXECUTING, name)
}

/// `name` is one of `list`'s classes (or in one of its packages, entries ending in `.`).
fn listed(list: &[&str], name: &[u8]) -> bool {
    list.iter().any(|c| {
        let c = c.as_bytes();
        name.starts_with(c)
            && (c.ends_with(b".") || name.len() == c.len() || !name[c.len()].is_ascii_alphanumeric() || name[c.len()] == b'.')
    })
}

/// The text after `(` at `open` is a stack frame's location (`(ProcessBuilder.java:1048)`,
/// `(Native Method)`, `(Unknown Source)`).
fn frame_location(t: &[u8], open: usize) -> bool {
    let end = (open + 60).min(t.len());
    let Some(close) = t[open..end].iter().position(|&b| b == b')') else { return false };
    let inside = &t[open + 1..open + close];
    [&b".java"[..], b".kt:", b".scala:", b".groovy:", b"Native Method", b"Unknown Source", b"Compiled Code", b"<generated>"]
        .iter()
        .any(|m| inside.windows(m.len()).any(|w| w == *m))
}

/// The first Java construct in `t` with its base level.
fn find(t: &[u8], expressions: bool) -> Option<(&'static str, u8)> {
    let mut best: Option<(&'static str, u8)> = None;
    let mut el_scanned_to: usize = 0;
    let mut i = 0;
    while i < t.len() {
        let b = t[i];
        match b {
            b'#' if starts(t, i + 1, "_memberAccess") => return Some(("java-injection:ognl", 1)),
            b'#' if i > 0 && t[i - 1] == b'(' => {
                let (end, segs) = dotted(t, i + 1);
                if segs > 0 && matches!(t.get(skip_ws(t, end)), Some(b'=' | b'[' | b'.' | b'(')) {
                    return Some(("java-injection:ognl", 1));
                }
            }
            b'@' => {
                let (end, segs) = dotted(t, i + 1);
                if segs >= 3
                    && has_root(&t[i + 1..end])
                    && t.get(end) == Some(&b'@')
                    && t.get(end + 1).is_some_and(|b| b.is_ascii_alphabetic())
                {
                    return Some(("java-injection:ognl", 1));
                }
            }
            b'{' if i > 0 && matches!(t[i - 1], b'$' | b'#' | b'%' | b'*') => {
                let limit = (i + 240).min(t.len());
                let end = t[i + 1..limit].iter().position(|&b| b == b'}').map_or(limit, |p| i + 1 + p);
                // Wrappers overlap (`#{#{#{...`): a region already searched is not searched
                // again, keeping the scan linear; the overlap covers a marker cut at its edge.
                let from = (i + 1).max(el_scanned_to.saturating_sub(24)).min(end);
                el_scanned_to = el_scanned_to.max(end);
                // The wrapper ends at the first `}`; payloads with inner braces are still caught
                // by their first part or by the other forms below.
                if (from..end).any(|p| marker_at(t, p, end)) {
                    return Some(("java-injection:expression", 1));
                }
            }
            b'T' if (i == 0 || !is_ident(t[i - 1])) => {
                let open = skip_ws(t, i + 1);
                if t.get(open) == Some(&b'(') {
                    let start = skip_ws(t, open + 1);
                    let (end, segs) = dotted(t, start);
                    if segs >= 2 && has_root(&t[start..end]) && t.get(skip_ws(t, end)) == Some(&b')') {
                        return Some(("java-injection:spel-type", 1));
                    }
                }
            }
            _ => {}
        }
        // A name starts after a non-name byte, or after `.` on a literal or a call's result
        // (`''.getClass()`, `''.class.forName(`, `x().getClass()`).
        let member_of_value = i >= 2 && t[i - 1] == b'.' && matches!(t[i - 2], b'\'' | b'"' | b')' | b']');
        if (b.is_ascii_alphabetic() || b == b'_') && (i == 0 || !(is_ident(t[i - 1]) || t[i - 1] == b'.') || member_of_value) {
            if !expressions && !matches!(b, b'j' | b'c' | b'o' | b's' | b'b' | b'g' | b'f' | b'L') {
                while i < t.len() && is_ident(t[i]) {
                    i += 1;
                }
                continue;
            }
            let (end, segs) = dotted(t, i);
            if let Some(found) = name_use(t, i, end, segs) {
                if found.1 == 1 {
                    return Some(found);
                }
                best = best.or(Some(found));
            }
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
    best
}

/// How the dotted name `t[start..end]` is used.
fn name_use(t: &[u8], start: usize, end: usize, segs: usize) -> Option<(&'static str, u8)> {
    let name = &t[start..end];
    let last = name.rsplit(|&b| b == b'.').next().unwrap_or(name);
    let after = skip_ws(t, end);
    let called = t.get(after) == Some(&b'(');
    if called && frame_location(t, after) {
        return None;
    }
    let prev_new = start >= 4 && &t[start - 4..start] == b"new "
        || start >= 5 && t[start - 5..start].starts_with(b"new") && t[start - 2].is_ascii_whitespace();
    // Process and reflection chains, with or without a package.
    if called && (name.ends_with(b"Runtime.getRuntime") || name == b"getRuntime" && start > 0 && t[start - 1] == b'.') {
        // `getRuntime().exec(` runs a command; `getRuntime().availableProcessors()` does not.
        let close = skip_ws(t, skip_ws(t, after + 1));
        let next = skip_ws(t, close + 1);
        let exec = t.get(close) == Some(&b')') && t.get(next) == Some(&b'.') && starts(t, skip_ws(t, next + 1), "exec");
        if exec || !executing(name) {
            return Some(("java-injection:runtime-exec", if exec { 1 } else { 2 }));
        }
    }
    if called && (last == b"forName" && (segs >= 2 || start > 0 && t[start - 1] == b'.')) {
        let arg = skip_ws(t, after + 1);
        if matches!(t.get(arg), Some(b'"' | b'\'')) || t.get(arg).is_some_and(|b| b.is_ascii_alphabetic()) {
            return Some(("java-injection:reflection", 1));
        }
    }
    if called && last == b"getClass" && t.get(skip_ws(t, after + 1)) == Some(&b')') {
        let next = skip_ws(t, skip_ws(t, after + 1) + 1);
        if t.get(next) == Some(&b'.')
            && [
                &b"forName"[..],
                b"getClassLoader",
                b"getMethod",
                b"getDeclared",
                b"getResource",
                b"getProtectionDomain",
                b"newInstance",
                b"getConstructor",
            ]
            .iter()
            .any(|m| starts(t, next + 1, std::str::from_utf8(m).unwrap_or("-")))
        {
            return Some(("java-injection:reflection", 1));
        }
    }
    if prev_new && called && (last == b"ProcessBuilder" || last == b"ScriptEngineManager" || segs >= 3 && has_root(name)) {
        return Some(("java-injection:new-instance", 1));
    }
    // Spring4Shell / Struts ClassLoader manipulation: a parameter name walking from `class`
    // to its class loader (`class.module.classLoader.resources.context.parent.pipeline...`).
    if segs >= 2
        && (name.starts_with(b"class.") || name.starts_with(b"Class."))
        && name.windows(11).any(|w| w.eq_ignore_ascii_case(b"classLoader"))
    {
        return Some(("java-injection:class-loader", 1));
    }
    // fastjson writes a type as a JVM descriptor too: `Lcom.sun.rowset.JdbcRowSetImpl;`.
    let (start, name) = if name.len() > 1 && name[0] == b'L' && has_root(&name[1..]) { (start + 1, &name[1..]) } else { (start, name) };
    if segs < 3 || !has_root(name) {
        return None;
    }
    // An XML element named by a JDK class (`<java.util.PriorityQueue>`, `<javax.naming.ldap.Rdn_-RdnEntry>`):
    // XStream's object graph. Ordinary XML does not name elements after JDK packages.
    let jdk = [&b"java."[..], b"javax.", b"sun.", b"com.sun.", b"jdk."].iter().any(|r| name.starts_with(r));
    if jdk && start > 0 && t[start - 1] == b'<' {
        return Some(("java-injection:xstream", 1));
    }
    if !executing(name) {
        return None;
    }
    if start >= 3 && &t[start - 3..start] == b"at " || start >= 4 && &t[start - 4..start] == b"at\t" {
        return None;
    }
    if called || (start > 0 && t[start - 1] == b'<') || t.get(end) == Some(&b'@') {
        return Some(("java-injection:class-use", 1));
    }
    if last.ends_with(b"Exception") || last.ends_with(b"Error") {
        return None;
    }
    // The whole value (possibly quoted): an XStream/fastjson type, a header or cookie set to a
    // class.
    let trim = |b: &u8| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'');
    let head = t[..start].iter().all(trim);
    let tail = t[end..].iter().all(trim);
    // A JSON value `"@type": "com.sun.rowset.JdbcRowSetImpl"` or an XML attribute
    // `class="java.beans.EventHandler"` or a Jackson typed array `["com.sun...", {...}]`: the
    // quoted class after `:`, `=` or `[`.
    // (fastjson's `Lname;` and `[name` forms included.)
    let open_at = if start >= 2 && matches!(t[start - 1], b'L' | b'[') { start - 1 } else { start };
    let close_at = if t.get(end) == Some(&b';') { end + 1 } else { end };
    let quoted = open_at > 0 && matches!(t[open_at - 1], b'"' | b'\'') && t.get(close_at) == Some(&t[open_at - 1]);
    let start = open_at;
    let gadget = listed(GADGETS, name);
    let mut j = start.saturating_sub(1);
    while j > 0 && t[j - 1].is_ascii_whitespace() {
        j -= 1;
    }
    let before = if quoted && j > 0 { t[j - 1] } else { 0 };
    // The key before `:` or `=` names a type (`"@type":`, `"@class":`, `class=`, `"$type":`).
    let type_key = matches!(before, b':' | b'=') && {
        let key = &t[j.saturating_sub(16)..j - 1];
        key.windows(4).any(|w| w.eq_ignore_ascii_case(b"type")) || key.windows(5).any(|w| w.eq_ignore_ascii_case(b"class"))
    };
    let as_data = (head && tail) || matches!(before, b':' | b'=' | b'[');
    if type_key || gadget && as_data {
        return Some(("java-injection:class-name", 1));
    }
    Some(("java-injection:class-name", 2))
}

#[cfg(test)]
mod tests {
    use super::Java;
    use crate::{Check, Input};

    fn hit(text: &str) -> Option<&'static str> {
        Java.inspect(&Input::new(text)).map(|f| f.reason)
    }

    #[test]
    fn executable_java() {
        for text in [
            "java.lang.Runtime",
            "Runtime.getRuntime().exec(\"id\")",
            "new java.lang.ProcessBuilder(\"id\").start()",
            "%{(#_='multipart/form-data').(#_memberAccess=@ognl.OgnlContext@DEFAULT_MEMBER_ACCESS)}",
            "${#context['xwork.MethodAccessor.denyMethodExecution']=false}",
            "T(java.lang.Runtime).getRuntime().exec('id')",
            "${''.getClass().forName('java.lang.Runtime')}",
            "Class.forName(\"javax.script.ScriptEngineManager\")",
            "<java.lang.ProcessBuilder><command>",
            "\"com.sun.rowset.JdbcRowSetImpl\"",
            "@java.lang.Runtime@getRuntime().exec('id')",
            "(#cmd='whoami')",
            "javax.naming.InitialContext",
            "x.getClass().getClassLoader()",
        ] {
            assert!(hit(text).is_some(), "{text}");
        }
    }

    #[test]
    fn traces_and_questions_pass() {
        for text in [
            "at java.lang.ProcessBuilder.start(ProcessBuilder.java:1048)",
            "java.io.FileNotFoundException: x (No such file)",
            "at java.lang.Thread.run(Thread.java:748)",
            "java.lang.reflect.Method.invoke(Native Method)",
            "Exception in thread \"main\" java.lang.NullPointerException",
            "see #request for details",
            "[Setup](#installation)",
            "Hello %{name}, you have %{count} messages",
            "user@example.com",
            "com.example.app.MainActivity",
            "org.apache.http.client",
            "T(x)",
            "java.lang.reflect.Method",
            "sun.misc.Unsafe",
            "{\"module\":\"org.springframework.beans.factory.support.AbstractBeanFactory\",\"function\":\"getBean\"}",
        ] {
            assert_eq!(hit(text), None, "{text}");
        }
    }
}
