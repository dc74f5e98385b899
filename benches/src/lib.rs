//! Shared bench inputs: realistic benign bodies and attack requests; the load binaries' flags.

pub mod load_args;

/// A realistic ~1 KB urlencoded checkout form, as a request_text.
pub fn form_1k() -> String {
    let mut body = String::from(
        "first_name=Siobhan&last_name=O%27Brien&email=siobhan.obrien%40example.ie&phone=%2B353+1+555+0192\
         &address1=14+Harbour+View&address2=Apt+3&city=Galway&county=Galway&postcode=H91+X2Y3&country=IE\
         &delivery_notes=Please+leave+the+parcel+with+the+neighbour+at+no.+12+if+nobody+is+home%2C+thanks%21\
         &gift_message=Happy+birthday+Mam+-+love+from+all+of+us&newsletter=on&terms=accepted&coupon=SPRING-10\
         &cart%5B0%5D%5Bsku%5D=TSHIRT-RED-M&cart%5B0%5D%5Bqty%5D=2&cart%5B1%5D%5Bsku%5D=MUG-BLUE&cart%5B1%5D%5Bqty%5D=1",
    );
    while body.len() < 1024 {
        body.push_str("&comment=Looking+forward+to+it%2C+the+last+order+was+great");
    }
    format!("POST /checkout/submit\n{}", &body[..1024])
}

/// A realistic ~1 KB JSON API body with prose, as a request_text.
pub fn json_1k() -> String {
    let mut body = String::from(
        r#"{"order":{"id":"A-10293","customer":{"name":"Siobhán O'Brien","email":"siobhan@example.ie"},"items":[{"sku":"TSHIRT-RED-M","qty":2,"price":19.99},{"sku":"MUG-BLUE","qty":1,"price":8.5}],"notes":"Please select a time slot from the drop-down menu; we are 50% flexible -- mornings are best."},"review":{"rating":5,"title":"Great fit","body":"I ordered the red one in medium and it fits well. Shipping took three days, which is fine. The mug is nice too, although the blue is darker than on the site. Would order again and recommend to friends."},"#,
    );
    while body.len() < 1000 {
        body.push_str(r#""tags":["cotton","gift","summer"],"#);
    }
    body.push_str(r#""v":1}"#);
    format!("POST /api/orders\n{body}")
}

/// Attack requests, one per common class.
pub const ATTACKS: &[(&str, &str)] = &[
    ("xss_encoded", "GET /search?q=%253Cscript%253Ealert(document.cookie)%253C%252Fscript%253E\n"),
    ("sqli_union", "GET /item?id=1%27%20UNION%20SELECT%20username%2Cpassword%20FROM%20users--%20\n"),
    ("traversal", "GET /download?file=..%2F..%2F..%2F..%2Fetc%2Fpasswd\n"),
    ("cmdi", "POST /ping\nhost=127.0.0.1%3Bcat+%2Fetc%2Fpasswd"),
    ("xxe", "POST /upload\n<?xml version=\"1.0\"?><!DOCTYPE foo [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><foo>&xxe;</foo>"),
];
