//! Scanner marker headers: headers that only attack tools send, whatever their value
//! (`X-Scanner: Netsparker`, Acunetix's `Acunetix-Product` / `Acunetix-Aspect*`, WebInspect's
//! `X-WIPP` / `X-Scan-Memo`). The `scanner` rules read values and never see a header's name,
//! and these values (`Netsparker`, `enabled`) are too short to tell anything by themselves.
//! Tool User-Agents and out-of-band domains are the rules' job (`scoring/rules/scanner.toml`).

use crate::{Check, Finding, Input, Place, Trigger};

pub struct ScannerCheck;

fn is_marker_header(name: &str) -> bool {
    name.starts_with("acunetix-") || matches!(name, "x-scanner" | "x-wipp" | "x-scan-memo" | "x-requestmanager-memo" | "x-request-memo")
}

impl Check for ScannerCheck {
    fn trigger(&self) -> Trigger {
        // Marker headers only.
        Trigger::At(Place::Header)
    }

    fn detector(&self) -> &'static str {
        "scanner"
    }

    fn inspect(&self, input: &Input<'_>) -> Option<Finding> {
        (input.place == Place::Header && is_marker_header(input.name)).then_some(Finding {
            reason: "scanner:marker-header",
            score: 0.95,
            level: 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_headers_only() {
        let mut input = Input::new("Netsparker");
        input.place = Place::Header;
        input.name = "x-scanner";
        assert!(ScannerCheck.inspect(&input).is_some());
        input.name = "x-requested-with";
        assert!(ScannerCheck.inspect(&input).is_none());
        input.place = Place::QueryValue;
        input.name = "x-scanner";
        assert!(ScannerCheck.inspect(&input).is_none());
    }
}
