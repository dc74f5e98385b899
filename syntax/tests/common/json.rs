//! A minimal JSON reader for the tests (the syntax crate has no dependencies): enough to read
//! the data pool's JSON Lines rows.

#[derive(Debug, Clone)]
pub enum Json {
    Null,
    Bool,
    Num,
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(kv) => kv.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Json::Str(s)) => Some(s),
            _ => None,
        }
    }
    /// Every string leaf.
    pub fn strings<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Json::Str(s) => out.push(s),
            Json::Arr(a) => a.iter().for_each(|v| v.strings(out)),
            Json::Obj(kv) => kv.iter().for_each(|(_, v)| v.strings(out)),
            _ => {}
        }
    }
}

pub fn parse(s: &str) -> Option<Json> {
    let mut p = Parser { s: s.as_bytes(), i: 0 };
    p.value()
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn value(&mut self) -> Option<Json> {
        self.ws();
        match *self.s.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut kv = Vec::new();
                loop {
                    self.ws();
                    if self.s.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        return Some(Json::Obj(kv));
                    }
                    let k = match self.value()? {
                        Json::Str(k) => k,
                        _ => return None,
                    };
                    self.ws();
                    self.i += 1; // ':'
                    let v = self.value()?;
                    kv.push((k, v));
                    self.ws();
                    if self.s.get(self.i) == Some(&b',') {
                        self.i += 1;
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut a = Vec::new();
                loop {
                    self.ws();
                    if self.s.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Some(Json::Arr(a));
                    }
                    a.push(self.value()?);
                    self.ws();
                    if self.s.get(self.i) == Some(&b',') {
                        self.i += 1;
                    }
                }
            }
            b'"' => {
                self.i += 1;
                let mut out: Vec<u16> = Vec::new();
                let mut bytes: Vec<u8> = Vec::new();
                loop {
                    let c = *self.s.get(self.i)?;
                    self.i += 1;
                    match c {
                        b'"' => break,
                        b'\\' => {
                            let e = *self.s.get(self.i)?;
                            self.i += 1;
                            let ch = match e {
                                b'n' => '\n',
                                b't' => '\t',
                                b'r' => '\r',
                                b'b' => '\u{8}',
                                b'f' => '\u{c}',
                                b'u' => {
                                    let h = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
                                    self.i += 4;
                                    out.push(u16::from_str_radix(h, 16).ok()?);
                                    continue;
                                }
                                other => other as char,
                            };
                            flush(&mut out, &mut bytes);
                            let mut buf = [0u8; 4];
                            bytes.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => {
                            flush(&mut out, &mut bytes);
                            bytes.push(c);
                        }
                    }
                }
                flush(&mut out, &mut bytes);
                Some(Json::Str(String::from_utf8_lossy(&bytes).into_owned()))
            }
            b't' => {
                self.i += 4;
                Some(Json::Bool)
            }
            b'f' => {
                self.i += 5;
                Some(Json::Bool)
            }
            b'n' => {
                self.i += 4;
                Some(Json::Null)
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && matches!(self.s[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    self.i += 1;
                }
                std::str::from_utf8(&self.s[start..self.i]).ok()?.parse().ok().map(|_: f64| Json::Num)
            }
        }
    }
}

fn flush(units: &mut Vec<u16>, bytes: &mut Vec<u8>) {
    if !units.is_empty() {
        bytes.extend_from_slice(String::from_utf16_lossy(units).as_bytes());
        units.clear();
    }
}

/// Percent-decoding (`+` as space when `plus`), lossy.
pub fn percent_decode(s: &str, plus: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The engine's decoded view, roughly: percent layers undone (twice), whitespace collapsed.
pub fn decoded_view(s: &str) -> String {
    let once = percent_decode(s, false);
    let twice = percent_decode(&once, false);
    let mut out = String::with_capacity(twice.len());
    let mut space = false;
    for c in twice.chars() {
        if c.is_whitespace() {
            if !space {
                out.push(' ');
            }
            space = true;
        } else {
            out.push(c);
            space = false;
        }
    }
    out
}
