//! What each scenario sends: path, method and body (as a wrk Lua script), and which listener
//! (plain or TLS) it goes to. Bodies are ordinary customer data, so both proxies pass them.

use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    GetRoot,
    GetQuery,
    #[value(name = "post-form-1k")]
    PostForm1k,
    #[value(name = "post-json-1k")]
    PostJson1k,
    PostChat,
    PostChatUnique,
    TlsGet,
}

pub const ALL: [Scenario; 7] = [
    Scenario::GetRoot,
    Scenario::GetQuery,
    Scenario::PostForm1k,
    Scenario::PostJson1k,
    Scenario::PostChat,
    Scenario::PostChatUnique,
    Scenario::TlsGet,
];

const CHAT_TEXT: &str = "Hi! I am planning a weekend hiking trip in the mountains with two friends. Could you suggest a packing list for cool weather, a few easy trails with nice views, and some tips for cooking simple meals at the campsite? We have a small gas stove and one cooler.";

/// ~1 KB of what a checkout form posts.
const FORM_1K: &str = "first_name=Maria&last_name=Gonzalez&email=maria.gonzalez%40example.com&phone=%2B1-415-555-0134&company=Acme+Outdoor+Supply&address_line1=1234+Market+Street&address_line2=Suite+500&city=San+Francisco&state=CA&postal_code=94103&country=US&shipping_method=ground&gift_wrap=no&newsletter=yes&sku_1=TENT-2P-GRN&qty_1=1&sku_2=STOVE-GAS-MINI&qty_2=1&sku_3=MUG-TI-450&qty_3=2&coupon=WINTER15&notes=Please+leave+the+parcel+with+the+front+desk+if+nobody+answers.+The+building+closes+at+6pm+on+weekdays+and+is+closed+on+Sundays.&delivery_window=morning&preferred_contact=email&terms_accepted=true&source=web&utm_campaign=winter_sale&utm_medium=email&utm_source=newsletter&locale=en-US&currency=USD&total=249.85&tax=21.86&shipping=9.99&payment_method=card&card_brand=visa&card_last4=4242&billing_same_as_shipping=true&save_address=true&referral_code=&account_id=58213&session_ref=7f3c2a9e1b&csrf_token=5e1f0c2d9a8b7c6d5e4f3a2b1c0d9e8f";

/// ~1 KB of an order as a JSON API receives it.
const JSON_1K: &str = r#"{"order":{"id":"ord_58213_7f3c2a","customer":{"first_name":"Maria","last_name":"Gonzalez","email":"maria.gonzalez@example.com","phone":"+1-415-555-0134"},"shipping":{"line1":"1234 Market Street","line2":"Suite 500","city":"San Francisco","state":"CA","postal_code":"94103","country":"US","method":"ground","window":"morning"},"items":[{"sku":"TENT-2P-GRN","name":"Two-person tent, green","qty":1,"price":179.0},{"sku":"STOVE-GAS-MINI","name":"Mini gas stove","qty":1,"price":39.0},{"sku":"MUG-TI-450","name":"Titanium mug 450 ml","qty":2,"price":15.0}],"coupon":"WINTER15","notes":"Please leave the parcel with the front desk if nobody answers.","totals":{"subtotal":248.0,"tax":21.86,"shipping":9.99,"discount":-29.99,"total":249.86,"currency":"USD"},"payment":{"method":"card","brand":"visa","last4":"4242"},"flags":{"gift_wrap":false,"newsletter":true,"save_address":true},"tracking":{"campaign":"winter_sale","medium":"email","source":"newsletter","locale":"en-US"}}}"#;

fn chat_body() -> String {
    format!(r#"{{"messages":[{{"role":"user","content":"{CHAT_TEXT}"}}]}}"#)
}

impl Scenario {
    pub fn label(self) -> String {
        match self {
            Scenario::GetRoot => "GET /".into(),
            Scenario::GetQuery => "GET /search?q=...".into(),
            Scenario::PostForm1k => format!("POST form ({}B)", FORM_1K.len()),
            Scenario::PostJson1k => format!("POST JSON ({}B)", JSON_1K.len()),
            Scenario::PostChat => format!("POST chat ({}B), same", chat_body().len()),
            Scenario::PostChatUnique => "POST chat, each new".into(),
            Scenario::TlsGet => "TLS GET / (keep-alive)".into(),
        }
    }

    pub fn path(self) -> &'static str {
        match self {
            Scenario::GetQuery => "/search?q=blue+running+shoes&page=2",
            _ => "/",
        }
    }

    pub fn tls(self) -> bool {
        self == Scenario::TlsGet
    }

    /// Writes the wrk script this scenario needs into `dir`; None for a plain GET.
    pub fn script(self, dir: &Path) -> std::io::Result<Option<PathBuf>> {
        let text = match self {
            Scenario::PostForm1k => post("application/x-www-form-urlencoded", FORM_1K),
            Scenario::PostJson1k => post("application/json", JSON_1K),
            Scenario::PostChat => post("application/json", &chat_body()),
            // A new text on every request: what a chat endpoint costs when nothing is cached
            // (Rampart remembers recent model scores by text; a resent conversation hits that).
            Scenario::PostChatUnique => format!(
                "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nlocal threads = 0\nfunction setup(thread)\n  threads = threads + 1\n  thread:set(\"id\", threads)\nend\nlocal n = 0\nfunction request()\n  n = n + 1\n  local body = string.format('{{\"messages\":[{{\"role\":\"user\",\"content\":\"{CHAT_TEXT} (trip %d-%d)\"}}]}}', id, n)\n  return wrk.format(nil, nil, nil, body)\nend\n"
            ),
            Scenario::GetRoot | Scenario::GetQuery | Scenario::TlsGet => return Ok(None),
        };
        let path = dir.join(format!("{self:?}.lua"));
        std::fs::write(&path, text)?;
        Ok(Some(path))
    }
}

fn post(content_type: &str, body: &str) -> String {
    format!("wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"{content_type}\"\nwrk.body = [[{body}]]\n")
}
