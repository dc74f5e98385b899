//! GraphQL abuse as whole requests: full-schema introspection, alias overloading, many
//! operations in one document or in a JSON array of documents, deep nesting, directive
//! overloading and circular fragments,
//! each built from random field names, argument values and formatting, and sent the ways
//! clients send GraphQL (POST JSON, GET `?query=`, `application/graphql`).

use crate::mutate::{join, percent_specials};
use crate::place::json_string;
use crate::{Carrier, Family, Request, Rng, Variant};

pub struct Graphql;

const FIELDS: &[&str] = &[
    "user",
    "users",
    "node",
    "product",
    "order",
    "account",
    "post",
    "comments",
    "friends",
    "viewer",
    "repository",
    "search",
    "items",
    "author",
    "owner",
];
const LEAVES: &[&str] = &["id", "name", "email", "title", "createdAt", "price", "__typename", "login", "body", "status"];
const PATHS: &[&str] = &["/graphql", "/api/graphql", "/v1/graphql", "/graphql/console", "/query", "/gql"];

/// Separator between tokens: GraphQL treats commas and newlines as whitespace.
fn sep(rng: &mut Rng) -> &'static str {
    const SEPARATORS: &[&str] = &[" ", "\n", ", ", "\n  ", " ,"];
    SEPARATORS[rng.below(SEPARATORS.len())]
}

fn name(rng: &mut Rng, prefix: &str) -> String {
    format!("{prefix}{}", rng.below(10_000))
}

fn introspection(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    let s = sep(rng);
    let op = if rng.chance(0.6) {
        format!("query {} ", rng.pick(&["IntrospectionQuery", "Introspection", "q", "schema"]))
    } else {
        String::new()
    };
    let deprecated = if rng.chance(0.5) { "(includeDeprecated: true)" } else { "" };
    let field_sel =
        format!("fields{deprecated} {{{s}name{s}args {{ name type {{ name kind }} }}{s}type {{ name kind ofType {{ name kind }} }}{s}}}");
    if rng.chance(0.5) {
        names.push("introspection-fragment");
        let frag = rng.pick(&["FullType", "TypeInfo", "T"]).to_string();
        format!(
            "{op}{{{s}__schema {{{s}queryType {{ name }}{s}mutationType {{ name }}{s}types {{{s}...{frag}{s}}}{s}directives {{ name locations }}{s}}}{s}}}{s}fragment {frag} on __Type {{{s}kind{s}name{s}{field_sel}{s}inputFields {{ name }}{s}enumValues {{ name }}{s}}}"
        )
    } else {
        names.push("introspection-inline");
        format!("{op}{{{s}__schema {{{s}types {{{s}name{s}kind{s}{field_sel}{s}}}{s}}}{s}}}")
    }
}

fn alias_overloading(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("aliases");
    let field = *rng.pick(FIELDS);
    let leaf = *rng.pick(LEAVES);
    let n = rng.range(11, 120);
    let s = sep(rng);
    let keyword = *rng.pick(&["query", "mutation", ""]);
    let body: String = (0..n)
        .map(|k| {
            let alias = match rng.below(3) {
                0 => format!("a{k}"),
                1 => format!("{field}{k}"),
                _ => format!("x_{}", k * 7 + 3),
            };
            // Brute force batches one mutation under many aliases: scalar arguments, an input
            // object, or variables.
            let args = match rng.below(3) {
                0 => format!("id: {}", rng.below(100_000)),
                1 => format!("input: {{ email: \"u{}@example.com\", password: \"pw{k}\" }}", rng.below(100)),
                _ => format!("code: \"{:06}\", otp: $otp", rng.below(1_000_000)),
            };
            format!("{alias}: {field}({args}) {{ {leaf} }}{s}")
        })
        .collect();
    format!("{keyword} {{{s}{body}}}")
}

fn batched_operations(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("operations");
    let n = rng.range(11, 60);
    let s = sep(rng);
    (0..n).map(|k| format!("query {} {{ {}(id: {k}) {{ {} }} }}{s}", name(rng, "op"), rng.pick(FIELDS), rng.pick(LEAVES))).collect()
}

