//! GraphQL abuse: not GraphQL itself (a benign query, even one naming `__schema`, is an
//! application's normal traffic) but the document shapes that exist only to map or exhaust a
//! server: the full-schema introspection query, alias overloading (one field fetched under
//! many aliases, to batch brute force or amplify cost), many operations in one document,
//! selection sets nested past any real schema, directive overloading, and fragments that
//! spread each other in a cycle.
//!
//! One linear pass of a small tokenizer. The text must tokenize as GraphQL: any character
//! that GraphQL has no use for (`;`, `<`, `.` outside `...`, ...) means it is not a GraphQL
//! document and the check stops, so JavaScript, JSON and prose never reach the counters.
//! Type-system definitions (SDL: `type Query { a: Int }`) are skipped by the alias counter,
//! where `name: Type` is not an alias.

use crate::{Check, Finding, Input, Trigger};

pub struct GraphqlCheck;

/// Deeper than any real schema's selections (the spec's examples stop at 5).
const MAX_DEPTH: usize = 12;
/// More aliases of one field than any real document has.
const MAX_ALIASES: u32 = 10;
/// More operations than one real document holds.
const MAX_OPERATIONS: u32 = 10;
/// More directives on one selection than real documents use (`@include @skip` is two).
const MAX_DIRECTIVE_RUN: u32 = 8;
/// Bounds on the fragment graph kept for the cycle check.
const MAX_FRAGMENTS: usize = 64;
const MAX_SPREADS: usize = 256;
/// Distinct aliased field names tracked.
const MAX_ALIASED_FIELDS: usize = 64;

impl Check for GraphqlCheck {
    fn trigger(&self) -> Trigger {
        // A selection set.
        Trigger::any_of(b"{")
    }

    fn detector(&self) -> &'static str {
        "graphql"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        if !input.bytes.all(b"{}") || input.text.len() > 256 * 1024 {
            return None;
        }
        let facts = scan(input.text.as_bytes())?;
        let found = |reason, level| Some(Finding { reason, score: 0.95, level });
        let best = if facts.full_introspection {
            found("graphql:full-introspection", 1)
        } else if facts.max_aliases > MAX_ALIASES {
            found("graphql:alias-overloading", 1)
        } else if facts.operations > MAX_OPERATIONS {
            found("graphql:batched-operations", 1)
        } else if facts.max_depth > MAX_DEPTH {
            found("graphql:deep-nesting", 1)
        } else if facts.max_directive_run > MAX_DIRECTIVE_RUN {
            found("graphql:directive-overloading", 1)
        } else if facts.circular_fragments {
            found("graphql:circular-fragments", 1)
        } else if facts.schema_probe {
            found("graphql:schema-probe", 2)
        } else {
            None
        };
        best.filter(|f| f.level <= input.sensitivity)
    }
}

/// Operations in `text` when it is a GraphQL document (None when it is not one). A request
/// can batch many documents (a JSON array of `{"query": ...}` objects, each one operation):
/// the request-level check judges their sum against the same bound as one document's.
pub fn operation_count(text: &str) -> Option<u32> {
    if !text.as_bytes().contains(&b'{') || text.len() > 256 * 1024 {
        return None;
    }
    scan(text.as_bytes()).map(|facts| facts.operations)
}

/// The bound [`operation_count`]s of one request are judged against.
pub const MAX_BATCHED_OPERATIONS: u32 = MAX_OPERATIONS;

