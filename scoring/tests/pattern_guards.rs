//! The byte guards of the pattern stage (`patterns/guard.rs`) are derived from each rule's
//! regex; a wrong derivation would silently skip a rule. This checks the derivation against
//! Hyperscan itself: for every rule and every generated attack (each evasion family, plain
//! and decoded), a text that holds none of the rule's guard bytes must not match the rule's
//! own, unguarded database. Texts are also stripped of the guard bytes, so each rule is tried
//! on near-misses made from real attacks rather than only on texts it never matches anyway.

use hyperscan::prelude::*;
use scoring::patterns::guard::required_bytes;
use scoring::patterns::rules::load_rules;
use syntax::ByteSet;

mod common;

fn texts() -> Vec<String> {
    common::attack_texts(7, 60)
}

#[test]
fn a_text_without_guard_bytes_never_matches_the_rule() {
    let texts = texts();
    let mut guarded = 0;
    let mut tried = 0;
    for rule in load_rules(None).expect("rules load") {
        let Some(guard) = required_bytes(&rule.pattern, rule.case_sensitive) else { continue };
        guarded += 1;
        let flags = if rule.case_sensitive { CompileFlags::empty() } else { CompileFlags::CASELESS };
        let db: BlockDatabase = Pattern { expression: rule.pattern.clone(), flags, id: Some(0), ext: Default::default(), som: None }
            .build()
            .expect("rule compiles");
        let scratch = db.alloc_scratch().expect("scratch");
        for text in &texts {
            // The text with every guard byte removed: if the rule matched it, the guard lied.
            let stripped: Vec<u8> = text.bytes().filter(|b| !guard.contains(*b)).collect();
            for candidate in [text.as_bytes(), &stripped[..]] {
                if ByteSet::from_bytes(candidate).intersects(&guard) {
                    continue;
                }
                tried += 1;
                let mut matched = false;
                let _ = db.scan(candidate, &scratch, |_, _, _, _| {
                    matched = true;
                    Matching::Terminate
                });
                assert!(!matched, "rule {} matched {:?} without any of its guard bytes", rule.reason, String::from_utf8_lossy(candidate));
            }
        }
    }
    assert!(guarded > 100, "most rules carry a guard ({guarded})");
    assert!(tried > 10_000, "enough guard-free texts were tried ({tried})");
}