fn deep_nesting(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("depth");
    let depth = rng.range(13, 60);
    let s = sep(rng);
    let pair = [*rng.pick(FIELDS), *rng.pick(FIELDS)];
    let mut open = String::new();
    for d in 0..depth {
        open.push_str(pair[d % 2]);
        open.push_str(" {");
        open.push_str(s);
    }
    format!("query {} {{{s}{open}{}{s}{}}}", name(rng, "Deep"), rng.pick(LEAVES), "}".repeat(depth))
}

fn directive_overloading(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("directives");
    let n = rng.range(9, 200);
    let d = *rng.pick(&["@include(if: true)", "@skip(if: false)", "@aa", "@deprecated", "@include(if: $v)"]);
    let dirs = vec![d; n].join(" ");
    format!("query {} {{ {} {dirs} {{ {} }} }}", name(rng, "D"), rng.pick(FIELDS), rng.pick(LEAVES))
}

fn circular_fragments(rng: &mut Rng, names: &mut Vec<&'static str>) -> String {
    names.push("circular");
    let n = rng.range(2, 5);
    let frags: Vec<String> = (0..n).map(|_| name(rng, "F")).collect();
    let ty = *rng.pick(&["User", "Query", "Node", "Post"]);
    let mut doc = format!("query {{ {} {{ ...{} }} }}\n", rng.pick(FIELDS), frags[0]);
    for k in 0..n {
        doc.push_str(&format!("fragment {} on {ty} {{ {} ...{} }}\n", frags[k], rng.pick(LEAVES), frags[(k + 1) % n]));
    }
    doc
}

/// Many small documents, each harmless alone, sent as one JSON array (Apollo-style batching,
/// which servers run element by element): the request's operations add up.
fn json_array_batch(rng: &mut Rng, names: &mut Vec<&'static str>) -> (String, String) {
    names.push("json-array-batch");
    let n = rng.range(11, 80);
    let docs: Vec<String> = (0..n)
        .map(|k| {
            let args = if rng.chance(0.5) { format!("(id: {})", rng.below(100_000)) } else { String::new() };
            match rng.below(3) {
                0 => format!("{{ {}{args} {{ {} }} }}", rng.pick(FIELDS), rng.pick(LEAVES)),
                1 => format!("query {} {{ {}{args} {{ {} }} }}", name(rng, "q"), rng.pick(FIELDS), rng.pick(LEAVES)),
                _ => format!("mutation {} {{ login(user: \"admin\", password: \"pw{k}\") {{ token }} }}", name(rng, "m")),
            }
        })
        .collect();
    let body = docs
        .iter()
        .map(|d| {
            if rng.chance(0.5) {
                format!("{{\"query\":{}}}", json_string(d))
            } else {
                format!("{{\"operationName\":null,\"variables\":{{}},\"query\":{}}}", json_string(d))
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    (docs.join("\n"), format!("[{body}]"))
}

impl Family for Graphql {
    fn name(&self) -> &'static str {
        "graphql"
    }

    fn detector(&self) -> &'static str {
        "graphql"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let mut names: Vec<&'static str> = Vec::new();
        let path = *rng.pick(PATHS);
        if rng.chance(1.0 / 7.0) {
            let (docs, body) = json_array_batch(rng, &mut names);
            let request = Request::new("POST", path)
                .header("Content-Type", "application/json")
                .header("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0")
                .body(&body);
            return Variant { family: "graphql", mutation: join(&names), payload: docs, carrier: Carrier::Request(request) };
        }
        let doc = match rng.below(6) {
            0 => introspection(rng, &mut names),
            1 => alias_overloading(rng, &mut names),
            2 => batched_operations(rng, &mut names),
            3 => deep_nesting(rng, &mut names),
            4 => directive_overloading(rng, &mut names),
            _ => circular_fragments(rng, &mut names),
        };
        let request = match rng.below(4) {
            0 => {
                names.push("get");
                Request::new("GET", &format!("{path}?query={}", percent_specials(&doc)))
            }
            1 => {
                names.push("application-graphql");
                Request::new("POST", path).header("Content-Type", "application/graphql").body(&doc)
            }
            _ => Request::new("POST", path)
                .header("Content-Type", "application/json")
                .body(&format!("{{\"operationName\":null,\"variables\":{{}},\"query\":{}}}", json_string(&doc))),
        };
        let request = request.header("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0");
        Variant { family: "graphql", mutation: join(&names), payload: doc, carrier: Carrier::Request(request) }
    }
}