#[derive(Default)]
struct Facts {
    full_introspection: bool,
    schema_probe: bool,
    max_aliases: u32,
    operations: u32,
    max_depth: usize,
    max_directive_run: u32,
    circular_fragments: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    Name(&'a [u8]),
    Punct(u8),
    Spread,
    /// Strings, numbers and variables: values, never names.
    Value,
}

/// Next token from `i`, skipping whitespace, commas and comments; None at the end. Err when
/// a byte GraphQL does not use appears (the text is not GraphQL).
fn next_token<'a>(b: &'a [u8], i: &mut usize) -> Result<Option<Tok<'a>>, ()> {
    loop {
        while *i < b.len() && (b[*i].is_ascii_whitespace() || b[*i] == b',' || b[*i] == 0xef || b[*i] == 0xbb || b[*i] == 0xbf) {
            *i += 1;
        }
        if *i < b.len() && b[*i] == b'#' {
            while *i < b.len() && b[*i] != b'\n' {
                *i += 1;
            }
            continue;
        }
        break;
    }
    let Some(&c) = b.get(*i) else { return Ok(None) };
    let start = *i;
    *i += 1;
    Ok(Some(match c {
        b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
            while *i < b.len() && (b[*i].is_ascii_alphanumeric() || b[*i] == b'_') {
                *i += 1;
            }
            Tok::Name(&b[start..*i])
        }
        b'-' | b'0'..=b'9' => {
            while *i < b.len() && (b[*i].is_ascii_alphanumeric() || matches!(b[*i], b'.' | b'+' | b'-')) {
                *i += 1;
            }
            Tok::Value
        }
        b'$' => Tok::Value,
        b'"' => {
            if b.get(*i..*i + 2) == Some(b"\"\"") {
                // Block string: up to the next unescaped `"""`.
                *i += 2;
                while *i < b.len() && b.get(*i..*i + 3) != Some(b"\"\"\"") {
                    *i += if b[*i] == b'\\' { 2 } else { 1 };
                }
                *i = (*i + 3).min(b.len());
            } else {
                while *i < b.len() && b[*i] != b'"' && b[*i] != b'\n' {
                    *i += if b[*i] == b'\\' { 2 } else { 1 };
                }
                *i = (*i + 1).min(b.len());
            }
            Tok::Value
        }
        b'.' if b.get(*i..*i + 2) == Some(b"..") => {
            *i += 2;
            Tok::Spread
        }
        b'{' | b'}' | b'(' | b')' | b'[' | b']' | b':' | b'@' | b'!' | b'=' | b'|' | b'&' => Tok::Punct(c),
        _ => return Err(()),
    }))
}

fn is_type_system_keyword(name: &[u8]) -> bool {
    matches!(name, b"type" | b"interface" | b"input" | b"enum" | b"schema" | b"scalar" | b"union" | b"directive" | b"extend")
}

/// The document's facts, or None when it does not tokenize as GraphQL.
fn scan(b: &[u8]) -> Option<Facts> {
    let mut facts = Facts::default();
    let mut i = 0;
    let mut depth = 0usize;
    let mut parens = 0usize;
    // Tokens of the current top-level definition.
    let mut sdl = false;
    let mut top_tokens = 0u32;
    // Look-back: the last three tokens (bounded, so linear).
    let mut prev: [Option<Tok>; 3] = [None, None, None];
    let mut aliased: Vec<(&[u8], u32)> = Vec::new();
    let mut directive_run = 0u32;
    // `__schema`'s selection set: its depth once opened; whether `types { ... }` was selected.
    let mut schema_pending = false;
    let mut schema_depth: Option<usize> = None;
    let mut schema_types = false;
    let mut introspects_fields = false;
    // Fragments: (name, spreads) and the one being read (with its body's depth).
    let mut fragments: Vec<(&[u8], Vec<&[u8]>)> = Vec::new();
    let mut spreads_total = 0usize;
    let mut in_fragment: Option<usize> = None;
    let mut fragment_pending = false;
    let mut tokens = 0u32;

    while let Some(tok) = next_token(b, &mut i).ok()? {
        tokens += 1;
        if depth == 0 && parens == 0 {
            // A new top-level definition begins at a keyword or a bare `{`.
            match tok {
                Tok::Name(n) if top_tokens == 0 || matches!(prev[0], Some(Tok::Punct(b'}'))) => {
                    top_tokens = 0;
                    sdl = is_type_system_keyword(n);
                    if matches!(n, b"query" | b"mutation" | b"subscription") {
                        facts.operations += 1;
                    } else if n == b"fragment" {
                        fragment_pending = true;
                    } else if !sdl {
                        return None; // not a GraphQL definition
                    }
                }
                Tok::Punct(b'{') if top_tokens == 0 || matches!(prev[0], Some(Tok::Punct(b'}'))) => {
                    sdl = false;
                    facts.operations += 1;
                }
                // Anything else may only follow a definition's keyword.
                _ if top_tokens == 0 || matches!(prev[0], Some(Tok::Punct(b'}'))) => return None,
                _ => {}
            }
            top_tokens += 1;
        }
        // Values and list brackets only occur in arguments and variable definitions (or in
        // SDL descriptions and types): in a selection set they mean JSON, not GraphQL.
        if !sdl && parens == 0 && depth > 0 && matches!(tok, Tok::Value | Tok::Punct(b'[' | b']')) {
            return None;
        }
        match tok {
            Tok::Punct(b'{') => {
                depth += 1;
                facts.max_depth = facts.max_depth.max(depth);
                if schema_pending {
                    schema_depth = Some(depth);
                    schema_pending = false;
                }
                if fragment_pending && in_fragment.is_none() {
                    in_fragment = Some(depth);
                    fragment_pending = false;
                }
                if let (Some(sd), Some(Tok::Name(b"types"))) = (schema_depth, prev[0]) {
                    if depth == sd + 1 {
                        schema_types = true;
                    }
                }
                if matches!(prev[0], Some(Tok::Name(b"fields" | b"inputFields" | b"enumValues" | b"possibleTypes"))) {
                    introspects_fields = true;
                }
            }
            Tok::Punct(b'}') => {
                if schema_depth == Some(depth) {
                    schema_depth = None;
                }
                if in_fragment == Some(depth) {
                    in_fragment = None;
                }
                depth = depth.checked_sub(1)?;
            }
            Tok::Punct(b'(') => {
                parens += 1;
                if matches!(prev[0], Some(Tok::Name(b"fields"))) {
                    introspects_fields = true; // fields(includeDeprecated: true)
                }
            }
            Tok::Punct(b')') => parens = parens.checked_sub(1)?,
            Tok::Name(n) => {
                if n == b"__schema" && !sdl {
                    facts.schema_probe = true;
                    if schema_depth.is_none() {
                        schema_pending = true;
                    }
                } else if n == b"__type" && !sdl {
                    facts.schema_probe = true;
                }
                // Alias: `alias : field` inside a selection set (not in arguments, not SDL).
                if !sdl && parens == 0 && depth > 0 {
                    if let (Some(Tok::Punct(b':')), Some(Tok::Name(_))) = (prev[0], prev[1]) {
                        match aliased.iter().position(|(f, _)| *f == n) {
                            Some(k) => {
                                aliased[k].1 += 1;
                                facts.max_aliases = facts.max_aliases.max(aliased[k].1);
                            }
                            None if aliased.len() < MAX_ALIASED_FIELDS => aliased.push((n, 1)),
                            None => {}
                        }
                    }
                }
                // Directive runs: `@a @b(x: 1) @c` on one selection.
                if matches!(prev[0], Some(Tok::Punct(b'@'))) {
                    directive_run += 1;
                    facts.max_directive_run = facts.max_directive_run.max(directive_run);
                }
                // Fragment definitions and named spreads (`... on T` is an inline fragment).
                if matches!(prev[0], Some(Tok::Name(b"fragment"))) && fragment_pending && depth == 0 {
                    if fragments.len() < MAX_FRAGMENTS {
                        fragments.push((n, Vec::new()));
                    }
                } else if matches!(prev[0], Some(Tok::Spread)) && n != b"on" && spreads_total < MAX_SPREADS {
                    if let (Some(_), Some(last)) = (in_fragment, fragments.last_mut()) {
                        last.1.push(n);
                        spreads_total += 1;
                    }
                }
            }
            _ => {}
        }
        // A directive run continues across its arguments and the next `@`; anything else
        // at parens 0 ends it.
        let continues_run = parens > 0
            || matches!(tok, Tok::Punct(b'@') | Tok::Punct(b')'))
            || matches!((tok, prev[0]), (Tok::Name(_), Some(Tok::Punct(b'@'))));
        if !continues_run {
            directive_run = 0;
        }
        prev = [Some(tok), prev[0], prev[1]];
    }
    if depth != 0 || tokens < 3 {
        return None;
    }
    facts.full_introspection = schema_types && introspects_fields;
    facts.circular_fragments = has_cycle(&fragments);
    Some(facts)
}

/// Whether the fragment-spread graph has a cycle (a fragment reaching itself). At most
/// `MAX_FRAGMENTS` nodes, so the quadratic walk is bounded.
fn has_cycle(fragments: &[(&[u8], Vec<&[u8]>)]) -> bool {
    let index = |name: &[u8]| fragments.iter().position(|(n, _)| *n == name);
    // Iterative DFS with colours: 0 new, 1 on the stack, 2 done.
    let mut colour = vec![0u8; fragments.len()];
    for start in 0..fragments.len() {
        if colour[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        colour[start] = 1;
        while let Some(top) = stack.len().checked_sub(1) {
            let (node, next) = stack[top];
            if let Some(&spread) = fragments[node].1.get(next) {
                stack[top].1 += 1;
                if let Some(to) = index(spread) {
                    match colour[to] {
                        1 => return true,
                        0 => {
                            colour[to] = 1;
                            stack.push((to, 0));
                        }
                        _ => {}
                    }
                }
            } else {
                colour[node] = 2;
                stack.pop();
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str, level: u8) -> Option<&'static str> {
        let mut input = Input::new(text);
        input.sensitivity = level;
        GraphqlCheck.inspect(&input).map(|f| f.reason)
    }

    #[test]
    fn abuse_shapes() {
        let full = "query IntrospectionQuery { __schema { queryType { name } types { ...FullType } } } fragment FullType on __Type { kind name fields(includeDeprecated: true) { name } }";
        assert_eq!(reason(full, 1), Some("graphql:full-introspection"));
        let aliases: String = (0..12).map(|k| format!("a{k}: login(u: \"x\", p: \"{k}\") {{ token }} ")).collect();
        assert_eq!(reason(&format!("mutation {{ {aliases} }}"), 1), Some("graphql:alias-overloading"));
        let deep = format!("{{ {} id {} }}", "a { ".repeat(14), "} ".repeat(14));
        assert_eq!(reason(&deep, 1), Some("graphql:deep-nesting"));
        let dirs = format!("query {{ me {} {{ id }} }}", "@include(if: true) ".repeat(12));
        assert_eq!(reason(&dirs, 1), Some("graphql:directive-overloading"));
        let cyc = "query { ...A } fragment A on T { ...B } fragment B on T { ...A }";
        assert_eq!(reason(cyc, 1), Some("graphql:circular-fragments"));
        let ops: String = (0..12).map(|k| format!("query q{k} {{ me {{ id }} }} ")).collect();
        assert_eq!(reason(&ops, 1), Some("graphql:batched-operations"));
    }

    #[test]
    fn benign_documents() {
        assert_eq!(reason("{ __schema { types { name } } }", 1), None);
        assert_eq!(reason("{ __schema { types { name } } }", 2), Some("graphql:schema-probe"));
        assert_eq!(reason("{ __type(name: \"User\") { name fields { name type { name } } } }", 1), None);
        assert_eq!(reason("type Query { a: String b: String c: String d: String e: String f: String g: String h: String i: String j: String k: String l: String }", 1), None);
        assert_eq!(reason("function f() { if (a) { return {x: 1}; } }", 4), None);
        assert_eq!(reason("{\"query\": \"{ me { id } }\"}", 4), None);
        assert_eq!(reason("query { hero { name friends { name } } }", 4), None);
    }
}
